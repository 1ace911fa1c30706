// lntune C++ API: fused LayerNorm forward and backward on NVIDIA GPUs.
// Same semantics as the C ABI (lntune.h); failures throw lntune::Error (or a
// subclass from the runtime: no driver, no device, compile, CUDA errors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lntune/export.h"
#include "lntune/types.hpp"
#include "lntune/version.h"

namespace lntune {

struct ForwardArgs {
  const void* x = nullptr;
  const void* weight = nullptr;  // optional
  const void* bias = nullptr;    // optional
  void* y = nullptr;
  float* mean = nullptr;  // optional
  float* rstd = nullptr;  // optional
  std::int64_t M = 0, N = 0;
  std::int64_t x_row_stride = 0, y_row_stride = 0;  // 0 = N
  DType x_dtype = DType::f32, w_dtype = DType::f32;
  float eps = 1e-5f;
  void* stream = nullptr;  // CUstream
};

struct BackwardArgs {
  const void* dy = nullptr;
  const void* x = nullptr;
  const void* weight = nullptr;  // optional
  const float* mean = nullptr;
  const float* rstd = nullptr;
  void* dx = nullptr;
  void* dweight = nullptr;  // optional
  void* dbias = nullptr;    // optional
  std::int64_t M = 0, N = 0;
  std::int64_t dy_row_stride = 0, x_row_stride = 0, dx_row_stride = 0;  // 0 = N
  DType x_dtype = DType::f32, w_dtype = DType::f32;
  void* workspace = nullptr;  // optional, see backward_workspace_size
  std::size_t workspace_bytes = 0;
  void* stream = nullptr;
};

LNTUNE_API void forward(const ForwardArgs& args);
LNTUNE_API void backward(const BackwardArgs& args);
LNTUNE_API std::size_t backward_workspace_size(const BackwardArgs& args);

// Which config a call with these arguments runs, and why, without launching.
struct Choice {
  Config config;
  std::string instance;  // kernel instance name
  std::string reason;    // "tuned (exact)", "tuned (nearest N=...)", "default heuristic"
};
LNTUNE_API Choice explain_forward(const ForwardArgs& args);
LNTUNE_API Choice explain_backward(const BackwardArgs& args);  // the bwd_dx choice

// The library's version, "MAJOR.MINOR.PATCH" (= LNTUNE_VERSION of the headers it
// was built with, lntune/version.h).
LNTUNE_API const char* version();

}  // namespace lntune
