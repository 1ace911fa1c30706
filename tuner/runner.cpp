#include "tuner/runner.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace lntune::tune {

using Clock = std::chrono::steady_clock;

namespace {

// rt::check with a message built only on failure: the repetition loop must
// not allocate.
inline void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) rt::check(r, what);
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

float elapsed_ms(CUevent a, CUevent b) {
  float ms = 0;
  check(rt::driver().EventElapsedTime(&ms, a, b), "cuEventElapsedTime");
  return ms;
}

}  // namespace

Runner::Runner(const rt::DeviceInfo& dev, RunnerOptions options)
    : options_(options), flush_(dev.arch(), dev.l2_bytes > 0 ? static_cast<std::size_t>(dev.l2_bytes) : 0) {
  if (options_.batch < 1) options_.batch = 1;
  if (options_.rule.max_reps < 1) options_.rule.max_reps = 1;
  const rt::DriverApi& d = rt::driver();
  rt::check(d.StreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate (benchmark stream)");
  const int events = std::max(options_.batch, options_.rule.prune_after);
  start_.assign(static_cast<std::size_t>(events), nullptr);
  end_.assign(static_cast<std::size_t>(events), nullptr);
  for (int i = 0; i < events; ++i) {
    rt::check(d.EventCreate(&start_[static_cast<std::size_t>(i)], CU_EVENT_DEFAULT), "cuEventCreate");
    rt::check(d.EventCreate(&end_[static_cast<std::size_t>(i)], CU_EVENT_DEFAULT), "cuEventCreate");
  }
  const std::size_t reserve = static_cast<std::size_t>(options_.rule.max_reps + events);
  samples_.reserve(reserve);
  scratch_.reserve(reserve);
}

Runner::~Runner() {
  // Never throws: results ignored, handles released best-effort.
  try {
    const rt::DriverApi& d = rt::driver();
    if (stream_) d.StreamSynchronize(stream_);
    for (CUevent e : start_)
      if (e) d.EventDestroy(e);
    for (CUevent e : end_)
      if (e) d.EventDestroy(e);
    if (stream_) d.StreamDestroy(stream_);
  } catch (...) {
  }
}

void Runner::mark_busy() { last_busy_ = Clock::now(); }

void Runner::warm_up(const std::function<void(CUstream)>& launch) {
  const auto t0 = Clock::now();
  const rt::DriverApi& d = rt::driver();
  const bool idle = !last_busy_ || seconds_since(*last_busy_) * 1e3 > options_.idle_rewarm_ms;
  // The untimed launches, then one timed to size the rest of the warm-up.
  for (int i = 0; i < options_.warmup_launches; ++i) launch(stream_);
  rt::check(d.EventRecord(start_[0], stream_), "cuEventRecord (warm-up)");
  launch(stream_);
  rt::check(d.EventRecord(end_[0], stream_), "cuEventRecord (warm-up)");
  rt::check(d.EventSynchronize(end_[0]), "cuEventSynchronize (warm-up)");
  if (idle && options_.warmup_ms > 0) {
    const auto r0 = Clock::now();
    const double one_ms = std::max(1e-3, static_cast<double>(elapsed_ms(start_[0], end_[0])));
    const auto more = static_cast<long>(std::min(20000.0, std::ceil(options_.warmup_ms / one_ms)));
    for (long i = 0; i < more; ++i) launch(stream_);
    rt::check(d.StreamSynchronize(stream_), "cuStreamSynchronize (warm-up)");
    ++times_.rewarms;
    times_.rewarm_s += seconds_since(r0);
  }
  mark_busy();
  times_.warmup_s += seconds_since(t0);
}

Measurement Runner::time(const std::function<void(CUstream)>& launch, std::optional<double> best_median_us) {
  warm_up(launch);
  samples_.clear();
  const StopRule& rule = options_.rule;
  const auto begin = Clock::now();
  Measurement m;
  while (m.stop == StopReason::none) {
    const int done = static_cast<int>(samples_.size());
    // The first batch ends at the prune check (when pruning is possible).
    int want = options_.batch;
    if (best_median_us && done < rule.prune_after) want = rule.prune_after - done;
    want = std::max(1, std::min(want, rule.max_reps - done));
    want = std::min(want, static_cast<int>(start_.size()));
    repeat(launch, want);
    m.stop = should_stop(samples_, seconds_since(begin), best_median_us, rule, &scratch_);
  }
  mark_busy();
  m.stats = summarize(samples_, rule.confidence, &scratch_);
  return m;
}

void Runner::repeat(const std::function<void(CUstream)>& launch, int count) {
  const auto t0 = Clock::now();
  const rt::DriverApi& d = rt::driver();
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    flush_.enqueue(stream_);
    check(d.EventRecord(start_[k], stream_), "cuEventRecord (start)");
    launch(stream_);
    check(d.EventRecord(end_[k], stream_), "cuEventRecord (end)");
  }
  check(d.EventSynchronize(end_[static_cast<std::size_t>(count - 1)]), "cuEventSynchronize (repetitions)");
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    samples_.push_back(1e3 * static_cast<double>(elapsed_ms(start_[k], end_[k])));
  }
  times_.reps_s += seconds_since(t0);
}

Measurement Runner::screen(const std::function<void(CUstream)>& launch, int reps, int first,
                           std::optional<double> stop_above_us) {
  warm_up(launch);
  samples_.clear();
  const int total = std::max(1, reps);
  const int events = static_cast<int>(start_.size());
  const int check_at = stop_above_us && first > 0 && first < total ? first : 0;
  Measurement m;
  m.stop = StopReason::max_reps;
  while (static_cast<int>(samples_.size()) < total) {
    const int done = static_cast<int>(samples_.size());
    int want = std::min(events, total - done);
    if (done < check_at) want = std::min(want, check_at - done);
    repeat(launch, want);
    if (static_cast<int>(samples_.size()) == check_at &&
        summarize(samples_, options_.rule.confidence, &scratch_).median > *stop_above_us) {
      m.stop = StopReason::pruned;
      break;
    }
  }
  mark_busy();
  m.stats = summarize(samples_, options_.rule.confidence, &scratch_);
  return m;
}

double Runner::copy_gbps() {
  const rt::DriverApi& d = rt::driver();
  std::size_t free_bytes = 0, total = 0;
  rt::check(d.MemGetInfo(&free_bytes, &total), "cuMemGetInfo");
  std::size_t bytes = std::min(options_.copy_bytes, free_bytes / 4);
  bytes = bytes / (std::size_t{1} << 20) * (std::size_t{1} << 20);
  if (bytes < (std::size_t{64} << 20))
    throw rt::CudaError("lntune: too little free GPU memory to measure the copy bandwidth (" +
                            std::to_string(free_bytes >> 20) + " MiB free)",
                        CUDA_ERROR_OUT_OF_MEMORY);
  rt::DeviceBuffer src(bytes), dst(bytes);
  rt::check(d.MemsetD32Async(src.get(), 0x3f800000u, bytes / 4, stream_), "cuMemsetD32Async (copy source)");
  auto copy = [&](CUstream s) { check(d.MemcpyDtoDAsync(dst.get(), src.get(), bytes, s), "cuMemcpyDtoDAsync"); };
  // A copy of >= 64 MiB dwarfs the L2, so no flush is needed; the runner's
  // own loop is used for warm-up, repetitions and the stop rule.
  const Measurement m = time(copy);
  rt::check(d.StreamSynchronize(stream_), "cuStreamSynchronize (copy)");
  return 2.0 * static_cast<double>(bytes) / (m.stats.median * 1e-6) / 1e9;
}

}  // namespace lntune::tune
