// small_row_fwd_probe — how near a copy a LayerNorm forward of short rows
// (bf16, N = 256 / 512 / 1024, x = 512 MiB) can get, and by which shape.
//
// The question (issue 10, session 54): the library's forward at 256 columns
// runs 95.5-97.6% of copy (one CTA per 32 rows, 16 threads a row, no
// prefetch). Is the rest the kernel's shape (bytes in flight an SM while
// a row group reduces) or the ceiling of any kernel that reads 16 bytes a
// lane and writes them back? Answer (bench/results/s54, calls 3-4): the
// shape reaches 100.4% of copy, persistent grids 84-93; the library's
// instance 99.0 without its mean and rstd, 96.5 with them. Timed here,
// every kernel in the same process:
//   memcpy   cudaMemcpyAsync device to device (the reference: 100%)
//   copy16   a grid-stride copy kernel, 16 bytes a lane
//   plain    the library's shape: TPR threads a row, rows of a CTA, one CTA
//            per ROWS rows, the row held in registers
//   persist  a persistent grid (the CTAs that fit at once), each row group
//            walking rows with the next row's loads (PF rows ahead) issued
//            before the current row's sums
// The LayerNorm kernels are checked against a float64 reference on 64 rows
// (max |err| printed) before they are timed. Each round times every kernel
// (median of 15 event-timed repetitions, a 256 MiB buffer rewritten before
// each to flush the L2); three rounds; figures are % of the memcpy of the
// same round.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o small_row_fwd_probe bench/probes/small_row_fwd_probe.cu
//
// With -DLNTUNE_LIB (and an include directory whose lntune/ is templates/),
// the library's own instance of that shape (fwd_bf16_wbf16_wb_b256_w16_r32_v8_s,
// the default at x = 512 MiB) is timed beside them, with and without its
// mean and rstd outputs:
//   mkdir -p /tmp/inc && ln -sfn $PWD/templates /tmp/inc/lntune
//   nvcc -O3 -arch=sm_90 -std=c++17 --expt-relaxed-constexpr -DLNTUNE_LIB -I/tmp/inc \
//        -o small_row_fwd_probe bench/probes/small_row_fwd_probe.cu
#ifdef LNTUNE_LIB
#include "lntune/kernels/fwd.cuh"
#endif
#include "probe_util.cuh"

__global__ void copy16(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// One row's output from its pieces (VPT 16-byte pieces a thread, piece j at
// column (j * TPR + t) * 8).
template <int N, int TPR, int VPT>
__device__ __forceinline__ void norm_row(const uint4 (&in)[VPT], const uint4 (&w)[VPT], const uint4 (&b)[VPT],
                                         uint4* y_row, int t) {
  float v[VPT][8];
#pragma unroll
  for (int j = 0; j < VPT; ++j) unpack(in[j], v[j]);
  float mean, rstd;
  row_stats<N, TPR, VPT>(v, mean, rstd);
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    float wf[8], bf[8], o[8];
    unpack(w[j], wf);
    unpack(b[j], bf);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = (v[j][k] - mean) * rstd * wf[k] + bf[k];
    y_row[j * TPR + t] = pack(o);
  }
}

// The library's shape: one CTA per ROWS rows of TPR threads.
template <int N, int TPR, int ROWS>
__global__ void __launch_bounds__(TPR* ROWS) plain(const uint4* __restrict__ x, const uint4* __restrict__ w,
                                                   const uint4* __restrict__ b, uint4* __restrict__ y, long M) {
  constexpr int VPT = N / 8 / TPR;
  const int t = threadIdx.x % TPR;
  const long row = long(blockIdx.x) * ROWS + threadIdx.x / TPR;
  if (row >= M) return;
  uint4 in[VPT], wv[VPT], bv[VPT];
#pragma unroll
  for (int j = 0; j < VPT; ++j) in[j] = x[row * (N / 8) + j * TPR + t];
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    wv[j] = __ldg(w + j * TPR + t);
    bv[j] = __ldg(b + j * TPR + t);
  }
  norm_row<N, TPR, VPT>(in, wv, bv, y + row * (N / 8), t);
}

// Persistent: row groups walk rows (stride = all groups of the grid), PF
// rows' loads in flight ahead of the row being reduced.
template <int N, int TPR, int THREADS, int PF>
__global__ void __launch_bounds__(THREADS) persist(const uint4* __restrict__ x, const uint4* __restrict__ w,
                                                   const uint4* __restrict__ b, uint4* __restrict__ y, long M) {
  constexpr int VPT = N / 8 / TPR;
  const int t = threadIdx.x % TPR;
  const long groups = long(gridDim.x) * (THREADS / TPR);
  const long first = long(blockIdx.x) * (THREADS / TPR) + threadIdx.x / TPR;
  uint4 wv[VPT], bv[VPT];
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    wv[j] = __ldg(w + j * TPR + t);
    bv[j] = __ldg(b + j * TPR + t);
  }
  uint4 ring[PF + 1][VPT];
