// lntune: CPU reference LayerNorm, the oracle every GPU result is checked
// against.
//
// Everything is computed in double from the (exactly widened) stored inputs,
// and each output is rounded exactly once (RNE) to its storage dtype. So the
// reference differs from the exact result by at most half an ulp of the
// output format plus a few double roundoffs, far below any fp32 kernel's
// error.
//
//   mean  = sum(x) / N                     (pairwise summation)
//   var   = sum((x - mean)^2) / N          (biased / population variance, as
//                                           PyTorch; corrected two-pass)
//   rstd  = 1 / sqrt(var + eps)
//   xhat  = (x - mean) * rstd
//   y     = xhat * w + b                   (w = 1 without weight, b = 0 without bias)
//
//   wdy   = w * dy
//   c1    = mean(xhat * wdy),  c2 = mean(wdy)
//   dx    = rstd * (wdy - (xhat * c1 + c2))
//   dw    = sum over rows of dy * xhat,    db = sum over rows of dy
//
// RMSNorm (norm = Norm::rms): no mean; rstd = 1 / sqrt(sum(x^2) / N + eps),
// xhat = x * rstd, and in the backward c2 = 0: dx = rstd * (wdy - xhat * c1).
// Zero-centred gamma: w is replaced by 1 + w everywhere (dw is unchanged).
// Fused residual (forward): z = x + residual, formed as the kernels and
// PyTorch's (x + residual).to(residual dtype) form it: the fp32 sum (exact
// for two 16-bit values of similar size; otherwise one rounding), then
// rounded to the residual's dtype and written out (a second rounding only for
// a 16-bit residual with fp32 x). The norm is of that stored z. Backward with
// a residual: x is z (residual dtype) and dz, the upstream gradient of z, is
// added: dx = dnorm + dz; the gradient of the residual has the same value
// (z = x + residual), rounded once to the residual's dtype (norm_backward's
// dresidual). The output dtype (y; dy in the backward) may differ from x's.
//
// NaN / Inf in a row propagate as in PyTorch's layer_norm: that row's y (and
// dx) are all NaN, its mean is +-inf or NaN, its rstd NaN; other rows are
// unaffected (dw/db of course become NaN in every column).
//
// Rows are processed in parallel with std::thread. dw/db use a deterministic
// two-pass reduction (as PyTorch's CPU kernel, but with a fixed partition):
// the rows are split into a number of chunks that depends only on (M, N); each
// chunk is summed, in row order, into its own buffer; the buffers are then
// added in chunk order. Results are therefore bit-identical for any thread
// count.
#pragma once

#include <cstdint>
#include <optional>

#include "lntune/types.hpp"

namespace lntune::ref {

// Strides are in elements. x and y (and dy, dx) are x_dtype; weight, bias
// (and dweight, dbias) are w_dtype.
struct FwdArgs {
  int64_t M = 0, N = 0, x_stride = 0, y_stride = 0;
  DType x_dtype = DType::f32, w_dtype = DType::f32;
  const void* x = nullptr;
  const void* weight = nullptr;  // nullable: as if all ones
  const void* bias = nullptr;    // nullable: as if all zeros
  double eps = 1e-5;
  // Variants (defaults: LayerNorm without options).
  Norm norm = Norm::layer;
  bool zero_centered = false;     // w -> 1 + w (weight required)
  const void* residual = nullptr;  // nullable: no residual add
  DType residual_dtype = DType::f32;
  int64_t residual_stride = 0, z_stride = 0;
  std::optional<DType> y_dtype;  // none: x_dtype
};

// y: M rows of y_stride elements (x_dtype; only the first N of each row are
// written). mean, rstd: M floats each, nullable (not wanted).
// Throws lntune::Error on invalid arguments (M < 0, N < 1, stride < N, a
// required pointer null, eps < 0 or NaN).
void layer_norm_forward(const FwdArgs& a, void* y, float* mean, float* rstd);
// The same with every variant: z (residual_dtype, rows of z_stride) is
// required with a residual and must be null without; mean is not written for
// RMSNorm (it must be null). y may be null when mean, rstd or z is wanted:
// the statistics (and z) alone.
void norm_forward(const FwdArgs& a, void* y, float* mean, float* rstd, void* z);

struct BwdArgs {
  int64_t M = 0, N = 0, dy_stride = 0, x_stride = 0, dx_stride = 0;
  DType x_dtype = DType::f32, w_dtype = DType::f32;
  const void* dy = nullptr;
  const void* x = nullptr;
  const void* weight = nullptr;  // nullable: as if all ones
  double eps = 1e-5;
  // Variants (defaults: LayerNorm without options).
  Norm norm = Norm::layer;
  bool zero_centered = false;
  bool residual = false;            // x is z, in residual_dtype
  DType residual_dtype = DType::f32;
  const void* dz = nullptr;         // nullable: upstream gradient of z (residual_dtype), added into dx
  int64_t dz_stride = 0;
  int64_t dresidual_stride = 0;     // rows of norm_backward's dresidual
  std::optional<DType> y_dtype;     // dtype of dy; none: x_dtype
};

// Computes mean/rstd itself (double, from x and eps). dx: x_dtype, rows of
// dx_stride; dweight, dbias: N elements of w_dtype. Each output is nullable
// (not wanted). With M == 0, dweight/dbias are zero.
void layer_norm_backward(const BwdArgs& a, void* dx, void* dweight, void* dbias);
// The same, plus the gradient of the residual (with a residual only;
// nullable): dx's double values, rounded once to residual_dtype, rows of
// dresidual_stride.
void norm_backward(const BwdArgs& a, void* dx, void* dweight, void* dbias, void* dresidual);

// Double-precision variants on contiguous rows (stride N), for tests and
// finite differences. w, b nullable (ones / zeros); mean, rstd, dx, dw, db
// nullable (not wanted); y required. Same arithmetic as the typed path: the
// typed path's outputs are exactly these values rounded once to the dtype.
// `norm` and `zero_centered` choose the variant (RMSNorm writes no mean) (the residual is a plain
// addition: callers add x + residual, and dz into dx, themselves).
void forward_f64(int64_t M, int64_t N, const double* x, const double* w, const double* b,
                 double eps, double* y, double* mean, double* rstd, Norm norm = Norm::layer,
                 bool zero_centered = false);
void backward_f64(int64_t M, int64_t N, const double* dy, const double* x, const double* w,
                  double eps, double* dx, double* dw, double* db, Norm norm = Norm::layer,
                  bool zero_centered = false);

// Worker threads used by the functions above: n > 0 caps them at n; n <= 0
// (the default) uses std::thread::hardware_concurrency(). Results never
// depend on it. Process-wide.
void set_num_threads(int n);
int num_threads();  // the effective value (>= 1)

}  // namespace lntune::ref
