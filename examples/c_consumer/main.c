/* A C program using an installed lntune's C ABI (lntune/lntune.h; CMake
 * target lntune::lntune, or pkg-config lntune). It runs an fp32 LayerNorm
 * forward on M x N rows and checks it against a CPU computation, then a
 * backward with a workspace it allocates itself (the pattern for CUDA graph
 * capture).
 *
 *   c_consumer [N [M]]        (default N = 1024, M = 512)
 * Exit codes: 0 ok; 1 failure (message on stderr); 77 no usable GPU.
 *
 * Device memory comes from the CUDA runtime here; lntune takes device
 * pointers and a CUstream / cudaStream_t. Every lntune call returns a status;
 * lntune_last_error() holds this thread's message. */
#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lntune/lntune.h"
#include "lntune/version.h" /* LNTUNE_VERSION: the headers' version */

static int fail_lntune(const char* call, lntune_status st) {
  fprintf(stderr, "c_consumer: %s failed (status %d): %s\n", call, (int)st, lntune_last_error());
  return st == LNTUNE_ERROR_NO_DRIVER || st == LNTUNE_ERROR_NO_DEVICE ? 77 : 1;
}

int main(int argc, char** argv) {
  const long long N = argc > 1 ? atoll(argv[1]) : 1024;
  const long long M = argc > 2 ? atoll(argv[2]) : 512;
  if (N < 1 || M < 1) {
    fprintf(stderr, "usage: c_consumer [N [M]] (both >= 1)\n");
    return 2;
  }
  printf("lntune %s (headers %s), fp32 LayerNorm, M=%lld N=%lld\n", lntune_version(), LNTUNE_VERSION, M, N);

  const size_t elems = (size_t)(M * N);
  float* hx = malloc(elems * sizeof(float));
  float* hy = malloc(elems * sizeof(float));
  float* hw = malloc((size_t)N * sizeof(float));
  float* hb = malloc((size_t)N * sizeof(float));
  if (!hx || !hy || !hw || !hb) {
    fprintf(stderr, "c_consumer: out of host memory\n");
    return 1;
  }
  srand(7);
  for (size_t i = 0; i < elems; ++i) hx[i] = (float)rand() / (float)RAND_MAX * 4.f - 1.5f;
  for (long long i = 0; i < N; ++i) {
    hw[i] = 0.5f + (float)rand() / (float)RAND_MAX;
    hb[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  }

  /* Device buffers: x, y, dy, dx [M, N]; w, b, dw, db [N]; mean, rstd [M]. */
  void* d[10] = {0};
  const size_t bytes[10] = {elems * 4, elems * 4, elems * 4, elems * 4, (size_t)N * 4,
                            (size_t)N * 4, (size_t)N * 4, (size_t)N * 4, (size_t)M * 4, (size_t)M * 4};
  for (int i = 0; i < 10; ++i) {
    const cudaError_t err = cudaMalloc(&d[i], bytes[i]);
    if (err != cudaSuccess) {
      /* lntune's C ABI has no call that reaches the GPU without buffers, so
       * here the CUDA runtime reports the missing GPU. */
      fprintf(stderr, "c_consumer: no usable GPU: cudaMalloc: %s\n", cudaGetErrorString(err));
      return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ? 77 : 1;
    }
  }
  void *x = d[0], *y = d[1], *dy = d[2], *dx = d[3], *w = d[4], *b = d[5], *dw = d[6], *db = d[7];
  float *mean = d[8], *rstd = d[9];
  cudaMemcpy(x, hx, bytes[0], cudaMemcpyHostToDevice);
  cudaMemcpy(dy, hx, bytes[0], cudaMemcpyHostToDevice); /* any gradient will do */
  cudaMemcpy(w, hw, bytes[4], cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb, bytes[5], cudaMemcpyHostToDevice);

  lntune_forward_args f;
  memset(&f, 0, sizeof f);
  f.x = x;
  f.weight = w;
  f.bias = b;
  f.y = y;
  f.mean = mean;
  f.rstd = rstd;
  f.M = M;
  f.N = N;
  f.x_dtype = f.w_dtype = LNTUNE_FP32;
  f.eps = 1e-5f;
  f.stream = NULL; /* the legacy default stream */
  lntune_status st = lntune_forward(&f);
  if (st != LNTUNE_OK) return fail_lntune("lntune_forward", st);

  lntune_backward_args g;
  memset(&g, 0, sizeof g);
  g.dy = dy;
  g.x = x;
  g.weight = w;
  g.mean = mean;
  g.rstd = rstd;
  g.dx = dx;
  g.dweight = dw;
  g.dbias = db;
  g.M = M;
  g.N = N;
  g.x_dtype = g.w_dtype = LNTUNE_FP32;
  size_t ws_bytes = 0;
  st = lntune_backward_workspace_size(&g, &ws_bytes);
  if (st != LNTUNE_OK) return fail_lntune("lntune_backward_workspace_size", st);
  void* ws = NULL;
  if (ws_bytes && cudaMalloc(&ws, ws_bytes) != cudaSuccess) {
    fprintf(stderr, "c_consumer: cudaMalloc of the %zu-byte workspace failed\n", ws_bytes);
    return 1;
  }
  g.workspace = ws;
  g.workspace_bytes = ws_bytes;
  st = lntune_backward(&g);
  if (st != LNTUNE_OK) return fail_lntune("lntune_backward", st);
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    fprintf(stderr, "c_consumer: %s\n", cudaGetErrorString(err));
    return 1;
  }

  /* Check the forward on a few rows against the CPU (double). */
  cudaMemcpy(hy, y, bytes[1], cudaMemcpyDeviceToHost);
  double worst = 0;
  const long long rows[3] = {0, M / 2, M - 1};
  for (int k = 0; k < 3; ++k) {
    const float* xr = hx + rows[k] * N;
    double s = 0, s2 = 0;
    for (long long i = 0; i < N; ++i) s += xr[i];
    const double mu = s / (double)N;
    for (long long i = 0; i < N; ++i) s2 += (xr[i] - mu) * (xr[i] - mu);
    const double rs = 1.0 / sqrt(s2 / (double)N + 1e-5);
    for (long long i = 0; i < N; ++i) {
      const double want = (xr[i] - mu) * rs * hw[i] + hb[i];
      const double e = fabs(hy[rows[k] * N + i] - want);
      if (e > worst) worst = e;
    }
  }
  for (int i = 0; i < 10; ++i) cudaFree(d[i]);
  cudaFree(ws);
  free(hx), free(hy), free(hw), free(hb);
  if (!(worst < 1e-4)) {
    fprintf(stderr, "c_consumer: forward mismatch: worst absolute error %.3g\n", worst);
    return 1;
  }
  printf("ok: forward matches the CPU (worst absolute error %.2g); backward ran with a %zu-byte workspace\n", worst,
         ws_bytes);
  return 0;
}
