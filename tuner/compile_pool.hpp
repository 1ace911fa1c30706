// lntune::tune — NVRTC compilations on a thread pool, overlapping with the
// GPU benchmarking that runs on the caller's thread.
//
// Workers render an instance, look its CUBIN up in the BinaryStore (the
// SQLite cache: already-compiled CUBINs are never recompiled), else compile
// it with NVRTC and put it there. The benchmarking thread then calls
// rt::Runtime::kernel on the tuner's own Runtime, which finds the CUBIN in the
// same store (its binary store) and only loads it: loading needs the CUDA context,
// compiling does not, so workers never touch the driver.
//
// Jobs run in submission order (FIFO), so submitting every key's candidates
// up front compiles the next keys while the current one is being timed. An
// instance submitted twice is compiled once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "lntune/types.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/log.hpp"
#include "tuner/compile_process.hpp"

namespace lntune::tune {

// Lowers the calling thread's scheduling priority to `nice` (Linux: for this
// thread alone; threads it starts inherit it), so that background work yields
// to the benchmarking thread, whose host work is the tuner's critical path:
// the compile pool at 19, workloads prepared ahead (inputs, CPU references)
// at 15, finished workloads being freed at 19: far below the benchmarking
// thread's 0, which spins while it waits for the GPU. (Measured on an H100,
// these values and the earlier 10 and 5 give the same tuning times; what
// slows a warm re-tune's timings is the background threads' device work,
// bench/results/h100_2026-11-24b.) Best effort: a no-op where it is not
// allowed.
void background_priority(int nice);

// A thread-safe in-memory BinaryStore in front of an optional persistent
// one: get() tries memory, then the backing store; put() stores in both (a
// failing backing put is reported once on the log and then skipped). It
// spares the benchmarking thread a SQLite read per candidate, and lets the
// tuner work without any cache file.
class LayeredBinaryStore : public rt::BinaryStore {
 public:
  explicit LayeredBinaryStore(std::shared_ptr<rt::BinaryStore> backing = nullptr,
                              rt::Log log = rt::Log::from_environment());
  std::optional<std::vector<char>> get(const std::string& source_hash, const std::string& arch,
                                       int nvrtc_version) override;
  void put(const std::string& source_hash, const std::string& arch, int nvrtc_version,
           const std::vector<char>& cubin, const std::string& kernel_name) override;
  // True (and no copy) when memory holds it.
  bool in_memory(const std::string& source_hash, const std::string& arch, int nvrtc_version) const;

 private:
  using Key = std::tuple<std::string, std::string, int>;
  mutable std::mutex mu_;
  std::map<Key, std::vector<char>> memory_;
  std::shared_ptr<rt::BinaryStore> backing_;
  rt::Log log_;
  bool backing_put_failed_ = false;
};

struct CompileResult {
  bool ok = false;
  bool from_cache = false;  // found in the store, not compiled
  std::string error;        // NVRTC's message and log when !ok
  double seconds = 0;
  bool in_worker = false;   // compiled in a worker process
};

struct CompileStats {
  std::uint64_t compiled = 0, from_cache = 0, failed = 0, cancelled = 0;
  double compile_seconds = 0;  // summed over workers
  std::uint64_t in_worker_processes = 0;  // of `compiled`: in a worker process, not in-process
};

class CompilePool {
 public:
  // threads == 0: hardware threads - 2 (one for the benchmarking thread, one
  // for the reference), at least 1.
  // worker_exe: an executable serving `_compile-worker` (the lntune CLI;
  // see tuner/compile_process.hpp): each thread then compiles in a process
  // of its own, started on its first compilation. A worker that cannot be
  // started or dies is a warning on the log, and that thread compiles
  // in-process from then on. Empty: every compilation in-process.
  CompilePool(std::string arch, std::shared_ptr<rt::BinaryStore> store, unsigned threads = 0,
              std::string worker_exe = {});
  ~CompilePool();  // cancels what has not started, joins the workers
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // urgent: ahead of every queued job (FIFO among urgent ones), for a key the
  // benchmarking thread is about to need; else FIFO. An urgent submit of a
  // key still queued moves it up.
  std::shared_future<CompileResult> submit(const InstanceKey& key, bool urgent = false);
  // Jobs not yet started complete with error "cancelled".
  void cancel();
  CompileStats stats() const;
  // The jobs not yet started, in the order they will start.
  std::vector<InstanceKey> queued() const;
  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }

 private:
  struct Job {
    InstanceKey key;
    std::promise<CompileResult> promise;
  };
  // One pool thread's worker process (none, until its first compilation).
  struct Worker {
    std::unique_ptr<CompileProcess> proc;
    bool given_up = false;  // could not start or died: in-process from now on
  };
  void work();
  CompileResult run(const InstanceKey& key, Worker& worker);

  std::string arch_;
  std::string worker_exe_;
  std::shared_ptr<rt::BinaryStore> store_;
  rt::Log log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::size_t urgent_ = 0;  // urgent jobs at the queue's front
  std::unordered_map<InstanceKey, std::shared_future<CompileResult>> submitted_;
  bool stopping_ = false;
  CompileStats stats_;
  std::vector<std::thread> workers_;
};

}  // namespace lntune::tune
