// The launcher: validated problem -> memoised plan (config, loaded kernels)
// -> launch. A warm call is one hash lookup and one cuLaunchKernel (two for
// the backward). Thread-safe; plans are per (context, problem).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "lntune/lntune.hpp"
#include "runtime/driver.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/problem.hpp"

namespace lntune::rt {

struct FwdPlan {
  Config config;
  InstanceKey key;
  const LoadedKernel* kernel = nullptr;
  std::string reason;
};

struct BwdPlan {
  Config dx_config, dwdb_config;
  InstanceKey dx_key, dwdb_key;
  const LoadedKernel* dx = nullptr;
  const LoadedKernel* dwdb = nullptr;  // null when neither dW nor dB is wanted
  std::string reason;
};

// Plans for the current context (compiling and loading on first use).
const FwdPlan& forward_plan(const FwdProblem& p);
const BwdPlan& backward_plan(const BwdProblem& p);

// Partial rows the backward writes: group_size_m CTAs (at most one per row
// group) times rows_per_cta.
std::int64_t partial_rows(const Config& dx_config, std::int64_t M);
std::size_t workspace_bytes(const BwdProblem& p, const Config& dx_config);

// Launch with a plan already chosen (the tuner uses these to time configs).
void launch_forward(const LoadedKernel& k, const Config& c, const ForwardArgs& a, const FwdProblem& p);
void launch_backward(const LoadedKernel& dx, const LoadedKernel* dwdb, const Config& dx_config,
                     const Config& dwdb_config, const BackwardArgs& a, const BwdProblem& p);

// The device of the current context (cached per thread and per context).
const DeviceInfo& current_device(CUcontext* ctx_out = nullptr);
const DeviceInfo& device_of(CUcontext ctx);

}  // namespace lntune::rt
