// Probe (standalone, nvcc -arch=sm_90 -O3): a LayerNorm backward for short
// rows at training sizes (bf16, M = 4096, N = 1024-4096), where lntune's
// persistent backward reaches 35-67% of copy on an H200 (issue 10's targets:
// 50% below N = 4096, 70% from it). The question: is the dx kernel's time
// (11.1 us at N = 1024 for 5.9 us of copy) the chain of rows each CTA walks
// one after the other, and does a layout with every row of an SM in flight at
// once, dW/dB partials summed in the CTA and one partial row a CTA, bring the
// pair under 11.8 us?
//
// Layout: a "team" of WPR warps owns a row (E = N / (32 WPR) columns a
// thread, 8 at a time in 16-byte loads); a CTA of WPC warps holds WPC / WPR
// teams; CTA c owns rows [M c / G, M (c + 1) / G), team k its rows
// lo + k, lo + k + teams, ... with the next row's loads issued before the
// current row's arithmetic. A row's two sums are warp shuffles (plus one
// named barrier of the team's warps when WPR > 1): no CTA barrier per row.
// Each thread keeps its columns' dW/dB sums in registers; at the end the
// teams' sums go through shared memory, summed in team order, into the CTA's
// partial row (fp32, [dW | dB]). Then dW/dB: (a) in the same kernel after a
// grid barrier (cooperative launch), a warp per 8 columns, lanes over the
// partial rows, a fixed butterfly; or (b) the same in a second kernel.
// Deterministic: every sum has a fixed order for a given grid.
//
// Checked against a float64 CPU reference on random inputs, outputs poisoned
// first. Timed with events, L2 flushed (a read of 2x L2) before each rep,
// median of 41, against a 512 MiB device-to-device copy (read + write), as
// lntune_sweep counts: bytes moved = 3 M N 2 (x, dy read; dx written).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

using bf16 = __nv_bfloat16;

__device__ __forceinline__ void grid_barrier(unsigned* word) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
    unsigned old, now;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(word), "r"(add) : "memory");
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
    } while (((old ^ now) & 0x80000000u) == 0);
  }
  __syncthreads();
}

__device__ __forceinline__ void unpack8(const uint4& u, float (&f)[8]) {
  const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}
__device__ __forceinline__ uint4 pack8(const float (&f)[8]) {
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    w[i] = *reinterpret_cast<const unsigned*>(&h);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// dW/dB from P partial rows [P][2N]: warp q of the grid sums columns
// 8q..8q+7 of [dW | dB] over the rows, lane l rows l, l + 32, ... in order,
// then a fixed butterfly.
__device__ __forceinline__ void finish(const float* part, int P, int N, float* out, int gwarp, int nwarps) {
  const int lane = threadIdx.x % 32;
  for (int q = gwarp; q * 8 < 2 * N; q += nwarps) {
    float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int r = lane; r < P; r += 32) {
      const float4 u = __ldcg(reinterpret_cast<const float4*>(part + static_cast<long>(r) * 2 * N + 8 * q));
      const float4 v = __ldcg(reinterpret_cast<const float4*>(part + static_cast<long>(r) * 2 * N + 8 * q + 4));
      a[0] += u.x; a[1] += u.y; a[2] += u.z; a[3] += u.w;
      a[4] += v.x; a[5] += v.y; a[6] += v.z; a[7] += v.w;
    }
#pragma unroll
    for (int o = 16; o >= 1; o /= 2)
#pragma unroll
      for (int k = 0; k < 8; ++k) a[k] += __shfl_xor_sync(0xffffffffu, a[k], o);
    if (lane == 0)
#pragma unroll
      for (int k = 0; k < 8; ++k) out[8 * q + k] = a[k];
  }
}

