#include "tuner/compile_process.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace lntune::tune {
namespace {

// Both ends are the same binary, so integers travel in native byte order.
constexpr std::uint32_t kMagic = 0x4c4e5443;  // "LNTC"
constexpr std::uint32_t kVersion = 1;
constexpr std::uint64_t kMaxString = 256ull << 20;  // no source or CUBIN comes near
constexpr int kChildFd = 3;
enum Status : std::uint32_t { kOk = 0, kCompileError = 1, kOtherError = 2 };

// Raised for a socket that broke or a message that makes no sense.
struct Broken {
  std::string what;
};

void write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Broken{std::string("write: ") + std::strerror(errno)};
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// false: end of file before the first byte (when allowed); else all n bytes.
bool read_all(int fd, void* data, std::size_t n, bool eof_ok = false) {
  char* p = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Broken{std::string("read: ") + std::strerror(errno)};
    if (r == 0) {
      if (got == 0 && eof_ok) return false;
      throw Broken{"end of file in the middle of a message"};
    }
    got += static_cast<std::size_t>(r);
  }
  return true;
}

struct Writer {
  std::vector<char> buf;
  void u32(std::uint32_t v) { bytes(&v, sizeof v); }
  void str(const std::string& s) { blob(s.data(), s.size()); }
  void blob(const char* p, std::size_t n) {
    const std::uint64_t len = n;
    bytes(&len, sizeof len);
    bytes(p, n);
  }
  void bytes(const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    buf.insert(buf.end(), c, c + n);
  }
  void send(int fd) const { write_all(fd, buf.data(), buf.size()); }
};

struct Reader {
  int fd;
  std::uint32_t u32() {
    std::uint32_t v = 0;
    read_all(fd, &v, sizeof v);
    return v;
  }
  // A length-prefixed run of bytes, into a std::string or std::vector<char>.
  template <class Bytes = std::string>
  Bytes str() {
    std::uint64_t n = 0;
    read_all(fd, &n, sizeof n);
    if (n > kMaxString) throw Broken{"a string of " + std::to_string(n) + " bytes"};
    Bytes s(static_cast<std::size_t>(n), '\0');
    if (n > 0) read_all(fd, s.data(), s.size());
    return s;
  }
  // The header of a message; false at a clean end of file.
  bool header(bool eof_ok) {
    std::uint32_t h[2] = {0, 0};
    if (!read_all(fd, h, sizeof h, eof_ok)) return false;
    if (h[0] != kMagic) throw Broken{"not a compile message (bad magic)"};
    if (h[1] != kVersion)
      throw Broken{"protocol version " + std::to_string(h[1]) + ", expected " + std::to_string(kVersion)};
    return true;
  }
};

}  // namespace

std::string self_executable() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  return std::string(buf.data(), static_cast<std::size_t>(n));
}

CompileProcess::CompileProcess(const std::string& exe, int nice) : exe_(exe) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw CompileWorkerError("lntune: compile worker " + exe + ": socketpair: " + std::strerror(errno));
  if (sv[1] == kChildFd) {
    // dup2(3, 3) would keep close-on-exec set (older C libraries): move it.
    const int moved = ::fcntl(sv[1], F_DUPFD_CLOEXEC, kChildFd + 1);
    ::close(sv[1]);
    if (moved < 0) {
      ::close(sv[0]);
      throw CompileWorkerError("lntune: compile worker " + exe + ": fcntl: " + std::strerror(errno));
    }
    sv[1] = moved;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  // dup2 clears close-on-exec on the child's fd 3; every other socket of
  // this process (other workers') is close-on-exec.
  posix_spawn_file_actions_adddup2(&fa, sv[1], kChildFd);
  const std::string fd_arg = std::to_string(kChildFd), nice_arg = std::to_string(nice);
  std::vector<char*> argv = {const_cast<char*>(exe.c_str()), const_cast<char*>(kCompileWorkerCommand),
                             const_cast<char*>("--fd"), const_cast<char*>(fd_arg.c_str()),
                             const_cast<char*>("--nice"), const_cast<char*>(nice_arg.c_str()), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    throw CompileWorkerError("lntune: cannot start the compile worker " + exe + ": " + std::strerror(rc));
  }
  fd_ = sv[0];
  pid_ = pid;
}

CompileProcess::~CompileProcess() { shut(); }

void CompileProcess::shut() {
  if (fd_ >= 0) ::close(fd_);  // the child sees end of file and exits
  fd_ = -1;
  if (pid_ > 0) {
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

rt::CompiledKernel CompileProcess::compile(const gen::KernelSource& src, const std::string& arch) {
  if (fd_ < 0) throw CompileWorkerError("lntune: compile worker " + exe_ + " is not running");
  rt::CompiledKernel out;
  try {
    Writer w;
    w.u32(kMagic);
    w.u32(kVersion);
    w.str(arch);
    w.str(src.kernel_name);
    w.str(src.source);
    w.send(fd_);
    Reader r{fd_};
    r.header(false);
    const std::uint32_t status = r.u32();
    if (status == kOk) {
      out.binary = r.str<std::vector<char>>();
      out.log = r.str();
    } else if (status == kCompileError) {
      std::string what = r.str(), log = r.str();
      const std::uint32_t n = r.u32();
      if (n > 1024) throw Broken{"a reply with " + std::to_string(n) + " options"};
      std::vector<std::string> options;
      for (std::uint32_t i = 0; i < n; ++i) options.push_back(r.str());
      std::string kernel = r.str();
      throw rt::CompileError(std::move(what), std::move(log), std::move(options), std::move(kernel));
    } else if (status == kOtherError) {
      throw Error(r.str());
    } else {
      throw Broken{"reply status " + std::to_string(status)};
    }
  } catch (const Broken& b) {
    const pid_t pid = pid_;
    if (pid_ > 0) ::kill(pid_, SIGKILL);  // whatever state it is in, it is of no more use
    shut();
    throw CompileWorkerError("lntune: compile worker " + exe_ + " (pid " + std::to_string(pid) + ") failed while compiling " +
                src.kernel_name + ": " + b.what);
  }
  if (out.binary.empty())
    throw CompileWorkerError("lntune: compile worker " + exe_ + " returned an empty binary for " + src.kernel_name);
  out.kernel_name = src.kernel_name;
  out.arch = arch;
  out.kind = rt::BinaryKind::cubin;
  out.source_hash = src.hash;
  return out;
}

int serve_compile_requests(int fd) {
  try {
    Reader r{fd};
    while (r.header(true)) {
      gen::KernelSource src;
      const std::string arch = r.str();
      src.kernel_name = r.str();
      src.source = r.str();
      Writer w;
      w.u32(kMagic);
      w.u32(kVersion);
      try {
        rt::CompiledKernel k = rt::compile(src, arch, rt::BinaryKind::cubin);
        w.u32(kOk);
        w.blob(k.binary.data(), k.binary.size());
        w.str(k.log);
      } catch (const rt::CompileError& e) {
        w.u32(kCompileError);
        w.str(e.what());
        w.str(e.log());
        w.u32(static_cast<std::uint32_t>(e.options().size()));
        for (const auto& o : e.options()) w.str(o);
        w.str(e.kernel());
      } catch (const std::exception& e) {
        w.u32(kOtherError);
        w.str(e.what());
      }
      w.send(fd);
    }
    return 0;
  } catch (const Broken& b) {
    std::cerr << "lntune " << kCompileWorkerCommand << ": " << b.what << "\n";
    return 2;
  }
}

}  // namespace lntune::tune
