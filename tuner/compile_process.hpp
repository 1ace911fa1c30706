// lntune::tune — NVRTC compilations in worker processes.
//
// Why: on the GPU machines here, NVRTC runs 5-7x slower in the threads of one
// process than one compilation per process (bench/results/h200x2_2026-11-24,
// call 2: 0.49 s a compilation on 14 threads of one process, 0.066 s on 14
// processes, the same 60 instances). The compile pool therefore hands each
// compilation to a process of its own: `lntune _compile-worker`, the CLI
// binary itself, so the embedded headers and NVRTC are the very same and
// the CUBIN is byte for byte the one an in-process compile gives.
//
// One CompileProcess is one child, owned by one pool thread; its requests
// and replies go over a socket pair (fd 3 in the child). The child exits on
// end of file, so a tuner that dies, however it dies, leaves no worker
// behind. A child that dies or garbles a reply is an Error here; the pool
// then compiles in-process (CompilePool::run).
#pragma once

#include <string>
#include <sys/types.h>

#include "runtime/nvrtc.hpp"

namespace lntune::tune {

// The hidden subcommand the CLI serves (`lntune _compile-worker --fd N`).
inline constexpr const char* kCompileWorkerCommand = "_compile-worker";

// A worker that cannot be started, died, or answered nonsense: the
// compilation did not happen (unlike rt::CompileError, NVRTC's verdict).
class CompileWorkerError : public Error {
 public:
  using Error::Error;
};

class CompileProcess {
 public:
  // Starts `exe _compile-worker --fd 3` at nice `nice`. Throws
  // CompileWorkerError (naming exe and the reason) when it cannot start.
  explicit CompileProcess(const std::string& exe, int nice = 19);
  ~CompileProcess();  // closes the socket and reaps the child
  CompileProcess(const CompileProcess&) = delete;
  CompileProcess& operator=(const CompileProcess&) = delete;

  // rt::compile(src, arch, cubin), in the child. Throws what rt::compile
  // would: rt::CompileError (NVRTC's message, log and options) or
  // lntune::Error (its message); and CompileWorkerError when the child is
  // gone or its reply is malformed (the child is then unusable: alive() is
  // false).
  rt::CompiledKernel compile(const gen::KernelSource& src, const std::string& arch);
  bool alive() const { return fd_ >= 0; }
  pid_t pid() const { return pid_; }

 private:
  void shut();
  std::string exe_;
  int fd_ = -1;
  pid_t pid_ = -1;
};

// The child's side: answers requests on `fd` until end of file. Returns the
// process exit code: 0 at a clean end of file, 2 for a malformed request or
// a broken socket (what went wrong is on stderr).
int serve_compile_requests(int fd);

// The running executable's path (/proc/self/exe), or "" where unknown.
std::string self_executable();

}  // namespace lntune::tune
