// lntune C++ API: fused LayerNorm and RMSNorm forward and backward on NVIDIA
// GPUs, with optional fused residual add, zero-centred gamma and output dtype.
// Same semantics as the C ABI (lntune.h); failures throw lntune::Error (or a
// subclass from the runtime: no driver, no device, compile, CUDA errors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

  // Variants. The defaults are a LayerNorm without options, as before.
  Norm norm = Norm::layer;  // rms: y = x * rstd * w (+ b), rstd = 1/sqrt(mean(x^2) + eps); mean must be null
  bool zero_centered_weight = false;  // y = xhat * (1 + w) + b; needs weight
  // Fused residual add: z = x + residual (rounded to residual_dtype) is
  // written to residual_out, and y = norm(z). Both or neither.
  const void* residual = nullptr;  // [M, residual_row_stride] residual_dtype
  void* residual_out = nullptr;    // [M, residual_out_row_stride] residual_dtype (may alias residual)
  std::int64_t residual_row_stride = 0, residual_out_row_stride = 0;  // 0 = N
  std::optional<DType> residual_dtype = std::nullopt;  // none: x_dtype
  std::optional<DType> y_dtype = std::nullopt;  // none: x_dtype
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

  // Variants, as in ForwardArgs; the defaults are a LayerNorm without options.
  Norm norm = Norm::layer;  // rms: mean is not read (may be null)
  bool zero_centered_weight = false;
  // The forward had a fused residual: x is then its residual_out (z, in
  // residual_dtype), and dresidual_out, the upstream gradient of z, if given,
  // is added into dx (dz = dnorm + dresidual_out). dx is the gradient of both
  // x and the residual (in x_dtype; dresidual below gives it in the
  // residual's dtype too).
  bool residual = false;
  const void* dresidual_out = nullptr;  // [M, dresidual_out_row_stride] residual_dtype, or null
  std::int64_t dresidual_out_row_stride = 0;  // 0 = N
  std::optional<DType> residual_dtype = std::nullopt;  // none: x_dtype
  std::optional<DType> y_dtype = std::nullopt;  // dtype of dy; none: x_dtype
  // The gradient of the residual in its own dtype, written by the same
  // kernel: dx's values (z = x + residual), rounded once to residual_dtype,
  // e.g. fp32 for an fp32 residual stream with bf16 x. With a residual only;
  // may alias dresidual_out (same row stride: in place), not dx.
  void* dresidual = nullptr;                  // [M, dresidual_row_stride] residual_dtype, or null (not wanted)
  std::int64_t dresidual_row_stride = 0;      // 0 = N
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