// Variant flags (call 3): HINT, x and dy loaded and dx stored with the
// streaming hints (ld/st .cs) or plain; STRIDED, team k of CTA c takes rows
// c T + k, c T + k + G T, ... (lntune's persistent order) or a contiguous
// share; LOCKSTEP, the teams step together with a CTA barrier a row (as
// lntune's row slots do) or each on its own.
template <int N, int WPR, int WPC, int MINB, bool FINISH, bool HINT = true, bool STRIDED = false, bool LOCKSTEP = false>
__global__ void __launch_bounds__(WPC * 32, MINB)
    bwd_team(const bf16* __restrict__ x, const bf16* __restrict__ dy, const bf16* __restrict__ w,
             const float* __restrict__ mean, const float* __restrict__ rstd, bf16* __restrict__ dx, float* part, int M,
             unsigned* bar, float* out) {
  constexpr int T = 32 * WPR;
  constexpr int E = N / T;
  constexpr int V = E / 8;
  constexpr int TEAMS = WPC / WPR;
  static_assert(E % 8 == 0 && V >= 1, "8 columns at a time");
  extern __shared__ float smem[];  // [TEAMS][2N] sums, then [TEAMS][2][2][WPR] row sums
  float* red = smem + TEAMS * 2 * N;
  const int tid = threadIdx.x, team = tid / T, t = tid % T, wip = t / 32, lane = tid % 32;
  const long lo = STRIDED ? 0 : static_cast<long>(M) * blockIdx.x / gridDim.x;
  const long hi = STRIDED ? M : static_cast<long>(M) * (blockIdx.x + 1) / gridDim.x;
  const long first0 = STRIDED ? static_cast<long>(blockIdx.x) * TEAMS : lo;  // team 0's first row
  const long step = STRIDED ? static_cast<long>(gridDim.x) * TEAMS : TEAMS;
  uint4 wp[V];  // the weight, packed (unpacked where used: fewer registers)
#pragma unroll
  for (int j = 0; j < V; ++j) wp[j] = __ldg(reinterpret_cast<const uint4*>(w) + (j * T + t));
  float aw[E], ab[E];
#pragma unroll
  for (int e = 0; e < E; ++e) aw[e] = ab[e] = 0.f;
  uint4 cx[V], cdy[V], nx[V], ndy[V];
  float cmu = 0, crs = 0, nmu = 0, nrs = 0;
  long row = first0 + team;
  auto load = [&](long r, uint4(&ux)[V], uint4(&udy)[V], float& mu, float& rs) {
    const uint4* px = reinterpret_cast<const uint4*>(x + r * N);
    const uint4* pdy = reinterpret_cast<const uint4*>(dy + r * N);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      ux[j] = HINT ? __ldcs(px + j * T + t) : px[j * T + t];
      udy[j] = HINT ? __ldcs(pdy + j * T + t) : pdy[j * T + t];
    }
    mu = __ldg(mean + r);
    rs = __ldg(rstd + r);
  };
  if (row < hi) load(row, cx, cdy, cmu, crs);
  int parity = 0;
  for (long row0 = first0; LOCKSTEP ? row0 < hi : row < hi; row += step, row0 += step) {
    const bool active = row < hi;
    if (!active) {  // lockstep past this team's rows: no contribution
#pragma unroll
      for (int j = 0; j < V; ++j) cdy[j] = make_uint4(0, 0, 0, 0);
    }
    const long nrow = row + step;
    if (nrow < hi) load(nrow, nx, ndy, nmu, nrs);
    float s1 = 0.f, s2 = 0.f;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float fx[8], fd[8], fw[8];
      unpack8(cx[j], fx);
      unpack8(cdy[j], fd);
      unpack8(wp[j], fw);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const int e = 8 * j + k;
        const float xh = (fx[k] - cmu) * crs;
        const float g = fw[k] * fd[k];
        s1 += xh * g;
        s2 += g;
        aw[e] += fd[k] * xh;
        ab[e] += fd[k];
      }
    }
#pragma unroll
    for (int o = 16; o >= 1; o /= 2) {
      s1 += __shfl_xor_sync(0xffffffffu, s1, o);
      s2 += __shfl_xor_sync(0xffffffffu, s2, o);
    }
    if constexpr (LOCKSTEP && WPR == 1) __syncthreads();
    if constexpr (WPR > 1) {
      float* slot = red + ((team * 2 + parity) * 2) * WPR;
      if (lane == 0) {
        slot[wip] = s1;
        slot[WPR + wip] = s2;
      }
      if constexpr (LOCKSTEP)
        __syncthreads();
      else
        asm volatile("bar.sync %0, %1;" ::"r"(1 + team), "r"(T) : "memory");
      s1 = s2 = 0.f;
#pragma unroll
      for (int i = 0; i < WPR; ++i) {
        s1 += slot[i];
        s2 += slot[WPR + i];
      }
      parity ^= 1;
    }
    const float c1 = s1 * (1.f / N), c2 = s2 * (1.f / N);
    uint4* pdx = reinterpret_cast<uint4*>(dx + row * N);
#pragma unroll
    for (int j = 0; j < V && active; ++j) {
      float fx[8], fd[8], fw[8], o[8];
      unpack8(cx[j], fx);
      unpack8(cdy[j], fd);
      unpack8(wp[j], fw);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float xh = (fx[k] - cmu) * crs;
        o[k] = crs * (fw[k] * fd[k] - (xh * c1 + c2));
      }
      if (HINT)
        __stcs(pdx + j * T + t, pack8(o));
      else
        pdx[j * T + t] = pack8(o);
    }
