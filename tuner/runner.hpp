// lntune::tune — the benchmark runner: how one launch sequence is timed on
// the GPU so that the numbers can be trusted.
//
//   * A stream of its own, event pairs created once, and an L2 flush
//     (tuner/l2_flush.hpp): before every repetition, outside the timed
//     events, a buffer of twice the device's L2 is read, so every repetition
//     reads its inputs from DRAM, as a real call after other work does, and
//     finds the L2 clean (an overwritten buffer left it dirty, and charged
//     the write-back of the flush's data to the timed kernel).
//   * Warm-up: `warmup_launches` untimed launches; when the GPU has been idle
//     (first use, or more than `idle_rewarm_ms` since this runner's last
//     work, e.g. while waiting for compilations) launches continue until
//     about `warmup_ms` of GPU time, so clocks are up.
//   * Repetitions are enqueued in batches (flush, start event, launch, end
//     event), so the GPU never waits for the host inside a timed interval;
//     after each batch the stop rule (tuner/search.hpp) decides: median's 95%
//     CI within +-1%, or max_reps, or max_seconds, or pruned.
//   * screen(): the staged search's first look at a candidate: the same
//     warm-up and flushed repetitions, a fixed small number of them, no stop
//     rule.
//   * No allocation per repetition: samples and scratch are reserved for
//     max_reps, events for one batch.
//   * copy_gbps(): cuMemcpyDtoDAsync between two large buffers (1 GiB each,
//     or a quarter of the free memory), median of its repetitions, counting
//     bytes read + written: the bandwidth ceiling a LayerNorm can approach.
#pragma once

#include <cuda.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "runtime/driver.hpp"
#include "tuner/l2_flush.hpp"
#include "tuner/search.hpp"

namespace lntune::tune {

struct RunnerOptions {
  StopRule rule;
  int warmup_launches = 3;
  double warmup_ms = 25;
  double idle_rewarm_ms = 100;
  int batch = 10;                             // repetitions enqueued between stop checks
  std::size_t copy_bytes = std::size_t{1} << 30;  // per buffer, at most
};

class Runner {
 public:
  // Needs the device's context current on the calling thread; the runner
  // must be used from that thread only.
  explicit Runner(const rt::DeviceInfo& dev, RunnerOptions options = {});
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  CUstream stream() const { return stream_; }
  const RunnerOptions& options() const { return options_; }

  // Times `launch` (which enqueues its work on the given stream). With
  // best_median_us, the stop rule may prune (StopReason::pruned). Throws
  // rt::CudaError when a launch or a CUDA call fails.
  Measurement time(const std::function<void(CUstream)>& launch, std::optional<double> best_median_us = {});

  // The staged search's screening: the same warm-up and L2 flush, exactly
  // `reps` repetitions (at least 1), no stop rule (StopReason::max_reps).
  // With stop_above_us and 0 < first < reps: stops after `first`
  // repetitions (StopReason::pruned) when their median exceeds it.
  Measurement screen(const std::function<void(CUstream)>& launch, int reps, int first = 0,
                     std::optional<double> stop_above_us = std::nullopt);

  // Device-to-device copy bandwidth in GB/s (1e9 bytes/s, read + written).
  double copy_gbps();

  // Host wall seconds spent so far, cumulative (the tuner's trace takes
  // differences per key): warming up (of it, after the GPU idled longer
  // than idle_rewarm_ms, and how often), and enqueueing and waiting for the
  // timed repetitions (their L2 flushes included).
  struct Times {
    double warmup_s = 0, rewarm_s = 0, reps_s = 0;
    long rewarms = 0;
  };
  const Times& times() const { return times_; }

 private:
  void warm_up(const std::function<void(CUstream)>& launch);
  void mark_busy();
  // Enqueues `count` flushed, timed repetitions (count <= events) and
  // appends their times to samples_.
  void repeat(const std::function<void(CUstream)>& launch, int count);

  RunnerOptions options_;
  CUstream stream_ = nullptr;
  std::vector<CUevent> start_, end_;
  L2Flush flush_;
  std::vector<double> samples_, scratch_;
  std::optional<std::chrono::steady_clock::time_point> last_busy_;
  Times times_;
};

}  // namespace lntune::tune
