// lntune/kernels/reference_params.h — the argument blocks of the tuner's
// float64 reference kernels (kernels/reference.cuh), shared verbatim by the
// host (tuner/device_reference.cpp) and the device (NVRTC). Each kernel
// takes one of these by value. Plain C layout: only pointers, 64-bit
// integers, doubles and ints (an even number of ints, so that no padding
// differs between compilers). Every row is contiguous (stride N).
#pragma once

namespace lntune {
namespace refk {

// Element types, numbered as lntune::DType numbers them.
enum : int { kF32 = 0, kF16 = 1, kBf16 = 2 };

// The forward: z (with a residual), y, and the statistics.
struct RefFwdParams {
  const void* x;         // [M, N] x_dtype
  const void* weight;    // [N] w_dtype, or null (ones)
  const void* bias;      // [N] w_dtype, or null (zeros)
  const void* residual;  // [M, N] residual_dtype, or null (no residual)
  void* y;               // [M, N] y_dtype, or null (the statistics and z only)
  void* z;               // [M, N] residual_dtype: x + residual; required with a residual
  float* mean;           // [M] or null (RMSNorm: written as 0)
  float* rstd;           // [M] or null
  unsigned* rstd_max;    // one word, zeroed by the host: the bits of the largest non-NaN fp32 rstd; or null
  long long M;
  long long N;
  double eps;
  int x_dtype;
  int w_dtype;
  int y_dtype;
  int residual_dtype;
  int rms;            // 1: RMSNorm
  int zero_centered;  // 1: the weight is applied as 1 + w
};

// The backward's rows: the statistics again (double, as the CPU reference
// computes them from the stored row), dx, and the statistics in double for
// the dW/dB partials.
struct RefBwdParams {
  const void* dy;      // [M, N] y_dtype
  const void* x;       // [M, N] in_dtype: x, or z with a residual
  const void* weight;  // [N] w_dtype, or null (ones)
  const void* dz;      // [M, N] dz_dtype, or null: the upstream gradient of z, added into dx
  void* dx;            // [M, N] x_dtype, or null (the statistics only)
  double* row_mean;    // [M] or null
  double* row_rstd;    // [M] or null
  long long M;
  long long N;
  double eps;
  int x_dtype;
  int in_dtype;
  int w_dtype;
  int y_dtype;
  int dz_dtype;
  int rms;
  int zero_centered;
  int unused;
};

// dW/dB, first level: chunk c (rows [c * rows_per_chunk, min(M, (c + 1) *
// rows_per_chunk))) summed in row order into row c of the partials.
struct RefDwdbParams {
  const void* dy;            // [M, N] y_dtype
  const void* x;             // [M, N] in_dtype
  const double* row_mean;    // [M]
  const double* row_rstd;    // [M]
  double* dw_partial;        // [chunks, N], or null (dW not wanted)
  double* db_partial;        // [chunks, N], or null (dB not wanted)
  long long M;
  long long N;
  long long chunks;
  long long rows_per_chunk;
  int in_dtype;
  int y_dtype;
};

// dW/dB, second level: the partials summed in chunk order, rounded once.
struct RefDwdbSumParams {
  const double* dw_partial;  // [chunks, N], or null
  const double* db_partial;  // [chunks, N], or null
  void* dw;                  // [N] w_dtype, or null
  void* db;                  // [N] w_dtype, or null
  long long N;
  long long chunks;
  int w_dtype;
  int unused;
};

}  // namespace refk
}  // namespace lntune
