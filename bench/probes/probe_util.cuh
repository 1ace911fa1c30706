// probe_util.cuh — what the short-row forward probes share
// (small_row_fwd_probe.cu, stats_store_probe.cu): error checks, bf16 packing,
// a row group's butterfly sum, the event timer (L2 rewritten before each
// repetition, median) and the random bf16 inputs.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// 8 bf16 of a 16-byte piece to floats and back.
__device__ __forceinline__ void unpack(const uint4& u, float (&f)[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 t = __bfloat1622float2(h[k]);
    f[2 * k] = t.x;
    f[2 * k + 1] = t.y;
  }
}
__device__ __forceinline__ uint4 pack(const float (&f)[8]) {
  uint4 u;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
  for (int k = 0; k < 4; ++k) h[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
  return u;
}

template <int TPR>
__device__ __forceinline__ float group_sum(float v) {
  static_assert(TPR <= 32, "a row group is at most a warp here");
#pragma unroll
  for (int o = TPR / 2; o >= 1; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

struct Timer {
  cudaStream_t s;
  cudaEvent_t a, b;
  void* flush;
  size_t flush_bytes = 256u << 20;
  Timer() {
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaMalloc(&flush, flush_bytes));
  }
  float median_us(const std::function<void()>& f, int reps = 15) {
    f();
    f();
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
      CK(cudaMemsetAsync(flush, i & 0xff, flush_bytes, s));
      CK(cudaEventRecord(a, s));
      f();
      CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

inline float bf(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Random bf16 x (values in [1, 5)), weight (in [0.5, 1.5)) and bias (in
// [-0.5, 0.5)) of 1024 columns at most, from a fixed LCG seed.
inline void fill_inputs(void* x, size_t bytes, void* w, void* b) {
  std::vector<uint16_t> h(bytes / 2);
  uint32_t st = 12345;
  auto rnd = [&] {
    st = st * 1664525u + 1013904223u;
    return (st >> 8) * (1.0f / 16777216.0f);
  };
  auto tobf = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
  };
  for (auto& v : h) v = tobf(4.f * rnd() - 2.f + 3.f);
  CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  std::vector<uint16_t> wb(1024);
  for (auto& v : wb) v = tobf(rnd() + 0.5f);
  CK(cudaMemcpy(w, wb.data(), 2048, cudaMemcpyHostToDevice));
  for (auto& v : wb) v = tobf(rnd() - 0.5f);
  CK(cudaMemcpy(b, wb.data(), 2048, cudaMemcpyHostToDevice));
}
