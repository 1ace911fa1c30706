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

// The CTA's statistics through shared memory: each row's t == 0 puts its
// pair, a CTA barrier, then thread i < ROWS stores mean i, ROWS <= i < 2 ROWS
// rstd i - ROWS (STREAM: with st.global.cs).
template <int ROWS, bool RMS, bool STREAM>
__device__ __forceinline__ void cta_store(float (&st)[2][ROWS], int local, bool writer, float mean, float rstd,
                                          float* mean_out, float* rstd_out) {
  if (writer) {
    st[0][local] = mean;
    st[1][local] = rstd;
  }
  __syncthreads();
  const int i = threadIdx.x;
  if (i >= 2 * ROWS) return;
  float* const out = i < ROWS ? (RMS ? nullptr : mean_out) : rstd_out;
  if (!out) return;
  float* const at = out + long(blockIdx.x) * ROWS + i % ROWS;
  if (STREAM) {
    __stcs(at, st[i / ROWS][i % ROWS]);
  } else {
    *at = st[i / ROWS][i % ROWS];
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
#pragma unroll
  for (int j = 0; j < VPT; ++j) unpack(in[j], v[j]);
  float mean, rstd;
  row_stats<N, TPR, VPT, RMS>(v, mean, rstd);
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
  if (MODE == 4) cta_store<ROWS, RMS, false>(st, local, t == 0, mean, rstd, mean_out, rstd_out);
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    float wf[8], bf[8], o[8];
    unpack(__ldg(w + j * TPR + t), wf);
    unpack(__ldg(b + j * TPR + t), bf);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = (v[j][k] - mean) * rstd * wf[k] + bf[k];
    y[row * (N / 8) + j * TPR + t] = pack(o);
  }
  if (MODE == 2 || MODE == 5) cta_store<ROWS, RMS, MODE == 5>(st, local, t == 0, mean, rstd, mean_out, rstd_out);
}

int main() {
  Timer tm;
  const Setup u = setup(512u << 20);
  const size_t bytes = u.bytes;
  const uint4 *X = static_cast<const uint4*>(u.x), *W = static_cast<const uint4*>(u.w),
              *B = static_cast<const uint4*>(u.b);
  uint4* Y = static_cast<uint4*>(u.y);
  std::vector<Entry> ks;
  ks.push_back({"memcpy", 0, false, false, [&] { CK(cudaMemcpyAsync(u.y, u.x, bytes, cudaMemcpyDeviceToDevice, tm.s)); }});
#define SK_(N, TPR, ROWS, MODE, RMS, LD, TAG)                                                              \
  ks.push_back({std::string(RMS ? "rms" : "ln ") + " N=" #N " tpr=" #TPR " rows=" #ROWS " mode=" #MODE TAG, \
                N, RMS, MODE != 0, [&] {                                                                     \
                  const long M = bytes / 2 / N;                                                              \
                  stats_kernel<N, TPR, ROWS, MODE, RMS, LD>                                                  \
                      <<<M / ROWS, TPR * ROWS, 0, tm.s>>>(X, W, B, Y, M, u.mean, u.rstd);                    \
                }});
#define SK(N, TPR, ROWS, MODE, RMS) SK_(N, TPR, ROWS, MODE, RMS, 0, "")
#define SKL(N, TPR, ROWS, MODE, RMS) SK_(N, TPR, ROWS, MODE, RMS, 1, " ld.global")
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
  if (const int failed = check_entries(u, tm.s, ks, false)) {
    std::fprintf(stderr, "%d kernels failed their check: nothing timed\n", failed);
    return 1;
  }
  time_entries(tm, u, ks);
  return 0;
}
