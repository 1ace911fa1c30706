// lntune::tune — device buffers kept for reuse between the tuner's
// workloads.
//
// Each key's workload needs its own inputs and outputs, up to a few GB in
// the bandwidth regime, and the workloads of the next keys are built on
// other threads while the GPU times the current one. Allocating them there
// (cuMemAlloc) slows the timings that run meanwhile: on an H100, a warm
// re-tune's timed repetitions took 3.5x their wall time alone and the
// measured medians rose by about 45% in all (bench/results/h100_2026-11-24b).
// So a finished workload gives its buffers back here, and the next takes the
// smallest that fits: after the first keys of each size class, a tune
// allocates nothing while it times.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>

#include "runtime/driver.hpp"

namespace lntune::tune {

class DevicePool {
 public:
  // keep_bytes: the most bytes kept unused; beyond it the largest buffers
  // are freed.
  explicit DevicePool(std::size_t keep_bytes) : keep_bytes_(keep_bytes) {}
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  // A buffer of at least `bytes` (0: an empty buffer): the smallest kept one
  // that fits and is at most twice as large, else a new allocation of
  // size_class(bytes) (context current). When that allocation runs out of
  // memory, the kept buffers are freed and it is tried once more.
  // Thread-safe.
  rt::DeviceBuffer take(std::size_t bytes);
  // What take() allocates for `bytes`: at least 4 KiB, else rounded up to a
  // quarter step of its power of two (2^k times 1, 1.25, 1.5 or 1.75; at
  // most 25% more). The tuner's keys come in increasing N, so without
  // classes each workload would need a buffer larger than every kept one,
  // and the pool would allocate (and free) all the time.
  static std::size_t size_class(std::size_t bytes);
  // Keeps `b` for a later take(). Thread-safe; never throws.
  void give(rt::DeviceBuffer&& b) noexcept;

  // Frees every kept buffer. Thread-safe.
  void trim() noexcept;

  struct Stats {
    std::size_t taken = 0, reused = 0, kept_bytes = 0;
  };
  Stats stats() const;

 private:
  mutable std::mutex mu_;
  std::multimap<std::size_t, rt::DeviceBuffer> free_;  // by size
  std::size_t keep_bytes_;
  Stats stats_;
};

}  // namespace lntune::tune