#pragma unroll
    for (int j = 0; j < V; ++j) {
      cx[j] = nx[j];
      cdy[j] = ndy[j];
    }
    cmu = nmu;
    crs = nrs;
  }
  // The teams' sums, in team order, into the CTA's partial row [dW | dB].
  float* mine = smem + team * 2 * N;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    float4* pw = reinterpret_cast<float4*>(mine + 8 * (j * T + t));
    float4* pb = reinterpret_cast<float4*>(mine + N + 8 * (j * T + t));
    pw[0] = make_float4(aw[8 * j], aw[8 * j + 1], aw[8 * j + 2], aw[8 * j + 3]);
    pw[1] = make_float4(aw[8 * j + 4], aw[8 * j + 5], aw[8 * j + 6], aw[8 * j + 7]);
    pb[0] = make_float4(ab[8 * j], ab[8 * j + 1], ab[8 * j + 2], ab[8 * j + 3]);
    pb[1] = make_float4(ab[8 * j + 4], ab[8 * j + 5], ab[8 * j + 6], ab[8 * j + 7]);
  }
  __syncthreads();
  float* prow = part + static_cast<long>(blockIdx.x) * 2 * N;
  for (int i = tid; i < 2 * N / 4; i += WPC * 32) {
    float4 s = reinterpret_cast<const float4*>(smem)[i];
    for (int k = 1; k < TEAMS; ++k) {
      const float4 v = reinterpret_cast<const float4*>(smem + k * 2 * N)[i];
      s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    __stcg(reinterpret_cast<float4*>(prow) + i, s);
  }
  if constexpr (FINISH) {
    __threadfence();
    grid_barrier(bar);
    finish(part, gridDim.x, N, out, blockIdx.x * WPC + tid / 32, gridDim.x * WPC);
  }
}

__global__ void finish_kernel(const float* part, int P, int N, float* out) {
  finish(part, P, N, out, blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, gridDim.x * (blockDim.x / 32));
}

__global__ void flush_read(const uint4* p, long count, unsigned* sink) {
  unsigned s = 0;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < count; i += gridDim.x * static_cast<long>(blockDim.x)) {
    const uint4 v = __ldcg(p + i);
    s ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (s == 0x9e3779b9u) *sink = s;
}