#pragma unroll
  for (int p = 0; p < PF; ++p) {
    const long r = first + p * groups;
    if (r < M)
#pragma unroll
      for (int j = 0; j < VPT; ++j) ring[p][j] = __ldcs(x + r * (N / 8) + j * TPR + t);
  }
  for (long row = first; row < M; row += (PF + 1) * groups) {
    // Unrolled over the ring so its slots stay registers.
#pragma unroll
    for (int p = 0; p <= PF; ++p) {
      const long r = row + p * groups;
      if (r >= M) break;
      const long ahead = r + PF * groups;
      if (ahead < M)
#pragma unroll
        for (int j = 0; j < VPT; ++j) ring[(p + PF) % (PF + 1)][j] = __ldcs(x + ahead * (N / 8) + j * TPR + t);
      norm_row<N, TPR, VPT>(ring[p], wv, bv, y + r * (N / 8), t);
    }
  }
}

#ifdef LNTUNE_LIB
namespace {
using LibShape = lntune::RowShape<lntune::bf16_t, lntune::bf16_t, 256, 16, 32, 8, true, true, true, 1, lntune::kLayerNorm,
                                  void, false, lntune::bf16_t>;
}
__global__ void __launch_bounds__(LibShape::kThreads) lib_fwd256(const lntune::FwdParams p) {
  lntune::layer_norm_fwd<LibShape>(p);
}
#endif

int main() {
  Timer tm;
  const Setup u = setup(512u << 20);
  const size_t bytes = u.bytes;
  const int sms = u.sms;
  void *x = u.x, *y = u.y, *w = u.w, *b = u.b;
  const uint4 *X = static_cast<const uint4*>(x), *W = static_cast<const uint4*>(w), *B = static_cast<const uint4*>(b);
  uint4* Y = static_cast<uint4*>(y);

  std::vector<Entry> ks;
  ks.push_back({"memcpy", 0, false, false, [&] { CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, tm.s)); }});
  ks.push_back({"copy16 g=sm*8 t=256", 0, false, false, [&] { copy16<<<sms * 8, 256, 0, tm.s>>>(X, Y, bytes / 16); }});
  ks.push_back({"copy16 1 piece/thread", 0, false, false,
                [&] { copy16<<<bytes / 16 / 256, 256, 0, tm.s>>>(X, Y, bytes / 16); }});
  auto occ = [&](const void* k, int threads) {
    int n = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, threads, 0));
    return n * sms;
  };
#define PLAIN(N, TPR, ROWS)                                                                                    \
  ks.push_back({"plain N=" #N " tpr=" #TPR " rows=" #ROWS, N, false, false, [&] {                              \
                  const long M = bytes / 2 / N;                                                                \
                  plain<N, TPR, ROWS><<<(M + ROWS - 1) / ROWS, TPR * ROWS, 0, tm.s>>>(X, W, B, Y, M);          \
                }});
#define PERSIST(N, TPR, THREADS, PF)                                                                       \
  ks.push_back({"persist N=" #N " tpr=" #TPR " threads=" #THREADS " pf=" #PF, N, false, false, [&] {  \
                  const long M = bytes / 2 / N;                                                                 \
                  static const int g = occ(reinterpret_cast<const void*>(persist<N, TPR, THREADS, PF>), THREADS); \
                  persist<N, TPR, THREADS, PF><<<g, THREADS, 0, tm.s>>>(X, W, B, Y, M);                   \
                }});
  PLAIN(256, 16, 32)
#ifdef LNTUNE_LIB
  for (int stats = 0; stats < 2; ++stats)
    ks.push_back({stats ? "lib b256_w16_r32 +mean/rstd" : "lib b256_w16_r32 no stats", 256, false, stats != 0,
                  [&, stats] {
                    lntune::FwdParams p{};
                    p.x = x;
                    p.weight = w;
                    p.bias = b;
                    p.y = y;
                    p.mean = stats ? u.mean : nullptr;
                    p.rstd = stats ? u.rstd : nullptr;
                    p.M = bytes / 512;
                    p.N = 256;
                    p.x_stride = p.y_stride = 256;
                    p.eps = 1e-5f;
                    lib_fwd256<<<(p.M + 31) / 32, LibShape::kThreads, 0, tm.s>>>(p);
                  }});
#endif
  PLAIN(256, 32, 16)
  PLAIN(256, 16, 64)
  PERSIST(256, 16, 256, 1)
  PERSIST(256, 16, 512, 1)
  PERSIST(256, 16, 256, 2)
  PERSIST(256, 32, 256, 1)
  PERSIST(256, 32, 256, 2)
  PERSIST(256, 8, 256, 1)
  PLAIN(512, 32, 16)
  PERSIST(512, 32, 256, 1)
  PERSIST(512, 32, 256, 2)
  PLAIN(1024, 32, 8)
  PERSIST(1024, 32, 256, 1)

  if (const int failed = check_entries(u, tm.s, ks, true)) {
    std::fprintf(stderr, "%d kernels failed their check: nothing timed\n", failed);
    return 1;
  }
  time_entries(tm, u, ks);
  return 0;
}
