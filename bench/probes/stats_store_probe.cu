// stats_store_probe — what storing each row's mean and rstd costs a forward
// of short rows (bf16, x = 512 MiB), and which way of storing them costs
// least. Session 54: the library's forward at 256 columns ran 99.0% of copy
// without its statistics and 96.5 with them (0.8% more bytes); storing them
// from shared memory after a CTA barrier as whole lines won 1.3-2 points at
// RMSNorm 256 and LayerNorm 512 but lost 1 at LayerNorm 256 (here mode 2
// lost nothing: 99.1 against 100.2; bench/results/s54, calls 6-7).
// One kernel shape (TPR threads a row, ROWS rows a CTA, the row in
// registers, as small_row_fwd_probe's `plain`), the statistics stored by MODE:
//   0 none
//   1 lane 0 of each row stores its 4 bytes of each (the library before)
//   2 into shared memory, a CTA barrier after y's stores, warp 0 stores the
//     means, warp 1 the rstds (session 54's first library version)
//   3 the warp's rows gathered by shuffles, lane 0 stores them as one vector
//     (no barrier)
//   4 as 2 but after a barrier placed before y's stores (the stats stored first)
//   5 as 2 with st.global.cs (streaming) stores of the statistics
// and x loaded through the read-only path or, marked "ld.global", plain.
// Each kernel is checked on 64 rows (y, mean, rstd against float64).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o stats_store_probe bench/probes/stats_store_probe.cu
//   (from the repository root; probe_util.cuh beside it)
#include "probe_util.cuh"

// x's loads: LD 0 through the read-only path (ld.global.nc, what a
// __restrict__ const pointer compiles to), 1 plain ld.global (the library's).
template <int LD>
__device__ __forceinline__ uint4 load_x(const uint4* p) {
  if constexpr (LD == 0) {
    return __ldg(p);
  } else {
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
  }
}

template <int N, int TPR, int ROWS, int MODE, bool RMS, int LD = 0>
__global__ void __launch_bounds__(TPR* ROWS) stats_kernel(const uint4* __restrict__ x, const uint4* __restrict__ w,
                                                          const uint4* __restrict__ b, uint4* __restrict__ y, long M,
                                                          float* __restrict__ mean_out, float* __restrict__ rstd_out) {
  constexpr int VPT = N / 8 / TPR;
  constexpr int kRowsAWarp = 32 / TPR;
  __shared__ float st[2][ROWS];
  const int t = threadIdx.x % TPR;
  const int local = threadIdx.x / TPR;
  const long row = long(blockIdx.x) * ROWS + local;
  // M is a multiple of ROWS here (every row active).
  uint4 in[VPT];
#pragma unroll
  for (int j = 0; j < VPT; ++j) in[j] = load_x<LD>(x + row * (N / 8) + j * TPR + t);
  float v[VPT][8];
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    unpack(in[j], v[j]);
#pragma unroll
    for (int k = 0; k < 8; ++k) s += RMS ? v[j][k] * v[j][k] : v[j][k];
  }
  float mean = 0.f, rstd;
  if (RMS) {
    rstd = rsqrtf(group_sum<TPR>(s) * (1.0f / N) + 1e-5f);
  } else {
    mean = group_sum<TPR>(s) * (1.0f / N);
    float q = 0.f;
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
      for (int k = 0; k < 8; ++k) q += (v[j][k] - mean) * (v[j][k] - mean);
    rstd = rsqrtf(group_sum<TPR>(q) * (1.0f / N) + 1e-5f);
  }
  if (MODE == 1 && t == 0) {
    if (!RMS) mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
  if (MODE == 3) {
    // lane 0 gathers the warp's rows (lanes 0, TPR, 2 TPR, ...)
    float m[kRowsAWarp], r[kRowsAWarp];
#pragma unroll
    for (int i = 0; i < kRowsAWarp; ++i) {
      m[i] = __shfl_sync(0xffffffffu, mean, i * TPR);
      r[i] = __shfl_sync(0xffffffffu, rstd, i * TPR);
    }
    if (threadIdx.x % 32 == 0) {
      const long first = row;  // lane 0's row is the warp's first
#pragma unroll
      for (int i = 0; i < kRowsAWarp; ++i) {
        if (!RMS) mean_out[first + i] = m[i];
        rstd_out[first + i] = r[i];
      }
    }
  }
  if (MODE == 4) {
    if (t == 0) {
      st[0][local] = mean;
      st[1][local] = rstd;
    }
    __syncthreads();
    const int i = threadIdx.x;
    if (i < 2 * ROWS) {
      float* out = i < ROWS ? (RMS ? nullptr : mean_out) : rstd_out;
      if (out) out[long(blockIdx.x) * ROWS + i % ROWS] = st[i / ROWS][i % ROWS];
    }
  }
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    float wf[8], bf[8], o[8];
    unpack(__ldg(w + j * TPR + t), wf);
    unpack(__ldg(b + j * TPR + t), bf);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = (v[j][k] - mean) * rstd * wf[k] + bf[k];
    y[row * (N / 8) + j * TPR + t] = pack(o);
  }
  if (MODE == 2 || MODE == 5) {
    if (t == 0) {
      st[0][local] = mean;
      st[1][local] = rstd;
    }
    __syncthreads();
    const int i = threadIdx.x;
    if (i < 2 * ROWS) {
      float* out = i < ROWS ? (RMS ? nullptr : mean_out) : rstd_out;
      if (out) {
        if (MODE == 5) {
          __stcs(out + long(blockIdx.x) * ROWS + i % ROWS, st[i / ROWS][i % ROWS]);
        } else {
          out[long(blockIdx.x) * ROWS + i % ROWS] = st[i / ROWS][i % ROWS];
        }
      }
    }
  }
}

