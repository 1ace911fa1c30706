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

// A row's statistics from this thread's VPT pieces of 8 (already floats),
// summed over its TPR-lane group: LayerNorm's mean and rstd (two passes), or
// RMSNorm's rstd (mean 0).
template <int N, int TPR, int VPT, bool RMS = false>
__device__ __forceinline__ void row_stats(const float (&v)[VPT][8], float& mean, float& rstd) {
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < VPT; ++j)
#pragma unroll
    for (int k = 0; k < 8; ++k) s += RMS ? v[j][k] * v[j][k] : v[j][k];
  if (RMS) {
    mean = 0.f;
    rstd = rsqrtf(group_sum<TPR>(s) * (1.0f / N) + 1e-5f);
    return;
  }
  mean = group_sum<TPR>(s) * (1.0f / N);
  float q = 0.f;
#pragma unroll
  for (int j = 0; j < VPT; ++j)
#pragma unroll
    for (int k = 0; k < 8; ++k) q += (v[j][k] - mean) * (v[j][k] - mean);
  rstd = rsqrtf(group_sum<TPR>(q) * (1.0f / N) + 1e-5f);
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

// The buffers every probe times over: x and y of `bytes` (bf16), a weight
// and a bias of 1024 columns at most, and mean / rstd for rows of 256
// columns or more.
struct Setup {
  int sms = 0;
  size_t bytes = 0;
  void *x = nullptr, *y = nullptr, *w = nullptr, *b = nullptr;
  float *mean = nullptr, *rstd = nullptr;
};
inline Setup setup(size_t bytes) {
  Setup u;
  int dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&u.sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("GPU %s, %d SMs\n", prop.name, u.sms);
  u.bytes = bytes;
  CK(cudaMalloc(&u.x, bytes));
  CK(cudaMalloc(&u.y, bytes));
  CK(cudaMalloc(&u.w, 1024 * 2));
  CK(cudaMalloc(&u.b, 1024 * 2));
  CK(cudaMalloc(&u.mean, (bytes / 512) * 4));
  CK(cudaMalloc(&u.rstd, (bytes / 512) * 4));
  fill_inputs(u.x, bytes, u.w, u.b);
  return u;
}

// One timed kernel: its name, the columns of its rows (0: not a norm, not
// checked), RMSNorm, whether it stores mean and rstd, and its launch.
struct Entry {
  std::string name;
  int n;
  bool rms;
  bool stats;
  std::function<void()> f;
};

// Each norm entry on 64 rows spread over x (the last row among them),
// against float64: y within 0.05 (bf16 outputs), mean and rstd within 1e-4
// where it stores them; y, mean and rstd poisoned (NaN) before. Prints the
// failures (and every error, with `all`) and returns how many failed: a
// probe times nothing unless every kernel is right.
inline int check_entries(const Setup& u, cudaStream_t s, const std::vector<Entry>& entries, bool all) {
  int failed = 0;
  std::vector<uint16_t> hx(1024), hy(1024), hw(1024), hb(1024);
  CK(cudaMemcpy(hw.data(), u.w, 2048, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), u.b, 2048, cudaMemcpyDeviceToHost));
  for (const Entry& k : entries) {
    if (!k.n) continue;
    const long M = static_cast<long>(u.bytes / 2 / k.n);
    CK(cudaMemset(u.y, 0xff, u.bytes));
    CK(cudaMemset(u.mean, 0xff, M * 4));
    CK(cudaMemset(u.rstd, 0xff, M * 4));
    k.f();
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    double worst = 0;
    for (int i = 0; i < 64; ++i) {
      const long r = (i == 63) ? M - 1 : (M / 64) * i + i;
      CK(cudaMemcpy(hx.data(), static_cast<char*>(u.x) + r * k.n * 2, k.n * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hy.data(), static_cast<char*>(u.y) + r * k.n * 2, k.n * 2, cudaMemcpyDeviceToHost));
      double sum = 0, q = 0;
      for (int c = 0; c < k.n; ++c) sum += k.rms ? double(bf(hx[c])) * bf(hx[c]) : bf(hx[c]);
      const double mean = k.rms ? 0.0 : sum / k.n;
      if (!k.rms)
        for (int c = 0; c < k.n; ++c) q += (bf(hx[c]) - mean) * (bf(hx[c]) - mean);
      const double rstd = 1.0 / std::sqrt((k.rms ? sum : q) / k.n + 1e-5);
      for (int c = 0; c < k.n; ++c) {
        const double ref = (bf(hx[c]) - mean) * rstd * bf(hw[c]) + bf(hb[c]);
        const double e = std::fabs(ref - bf(hy[c]));
        worst = std::isnan(bf(hy[c])) ? 1e30 : std::max(worst, e);
      }
      if (k.stats) {
        float gm, gr;
        CK(cudaMemcpy(&gm, u.mean + r, 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&gr, u.rstd + r, 4, cudaMemcpyDeviceToHost));
        const double em = k.rms ? 0.0 : std::fabs(gm - mean), er = std::fabs(gr - rstd) / rstd;
        if (!(em < 1e-4) || !(er < 1e-4)) worst = 1e30;
      }
    }
    if (worst >= 0.05) ++failed;
    if (all || worst >= 0.05)
      std::printf("check %-40s max |err| %.3g%s\n", k.name.c_str(), worst, worst < 0.05 ? "" : "  FAILED");
  }
  return failed;
}

// Three rounds, each timing every entry (entries[0]: the reference copy of
// u.bytes), then each entry's % of that round's copy.
inline void time_entries(Timer& tm, const Setup& u, const std::vector<Entry>& entries) {
  std::vector<std::vector<float>> pct(entries.size());
  for (int round = 0; round < 3; ++round) {
    std::vector<float> us(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) us[i] = tm.median_us(entries[i].f);
    for (size_t i = 0; i < entries.size(); ++i) pct[i].push_back(100.f * us[0] / us[i]);
    std::printf("round %d: memcpy %.1f us (%.0f GB/s)\n", round, us[0], 2.0 * u.bytes / us[0] / 1e3);
  }
  for (size_t i = 0; i < entries.size(); ++i)
    std::printf("%-44s %6.1f %6.1f %6.1f %% of copy\n", entries[i].name.c_str(), pct[i][0], pct[i][1], pct[i][2]);
}
