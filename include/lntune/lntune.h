/* lntune C ABI: fused LayerNorm (and RMSNorm, see lntune_norm_*) forward and
 * backward on NVIDIA GPUs, with
 * kernels compiled at run time (NVRTC) and chosen per shape from a tuned
 * cache. For FFI (Python ctypes, Rust, ...). Every function returns a status;
 * on failure lntune_last_error() gives this thread's message.
 *
 * Conventions: M rows of N elements; row strides in elements (0 = N, else at
 * least N); mean/rstd are fp32 [M]; the stream is a CUstream (NULL = legacy
 * default stream) of the calling thread's current context (when the thread
 * has none, device 0's primary context is used, as the CUDA runtime does).
 * Pointers must be aligned to their element size; lntune uses 16-byte vector
 * accesses when every pointer, stride and N allow it, scalar ones otherwise.
 * M = 0 is a no-op; N = 0 is an error. */
#ifndef LNTUNE_LNTUNE_H
#define LNTUNE_LNTUNE_H

#include <stddef.h>
#include <stdint.h>

#include "lntune/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { LNTUNE_FP32 = 0, LNTUNE_FP16 = 1, LNTUNE_BF16 = 2 } lntune_dtype;

typedef enum {
  LNTUNE_OK = 0,
  LNTUNE_ERROR_INVALID_ARGUMENT = 1, /* shapes, strides, null pointers, dtypes, non-finite eps, alignment */
  LNTUNE_ERROR_NO_DRIVER = 2,        /* libcuda.so.1 could not be loaded */
  LNTUNE_ERROR_NO_DEVICE = 3,        /* no CUDA device */
  LNTUNE_ERROR_COMPILE = 4,          /* NVRTC failed (the message holds the log) */
  LNTUNE_ERROR_CUDA = 5,             /* a driver call failed */
  LNTUNE_ERROR_CACHE = 6,            /* the tuning cache could not be read */
  LNTUNE_ERROR_INTERNAL = 7
} lntune_status;

typedef struct {
  const void* x;      /* [M, x_row_stride] x_dtype */
  const void* weight; /* [N] w_dtype, or NULL */
  const void* bias;   /* [N] w_dtype, or NULL */
  void* y;            /* [M, y_row_stride] x_dtype */
  float* mean;        /* [M], or NULL */
  float* rstd;        /* [M], or NULL */
  int64_t M, N;
  int64_t x_row_stride, y_row_stride;
  lntune_dtype x_dtype, w_dtype; /* w_dtype: x_dtype or LNTUNE_FP32 */
  float eps;                     /* finite (0 and negative allowed, as in torch) */
  void* stream;                  /* CUstream */
} lntune_forward_args;

typedef struct {
  const void* dy;     /* [M, dy_row_stride] x_dtype */
  const void* x;      /* [M, x_row_stride] x_dtype */
  const void* weight; /* [N] w_dtype, or NULL (weight-free LayerNorm) */
  const float* mean;  /* [M] from the forward */
  const float* rstd;  /* [M] from the forward */
  void* dx;           /* [M, dx_row_stride] x_dtype */
  void* dweight;      /* [N] w_dtype, or NULL (not wanted; must be NULL without weight) */
  void* dbias;        /* [N] w_dtype, or NULL (not wanted) */
  int64_t M, N;
  int64_t dy_row_stride, x_row_stride, dx_row_stride;
  lntune_dtype x_dtype, w_dtype;
  void* workspace;        /* >= lntune_backward_workspace_size bytes, 16-byte aligned; NULL = managed by lntune */
  size_t workspace_bytes;
  void* stream;
} lntune_backward_args;

LNTUNE_API lntune_status lntune_forward(const lntune_forward_args* args);
LNTUNE_API lntune_status lntune_backward(const lntune_backward_args* args);

/* ---- Variants: RMSNorm, fused residual add, zero-centred gamma, output dtype.
 * lntune_norm_* take the same arguments as lntune_forward/lntune_backward
 * (same names, same order) plus the variant's; a zero-initialised variant
 * part with y_dtype = x_dtype is the plain LayerNorm. */
typedef enum { LNTUNE_LAYER_NORM = 0, LNTUNE_RMS_NORM = 1 } lntune_norm;