int main() {
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("GPU %s, %d SMs\n", prop.name, sms);
  Timer tm;
  const size_t bytes = 512u << 20;
  void *x, *y, *w, *b;
  float *mean_d, *rstd_d;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&w, 1024 * 2));
  CK(cudaMalloc(&b, 1024 * 2));
  CK(cudaMalloc(&mean_d, (bytes / 512) * 4));
  CK(cudaMalloc(&rstd_d, (bytes / 512) * 4));
  fill_inputs(x, bytes, w, b);
  const uint4 *X = static_cast<const uint4*>(x), *W = static_cast<const uint4*>(w), *B = static_cast<const uint4*>(b);
  uint4* Y = static_cast<uint4*>(y);
  struct K {
    std::string name;
    int n;
    bool rms;
    std::function<void()> f;
  };
  std::vector<K> ks;
  ks.push_back({"memcpy", 0, false, [&] { CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, tm.s)); }});
#define SK(N, TPR, ROWS, MODE, RMS)                                                                               \
  ks.push_back({std::string(RMS ? "rms" : "ln ") + " N=" #N " tpr=" #TPR " rows=" #ROWS " mode=" #MODE, N, RMS, [&] { \
                  const long M = bytes / 2 / N;                                                                   \
                  stats_kernel<N, TPR, ROWS, MODE, RMS>                                                           \
                      <<<M / ROWS, TPR * ROWS, 0, tm.s>>>(X, W, B, Y, M, mean_d, rstd_d);                         \
                }});
#define SKL(N, TPR, ROWS, MODE, RMS)                                                                         \
  ks.push_back({std::string(RMS ? "rms" : "ln ") + " N=" #N " tpr=" #TPR " rows=" #ROWS " mode=" #MODE " ld.global", \
                N, RMS, [&] {                                                                                     \
                  const long M = bytes / 2 / N;                                                                   \
                  stats_kernel<N, TPR, ROWS, MODE, RMS, 1>                                                        \
                      <<<M / ROWS, TPR * ROWS, 0, tm.s>>>(X, W, B, Y, M, mean_d, rstd_d);                         \
                }});
