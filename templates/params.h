// lntune/params.h — kernel argument blocks, shared verbatim by the host
// launcher (C++) and the device kernels (NVRTC). Each kernel takes exactly one
// of these by value. Plain C layout: only pointers, 64-bit integers and floats.
#pragma once

namespace lntune {

struct FwdParams {
  const void* x;       // [M, x_stride] x_dtype
  const void* weight;  // [N] w_dtype, or null
  const void* bias;    // [N] w_dtype, or null
  void* y;             // [M, y_stride] y dtype (x_dtype unless chosen)
  float* mean;         // [M] or null
  float* rstd;         // [M] or null
  long long M;
  long long N;
  long long x_stride;  // elements between consecutive rows
  long long y_stride;
  float eps;
  // Fused residual add (kernels whose shape has one): z = x + residual.
  const void* residual;       // [M, residual_stride] residual dtype
  void* z;                    // [M, z_stride] residual dtype
  long long residual_stride;
  long long z_stride;
};

struct BwdParams {
  const void* dy;      // [M, dy_stride] y dtype
  const void* x;       // [M, x_stride] x_dtype; with a residual: z, residual dtype
  const void* weight;  // [N] w_dtype, or null (then w = 1)
  const float* mean;   // [M] (LayerNorm; unused by RMSNorm)
  const float* rstd;   // [M]
  void* dx;            // [M, dx_stride] x_dtype
  float* dw_partial;   // [CTAs (clusters), N] or null (dW not wanted)
  float* db_partial;   // [CTAs (clusters), N] or null (dB not wanted)
  unsigned* counters;  // [num_counters] the dW/dB reduction's, zeroed by CTA 0; or null
  long long num_counters;
  long long M;
  long long N;
  long long dy_stride;
  long long x_stride;
  long long dx_stride;
  // Fused residual (kernels whose shape has one): the upstream gradient of z,
  // added into dx; null: none.
  const void* dz;  // [M, dz_stride] residual dtype
  long long dz_stride;
  // Fused residual: the gradient of the residual (dx's values, in the
  // residual dtype), or null: not wanted.
  void* dresidual;  // [M, dresidual_stride] residual dtype
  long long dresidual_stride;
  // dW/dB finished in this kernel (a cooperative launch: rt::launch_backward,
  // bwd_dwdb.cuh's finish_dwdb) into dw/db (w_dtype), or both null: a
  // bwd_dwdb kernel reduces the partials afterwards.
  void* dw;     // [N] or null
  void* db;     // [N] or null
  long long P;  // partial rows the kernel writes (finish: rows summed)
};

struct DwdbParams {
  const float* dw_partial;  // [P, N] or null
  const float* db_partial;  // [P, N] or null
  void* dw;                 // [N] w_dtype, or null
  void* db;                 // [N] w_dtype, or null
  float* dw_split;          // [gridDim.y, N] second-level rows, or null (dW not wanted)
  float* db_split;          // [gridDim.y, N] second-level rows, or null (dB not wanted)
  unsigned* counters;       // [gridDim.x] zero on entry (gridDim.y > 1), left at zero
  long long P;              // partial rows
  long long N;
};

}  // namespace lntune