typedef struct {
  const void* x;      /* [M, x_row_stride] x_dtype */
  const void* weight; /* [N] w_dtype, or NULL */
  const void* bias;   /* [N] w_dtype, or NULL */
  void* y;            /* [M, y_row_stride] y_dtype */
  float* mean;        /* [M], or NULL; must be NULL for RMSNorm */
  float* rstd;        /* [M], or NULL */
  int64_t M, N;
  int64_t x_row_stride, y_row_stride;
  lntune_dtype x_dtype, w_dtype;
  float eps;
  void* stream;
  lntune_norm norm;         /* LNTUNE_RMS_NORM: y = x * rstd * w (+ b), rstd = 1/sqrt(mean(x^2) + eps) */
  int zero_centered_weight; /* nonzero: y = xhat * (1 + w) + b (needs weight) */
  const void* residual;     /* [M, residual_row_stride] residual_dtype, or NULL: no residual add */
  void* residual_out;       /* z = x + residual, [M, residual_out_row_stride] residual_dtype; with residual only */
  int64_t residual_row_stride, residual_out_row_stride;
  lntune_dtype residual_dtype; /* read only with a residual */
  lntune_dtype y_dtype;        /* dtype of y (set it: e.g. to x_dtype) */
} lntune_norm_forward_args;

typedef struct {
  const void* dy;     /* [M, dy_row_stride] y_dtype */
  const void* x;      /* [M, x_row_stride] x_dtype; with a residual: the forward's residual_out (residual_dtype) */
  const void* weight; /* [N] w_dtype, or NULL */
  const float* mean;  /* [M] from the forward (LayerNorm); not read for RMSNorm (may be NULL) */
  const float* rstd;  /* [M] from the forward */
  void* dx;           /* [M, dx_row_stride] x_dtype: the gradient of x (with a residual: also the residual's) */
  void* dweight;      /* [N] w_dtype, or NULL */
  void* dbias;        /* [N] w_dtype, or NULL */
  int64_t M, N;
  int64_t dy_row_stride, x_row_stride, dx_row_stride;
  lntune_dtype x_dtype, w_dtype;
  void* workspace;
  size_t workspace_bytes;
  void* stream;
  lntune_norm norm;
  int zero_centered_weight;
  int residual;               /* nonzero: the forward had a residual add */
  const void* dresidual_out;  /* [M, dresidual_out_row_stride] residual_dtype, or NULL: the gradient of
                                 residual_out, added into dx */
  int64_t dresidual_out_row_stride;
  lntune_dtype residual_dtype; /* read only with a residual */
  lntune_dtype y_dtype;        /* dtype of dy */
  void* dresidual;             /* [M, dresidual_row_stride] residual_dtype, or NULL: the gradient of the residual,
                                  written by the same kernel. z = x + residual, so it holds dx's values, rounded once
                                  to the residual's dtype (e.g. fp32 for an fp32 residual stream with bf16 x) instead
                                  of through x's; with a residual only; may be dresidual_out (same row stride, in
                                  place), must not be dx */
  int64_t dresidual_row_stride;
} lntune_norm_backward_args;

LNTUNE_API lntune_status lntune_norm_forward(const lntune_norm_forward_args* args);
LNTUNE_API lntune_status lntune_norm_backward(const lntune_norm_backward_args* args);
LNTUNE_API lntune_status lntune_norm_backward_workspace_size(const lntune_norm_backward_args* args, size_t* bytes);

/* Bytes of workspace the backward needs for these arguments (the fp32 partial
 * dW/dB rows). Pass it in to keep allocations out of the launch (e.g. during
 * CUDA graph capture); with workspace = NULL lntune allocates and keeps one
 * per stream itself. */
LNTUNE_API lntune_status lntune_backward_workspace_size(const lntune_backward_args* args, size_t* bytes);

/* Tuned configs on (1: from the tuning cache, LNTUNE_CACHE / LNTUNE_CACHE_PATH;
 * nothing with LNTUNE_CACHE=off) or off (0: the default heuristic), for shapes
 * planned after the call. Needs no GPU. */
LNTUNE_API lntune_status lntune_set_tuned(int enabled);

/* The message of this thread's last failed call ("" if none). */
LNTUNE_API const char* lntune_last_error(void);

/* The library's version, "MAJOR.MINOR.PATCH" (LNTUNE_VERSION in lntune/version.h, which lntune.hpp includes,
 * is the headers'). */
LNTUNE_API const char* lntune_version(void);

#ifdef __cplusplus
}
#endif

#endif /* LNTUNE_LNTUNE_H */