#define MODES(N, TPR, ROWS, RMS) \
  SK(N, TPR, ROWS, 0, RMS) SK(N, TPR, ROWS, 1, RMS) SK(N, TPR, ROWS, 2, RMS) SK(N, TPR, ROWS, 3, RMS) \
  SK(N, TPR, ROWS, 4, RMS) SK(N, TPR, ROWS, 5, RMS)
  MODES(256, 16, 32, false)
  SK(256, 32, 16, 0, false) SK(256, 32, 16, 1, false) SK(256, 32, 16, 2, false)
  SKL(256, 16, 32, 0, false) SKL(256, 16, 32, 1, false) SKL(256, 16, 32, 2, false) SKL(256, 16, 32, 3, false)
  SKL(256, 16, 32, 0, true) SKL(256, 16, 32, 1, true) SKL(256, 16, 32, 2, true)
  SKL(512, 32, 32, 0, false) SKL(512, 32, 32, 1, false) SKL(512, 32, 32, 2, false)
  SKL(512, 32, 16, 0, false) SKL(512, 32, 16, 1, false) SKL(512, 32, 16, 2, false)
  SK(512, 32, 16, 0, false) SK(512, 32, 16, 1, false) SK(512, 32, 16, 2, false)
  std::vector<uint16_t> hx(1024), hy(1024), hw(1024), hb(1024);
  CK(cudaMemcpy(hw.data(), w, 2048, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), b, 2048, cudaMemcpyDeviceToHost));
  for (auto& k : ks) {
    if (!k.n) continue;
    const long M = bytes / 2 / k.n;
    CK(cudaMemset(y, 0xff, bytes));
    CK(cudaMemset(mean_d, 0xff, M * 4));
    CK(cudaMemset(rstd_d, 0xff, M * 4));
    k.f();
    CK(cudaStreamSynchronize(tm.s));
    CK(cudaGetLastError());
    const bool stats = k.name.find("mode=0") == std::string::npos;
    double worst = 0;
    for (int i = 0; i < 64; ++i) {
      const long r = (i == 63) ? M - 1 : (M / 64) * i + i;
      CK(cudaMemcpy(hx.data(), static_cast<char*>(x) + r * k.n * 2, k.n * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hy.data(), static_cast<char*>(y) + r * k.n * 2, k.n * 2, cudaMemcpyDeviceToHost));
      float gm, gr;
      CK(cudaMemcpy(&gm, mean_d + r, 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(&gr, rstd_d + r, 4, cudaMemcpyDeviceToHost));
      double s = 0, q = 0;
      for (int c = 0; c < k.n; ++c) s += k.rms ? double(bf(hx[c])) * bf(hx[c]) : bf(hx[c]);
      const double mean = k.rms ? 0.0 : s / k.n;
      if (!k.rms)
        for (int c = 0; c < k.n; ++c) q += (bf(hx[c]) - mean) * (bf(hx[c]) - mean);
      const double rstd = 1.0 / std::sqrt((k.rms ? s : q) / k.n + 1e-5);
      for (int c = 0; c < k.n; ++c) {
        const double ref = (bf(hx[c]) - mean) * rstd * bf(hw[c]) + bf(hb[c]);
        const double e = std::fabs(ref - bf(hy[c]));
        worst = std::isnan(bf(hy[c])) ? 1e30 : std::max(worst, e);
      }
      if (stats) {
        const double em = k.rms ? 0.0 : std::fabs(gm - mean), er = std::fabs(gr - rstd) / rstd;
        if (!(em < 1e-4) || !(er < 1e-4)) worst = 1e30;
      }
    }
    if (worst >= 0.05) std::printf("check %-40s max |err| %.3g  FAILED\n", k.name.c_str(), worst);
  }
  std::vector<std::vector<float>> pct(ks.size());
  for (int round = 0; round < 3; ++round) {
    std::vector<float> us(ks.size());
    for (size_t i = 0; i < ks.size(); ++i) us[i] = tm.median_us(ks[i].f);
    for (size_t i = 0; i < ks.size(); ++i) pct[i].push_back(100.f * us[0] / us[i]);
    std::printf("round %d: memcpy %.1f us (%.0f GB/s)\n", round, us[0], 2.0 * bytes / us[0] / 1e3);
  }
  for (size_t i = 0; i < ks.size(); ++i)
    std::printf("%-40s %6.1f %6.1f %6.1f %% of copy\n", ks[i].name.c_str(), pct[i][0], pct[i][1], pct[i][2]);
  return 0;
}
