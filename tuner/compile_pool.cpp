#include "tuner/compile_pool.hpp"

#include <algorithm>
#include <chrono>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "generator/instance.hpp"
#include "runtime/log.hpp"
#include "runtime/nvrtc.hpp"

namespace lntune::tune {

void background_priority(int nice) {
#if defined(__linux__)
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  (void)::setpriority(PRIO_PROCESS, tid, nice);
#else
  (void)nice;
#endif
}

LayeredBinaryStore::LayeredBinaryStore(std::shared_ptr<rt::BinaryStore> backing, rt::Log log)
    : backing_(std::move(backing)), log_(log) {}

std::optional<std::vector<char>> LayeredBinaryStore::get(const std::string& source_hash, const std::string& arch,
                                                         int nvrtc_version) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memory_.find(Key{source_hash, arch, nvrtc_version});
    if (it != memory_.end()) return it->second;
  }
  if (!backing_) return std::nullopt;
  auto hit = backing_->get(source_hash, arch, nvrtc_version);
  if (hit) {
    std::lock_guard<std::mutex> lock(mu_);
    memory_.emplace(Key{source_hash, arch, nvrtc_version}, *hit);
  }
  return hit;
}

void LayeredBinaryStore::put(const std::string& source_hash, const std::string& arch, int nvrtc_version,
                             const std::vector<char>& cubin, const std::string& kernel_name) {
  bool skip_backing = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    memory_[Key{source_hash, arch, nvrtc_version}] = cubin;
    skip_backing = backing_put_failed_ || !backing_;
  }
  if (skip_backing) return;
  try {
    backing_->put(source_hash, arch, nvrtc_version, cubin, kernel_name);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!backing_put_failed_)
      log_.warn(std::string("compiled kernels are not being saved to the cache: ") + e.what());
    backing_put_failed_ = true;
  }
}

bool LayeredBinaryStore::in_memory(const std::string& source_hash, const std::string& arch, int nvrtc_version) const {
  std::lock_guard<std::mutex> lock(mu_);
  return memory_.count(Key{source_hash, arch, nvrtc_version}) > 0;
}

CompilePool::CompilePool(std::string arch, std::shared_ptr<rt::BinaryStore> store, unsigned threads,
                         std::string worker_exe)
    : arch_(std::move(arch)),
      worker_exe_(std::move(worker_exe)),
      store_(std::move(store)),
      log_(rt::Log::from_environment()) {
  if (threads == 0) {
    const unsigned hw = std::thread::hardware_concurrency();
    threads = hw > 3 ? hw - 2 : 1;
  }
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

CompilePool::~CompilePool() {
  cancel();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

std::shared_future<CompileResult> CompilePool::submit(const InstanceKey& key, bool urgent) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = submitted_.find(key);
  if (it != submitted_.end()) {
    if (urgent) {
      // Still queued behind others: moved up to the urgent ones.
      const auto first = queue_.begin() + static_cast<std::ptrdiff_t>(urgent_);
      const auto q = std::find_if(first, queue_.end(), [&](const Job& j) { return j.key == key; });
      if (q != queue_.end()) {
        std::rotate(first, q, q + 1);
        ++urgent_;
      }
    }
    return it->second;
  }
  Job job{key, {}};
  std::shared_future<CompileResult> f = job.promise.get_future().share();
  submitted_.emplace(key, f);
  if (urgent)
    queue_.insert(queue_.begin() + static_cast<std::ptrdiff_t>(urgent_++), std::move(job));
  else
    queue_.push_back(std::move(job));
  cv_.notify_one();
  return f;
}

void CompilePool::cancel() {
  std::deque<Job> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(queue_);
    urgent_ = 0;
    stats_.cancelled += dropped.size();
    // A later submit of a cancelled key compiles it afresh.
    for (const Job& j : dropped) submitted_.erase(j.key);
  }
  for (Job& j : dropped) {
    CompileResult r;
    r.error = "cancelled";
    j.promise.set_value(std::move(r));
  }
}

std::vector<InstanceKey> CompilePool::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<InstanceKey> out;
  for (const Job& j : queue_) out.push_back(j.key);
  return out;
}

CompileStats CompilePool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

CompileResult CompilePool::run(const InstanceKey& key, Worker& worker) {
  CompileResult r;
  const auto t0 = std::chrono::steady_clock::now();
  bool in_worker = false;
  // In the thread's worker process while it serves; a worker that cannot
  // start or breaks is given up (a warning) and this compilation, and this
  // thread's later ones, run in-process. Errors of the compilation itself
  // (NVRTC's, a bad architecture) are the job's result, as in-process.
  rt::CubinCompiler via_worker;  // none: rt::compile
  if (!worker_exe_.empty()) via_worker = [&](const gen::KernelSource& src, const std::string& arch) {
    if (!worker.given_up) {
      try {
        if (!worker.proc) worker.proc = std::make_unique<CompileProcess>(worker_exe_);
        std::vector<char> bin = worker.proc->compile(src, arch).binary;
        in_worker = true;
        return bin;
      } catch (const CompileWorkerError& e) {
        worker.given_up = true;
        worker.proc.reset();
        log_.warn(std::string(e.what()) + "; this thread compiles in-process from now on");
      }
    }
    return rt::compile(src, arch, rt::BinaryKind::cubin).binary;
  };
  try {
    r.from_cache = rt::obtain_cubin(gen::render(key), arch_, store_.get(), log_, via_worker).from_store;
    r.ok = true;
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.in_worker = in_worker;
  return r;
}

void CompilePool::work() {
  background_priority(19);
  Worker worker;
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
      if (urgent_ > 0) --urgent_;
    }
    CompileResult r = run(job.key, worker);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!r.ok)
        ++stats_.failed;
      else if (r.from_cache)
        ++stats_.from_cache;
      else
        ++stats_.compiled;
      if (!r.from_cache) stats_.compile_seconds += r.seconds;
      if (r.in_worker) ++stats_.in_worker_processes;
    }
    job.promise.set_value(std::move(r));
  }
}

}  // namespace lntune::tune
