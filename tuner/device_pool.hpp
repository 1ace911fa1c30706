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
// smallest that fits: after the first keys of each size, a tune allocates
// nothing while it times.
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
  // that fits and is at most twice as large, else a new allocation (context
  // current). Thread-safe.
  rt::DeviceBuffer take(std::size_t bytes);
  // Keeps `b` for a later take(). Thread-safe; never throws.
  void give(rt::DeviceBuffer&& b) noexcept;

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