struct Bench {
  cudaStream_t s;
  cudaEvent_t a, b;
  uint4* fbuf;
  long fcount;
  unsigned* sink;
  Bench() {
    CK(cudaStreamCreate(&s));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    fcount = 2L * l2 / 16;
    CK(cudaMalloc(&fbuf, fcount * 16));
    CK(cudaMemset(fbuf, 1, fcount * 16));
    CK(cudaMalloc(&sink, 4));
  }
  template <class F>
  double median_us(F f, int reps = 41) {
    std::vector<float> t;
    for (int i = 0; i < reps + 3; ++i) {
      flush_read<<<264, 512, 0, s>>>(fbuf, fcount, sink);
      CK(cudaEventRecord(a, s));
      f(s);
      CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b));
      CK(cudaGetLastError());
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      if (i >= 3) t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

static float bf2f(bf16 h) { return __bfloat162float(h); }

struct Problem {
  int M, N;
  bf16 *x, *dy, *w, *dx;
  float *mean, *rstd, *part, *out;
  unsigned* bar;
  std::vector<bf16> hx, hdy, hw;
  std::vector<float> hmean, hrstd;
  Problem(int M_, int N_, int maxP) : M(M_), N(N_) {
    std::mt19937 g(1234 + N);
    std::normal_distribution<float> nd(0.f, 1.f);
    hx.resize(static_cast<size_t>(M) * N);
    hdy.resize(hx.size());
    hw.resize(N);
    for (auto& v : hx) v = __float2bfloat16(nd(g) * 1.5f + 0.3f);
    for (auto& v : hdy) v = __float2bfloat16(nd(g));
    for (auto& v : hw) v = __float2bfloat16(1.f + 0.2f * nd(g));
    hmean.resize(M);
    hrstd.resize(M);
    for (int r = 0; r < M; ++r) {
      double s = 0, s2 = 0;
      for (int c = 0; c < N; ++c) s += bf2f(hx[static_cast<size_t>(r) * N + c]);
      const double mu = s / N;
      for (int c = 0; c < N; ++c) {
        const double d = bf2f(hx[static_cast<size_t>(r) * N + c]) - mu;
        s2 += d * d;
      }
      hmean[r] = static_cast<float>(mu);
      hrstd[r] = static_cast<float>(1.0 / std::sqrt(s2 / N + 1e-5));
    }
    const size_t b = hx.size() * 2;
    CK(cudaMalloc(&x, b));
    CK(cudaMalloc(&dy, b));
    CK(cudaMalloc(&dx, b));
    CK(cudaMalloc(&w, N * 2));
    CK(cudaMalloc(&mean, M * 4));
    CK(cudaMalloc(&rstd, M * 4));
    CK(cudaMalloc(&part, static_cast<size_t>(maxP) * 2 * N * 4));
    CK(cudaMalloc(&out, 2 * N * 4));
    CK(cudaMalloc(&bar, 4));
    CK(cudaMemset(bar, 0, 4));
    CK(cudaMemcpy(x, hx.data(), b, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, hdy.data(), b, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), N * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(mean, hmean.data(), M * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(rstd, hrstd.data(), M * 4, cudaMemcpyHostToDevice));
  }
  // Relative L2 errors of dx, dW, dB against float64.
  void check(const char* name) {
    std::vector<bf16> gdx(hx.size());
    std::vector<float> gout(2 * N);
    CK(cudaMemcpy(gdx.data(), dx, gdx.size() * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gout.data(), out, 2 * N * 4, cudaMemcpyDeviceToHost));
    std::vector<double> dw(N, 0), db(N, 0);
    double ex = 0, nx = 0;
    bool nan = false;
    for (int r = 0; r < M; ++r) {
      double s1 = 0, s2 = 0;
      const double mu = hmean[r], rs = hrstd[r];
      for (int c = 0; c < N; ++c) {
        const size_t i = static_cast<size_t>(r) * N + c;
        const double xh = (bf2f(hx[i]) - mu) * rs, g = bf2f(hw[c]) * static_cast<double>(bf2f(hdy[i]));
        s1 += xh * g;
        s2 += g;
        dw[c] += bf2f(hdy[i]) * xh;
        db[c] += bf2f(hdy[i]);
      }
      for (int c = 0; c < N; ++c) {
        const size_t i = static_cast<size_t>(r) * N + c;
        const double xh = (bf2f(hx[i]) - mu) * rs, g = bf2f(hw[c]) * static_cast<double>(bf2f(hdy[i]));
        const double ref = rs * (g - (xh * s1 / N + s2 / N));
        const double got = bf2f(gdx[i]);
        if (!std::isfinite(got)) nan = true;
        ex += (got - ref) * (got - ref);
        nx += ref * ref;
      }
    }
    double ew = 0, nw = 0, eb = 0, nb = 0;
    for (int c = 0; c < N; ++c) {
      if (!std::isfinite(gout[c]) || !std::isfinite(gout[N + c])) nan = true;
      ew += (gout[c] - dw[c]) * (gout[c] - dw[c]);
      nw += dw[c] * dw[c];
      eb += (gout[N + c] - db[c]) * (gout[N + c] - db[c]);
      nb += db[c] * db[c];
    }
    const double rx = std::sqrt(ex / nx), rw = std::sqrt(ew / nw), rb = std::sqrt(eb / nb);
    const bool ok = !nan && rx < 1e-2 && rw < 1e-4 && rb < 1e-4;
    std::printf("  check %-34s dx %.2e dW %.2e dB %.2e %s\n", name, rx, rw, rb, ok ? "ok" : "FAIL");
    if (!ok) std::exit(2);
  }
  void poison() {
    CK(cudaMemset(dx, 0xff, hx.size() * 2));
    CK(cudaMemset(out, 0xff, 2 * N * 4));
  }
};

template <int N, int WPR, int WPC, int MINB, bool HINT = true, bool STRIDED = false, bool LOCKSTEP = false>
void run(Bench& bench, Problem& p, double copy_gbps, int sms, int max_per = 4, const char* tag = "") {
  constexpr int TEAMS = WPC / WPR;
  const size_t smem = (static_cast<size_t>(TEAMS) * 2 * N + TEAMS * 4 * WPR) * 4;
  auto kf = bwd_team<N, WPR, WPC, MINB, true, HINT, STRIDED, LOCKSTEP>;
  auto ks = bwd_team<N, WPR, WPC, MINB, false, HINT, STRIDED, LOCKSTEP>;
  CK(cudaFuncSetAttribute(kf, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  CK(cudaFuncSetAttribute(ks, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kf, WPC * 32, smem));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, kf));
  const double moved = 3.0 * p.M * N * 2;
  char name[96];
  for (int per = 1; per <= std::min(occ, max_per); ++per) {
    const int G = sms * per;
    std::snprintf(name, sizeof name, "N=%d WPR=%d WPC=%d G=%d%s", N, WPR, WPC, G, tag);
    int M = p.M;
    void* args[] = {&p.x, &p.dy, &p.w, &p.mean, &p.rstd, &p.dx, &p.part, &M, &p.bar, &p.out};
    auto coop = [&](cudaStream_t s) { CK(cudaLaunchCooperativeKernel((void*)kf, G, WPC * 32, args, smem, s)); };
    auto sep = [&](cudaStream_t s) {
      ks<<<G, WPC * 32, smem, s>>>(p.x, p.dy, p.w, p.mean, p.rstd, p.dx, p.part, M, p.bar, p.out);
      finish_kernel<<<(2 * N / 8 + 7) / 8, 256, 0, s>>>(p.part, G, N, p.out);
    };
    auto dxonly = [&](cudaStream_t s) {
      ks<<<G, WPC * 32, smem, s>>>(p.x, p.dy, p.w, p.mean, p.rstd, p.dx, p.part, M, p.bar, p.out);
    };
    p.poison();
    coop(bench.s);
    CK(cudaStreamSynchronize(bench.s));
    p.check((std::string(name) + " coop").c_str());
    p.poison();
    sep(bench.s);
    CK(cudaStreamSynchronize(bench.s));
    p.check((std::string(name) + " sep").c_str());
    const double tc = bench.median_us(coop), ts = bench.median_us(sep), td = bench.median_us(dxonly);
    auto pct = [&](double us) { return 100.0 * moved / us / 1e3 / copy_gbps; };
    std::printf("team  %-30s regs %3d occ %d | in-kernel finish %6.2f us %5.1f%% | two kernels %6.2f us %5.1f%% | dx alone %6.2f us %5.1f%%\n",
                name, fa.numRegs, occ, tc, pct(tc), ts, pct(ts), td, pct(td));
    std::fflush(stdout);
  }
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  Bench bench;
  const size_t cb = 512ull << 20;
  void *ca, *cbuf;
  CK(cudaMalloc(&ca, cb));
  CK(cudaMalloc(&cbuf, cb));
  CK(cudaMemset(ca, 1, cb));
  const double copy_us = bench.median_us([&](cudaStream_t s) { CK(cudaMemcpyAsync(cbuf, ca, cb, cudaMemcpyDeviceToDevice, s)); }, 15);
  const double copy_gbps = 2.0 * cb / copy_us / 1e3;
  const size_t sb = 12ull << 20;
  const double small_us = bench.median_us([&](cudaStream_t s) { CK(cudaMemcpyAsync(cbuf, ca, sb, cudaMemcpyDeviceToDevice, s)); });
  std::printf("%s, %d SMs: copy %.0f GB/s (512 MiB); a 12 MiB copy (24 MiB moved, as the backward at M=4096 N=1024 bf16): %.2f us = %.1f%% of copy\n",
              prop.name, sms, copy_gbps, small_us, 100.0 * 2 * sb / small_us / 1e3 / copy_gbps);
  CK(cudaFree(ca));
  CK(cudaFree(cbuf));
  const int M = 4096, maxP = 4 * sms;
  // Call 3: which of the probe's differences from lntune's row slots count:
  // the streaming hints, the contiguous share of rows, the teams' freedom.
#define VARIANTS(NN, WPR, WPC)                                                      \
  run<NN, WPR, WPC, 1, true, false, false>(bench, p, copy_gbps, sms, 1, " probe");  \
  run<NN, WPR, WPC, 1, false, false, false>(bench, p, copy_gbps, sms, 1, " plain"); \
  run<NN, WPR, WPC, 1, true, true, false>(bench, p, copy_gbps, sms, 1, " strided"); \
  run<NN, WPR, WPC, 1, true, false, true>(bench, p, copy_gbps, sms, 1, " lockstep"); \
  run<NN, WPR, WPC, 1, false, true, true>(bench, p, copy_gbps, sms, 1, " all3");
  {
    Problem p(M, 1024, maxP);
    VARIANTS(1024, 1, 8)
    VARIANTS(1024, 2, 8)
  }
  {
    Problem p(M, 2048, maxP);
    VARIANTS(2048, 2, 8)
    VARIANTS(2048, 4, 8)
  }
  {
    Problem p(M, 4096, maxP);
    VARIANTS(4096, 8, 16)
    VARIANTS(4096, 4, 8)
  }
  return 0;
}
