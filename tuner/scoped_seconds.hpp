// lntune::tune — a scope's wall-clock seconds, added to a running total (the
// tuner's per-key host phases, a workload's verification times).
#pragma once

#include <chrono>

namespace lntune::tune {

// Adds the seconds of its lifetime to `*to` (nothing when `to` is null).
class ScopedSeconds {
 public:
  explicit ScopedSeconds(double* to) : to_(to), t0_(std::chrono::steady_clock::now()) {}
  ~ScopedSeconds() {
    if (to_) *to_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  ScopedSeconds(const ScopedSeconds&) = delete;
  ScopedSeconds& operator=(const ScopedSeconds&) = delete;

 private:
  double* to_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace lntune::tune
