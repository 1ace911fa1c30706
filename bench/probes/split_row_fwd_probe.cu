// split_row_fwd_probe — can a LayerNorm forward of very wide rows (N =
// 262144) reach 92%+ of copy by splitting each row over CTAs that exchange
// their slab statistics through global memory instead of a cluster's DSMEM?
//
// The question (issue 10, session 55): the library's wide forward
// (fwd_wide.cuh) runs a row on a cluster of 16 CTAs (16384-column slabs);
// an H200 runs 7 such clusters at once, 112 of its 132 SMs, and the forward
// reads 90.8% (fp32) and 91.6% (bf16) of copy at 262144 columns, 92 wanted
// (bench/results/s55, call 10). Here a row's slabs are CTAs of a plain
// cooperative grid (every CTA resident, no GPC constraint): CTA c owns slab
// c % SLABS of the rows of its lane c / SLABS (lane l: rows l, l + lanes,
// ...), so its weight and bias stay in registers. Per row each CTA forms its
// slab's sum a and sum of squared deviations from its own slab mean b (two
// passes over registers), thread 0 stores (a, b) and adds 1 to the row's
// counter (atom.add.release.gpu), waits for the row's SLABS arrivals
// (ld.acquire.gpu), and every thread combines the SLABS pairs in one fixed
// order (Chan's formula, as fwd_wide.cuh), then writes its y. With PREFETCH,
// the next row's slab is loaded into a second set of registers before the
// row's sums, so its DRAM latency hides behind the exchange.
//   memcpy  cudaMemcpyAsync device to device (the reference: 100%)
//   split   the kernel above, for several slab widths and CTA sizes
//   local   the same without the exchange (each slab normalised by its own
//           statistics: wrong, not checked; the exchange's cost)
// Every split kernel is checked first against a float64 reference on 6
// rows (y, mean, rstd poisoned before); a dtype with a failure times
// nothing, and the probe exits 1. Three rounds, each timing every kernel (median of 15,
// the L2 rewritten before each repetition); figures are % of that round's
// memcpy of x's bytes (512 MiB).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o split_row_fwd_probe bench/probes/split_row_fwd_probe.cu
// Compare in the same call: `lntune_sweep fwd bf16 262144` and `fwd fp32
// 262144` (the library's default, against its own copy).
#include "probe_util.cuh"

namespace {

constexpr int kN = 262144;

// 16 bytes of T as floats and back (bf16: 8, fp32: 4).
template <class T>
struct Piece;
template <>
struct Piece<__nv_bfloat16> {
  static constexpr int kVec = 8;
  static __device__ __forceinline__ void get(const uint4& u, float (&f)[8]) { unpack(u, f); }
  static __device__ __forceinline__ uint4 put(const float (&f)[8]) { return pack(f); }
};
template <>
struct Piece<float> {
  static constexpr int kVec = 4;
  static __device__ __forceinline__ void get(const uint4& u, float (&f)[4]) {
    f[0] = __uint_as_float(u.x);
    f[1] = __uint_as_float(u.y);
    f[2] = __uint_as_float(u.z);
    f[3] = __uint_as_float(u.w);
  }
  static __device__ __forceinline__ uint4 put(const float (&f)[4]) {
    return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
  }
};

// The CTA's sum of v (every thread gets it); `red` holds a float a warp.
template <int THREADS>
__device__ __forceinline__ float cta_sum(float v, float* red) {
#pragma unroll
  for (int o = 16; o >= 1; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < THREADS / 32; ++k) s += red[k];  // the same order in every thread
  __syncthreads();
  return s;
}

template <class T, int SLAB, int THREADS, bool PREFETCH, bool EXCHANGE>
__global__ void __launch_bounds__(THREADS) split_fwd(const T* __restrict__ x, const T* __restrict__ w,
                                                     const T* __restrict__ b, T* __restrict__ y, float* mean_out,
                                                     float* rstd_out, float2* partial, unsigned* count, int M,
                                                     int lanes, unsigned target) {
  constexpr int kSlabs = kN / SLAB, kVec = Piece<T>::kVec, kPieces = SLAB / (THREADS * kVec);
  static_assert(kPieces * THREADS * kVec == SLAB, "a slab is whole pieces of every thread");
  static_assert(kSlabs <= THREADS, "a thread reads each slab's pair");
  __shared__ float red[THREADS / 32];
  __shared__ float2 pairs[kSlabs];
  const int s = static_cast<int>(blockIdx.x) % kSlabs, lane = static_cast<int>(blockIdx.x) / kSlabs;
  const int t = static_cast<int>(threadIdx.x);
  // This thread's pieces: piece j at column s * SLAB + (j * THREADS + t) * kVec.
  const size_t off = static_cast<size_t>(s) * SLAB + static_cast<size_t>(t) * kVec;
  const uint4* wp = reinterpret_cast<const uint4*>(w + off);
  const uint4* bp = reinterpret_cast<const uint4*>(b + off);
  uint4 wr[kPieces], br[kPieces], xc[kPieces], xn[kPieces];
#pragma unroll
  for (int j = 0; j < kPieces; ++j) {
    wr[j] = wp[j * THREADS];
    br[j] = bp[j * THREADS];
  }
  auto row_ptr = [&](int r) { return reinterpret_cast<const uint4*>(x + static_cast<size_t>(r) * kN + off); };
  int r = lane;
  if (r < M) {
    const uint4* p = row_ptr(r);
#pragma unroll
    for (int j = 0; j < kPieces; ++j) xc[j] = p[j * THREADS];
  }
  for (; r < M; r += lanes) {
    if (PREFETCH && r + lanes < M) {
      const uint4* p = row_ptr(r + lanes);
#pragma unroll
      for (int j = 0; j < kPieces; ++j) xn[j] = p[j * THREADS];
    }
    float v[kPieces][kVec];
#pragma unroll
    for (int j = 0; j < kPieces; ++j) Piece<T>::get(xc[j], v[j]);
    float a = 0.f;
#pragma unroll
    for (int j = 0; j < kPieces; ++j)
#pragma unroll
      for (int k = 0; k < kVec; ++k) a += v[j][k];
    a = cta_sum<THREADS>(a, red);
    const float ms = a * (1.0f / SLAB);
    float q = 0.f;
#pragma unroll
    for (int j = 0; j < kPieces; ++j)
#pragma unroll
      for (int k = 0; k < kVec; ++k) q += (v[j][k] - ms) * (v[j][k] - ms);
    q = cta_sum<THREADS>(q, red);
    float mean = ms, rstd = rsqrtf(q * (1.0f / SLAB) + 1e-5f);
    if (EXCHANGE) {
      if (t == 0) {
        partial[static_cast<size_t>(r) * kSlabs + s] = make_float2(a, q);
        unsigned* const c = count + r;
        unsigned old, now;
        asm volatile("atom.add.release.gpu.u32 %0, [%1], 1;" : "=r"(old) : "l"(c) : "memory");
        now = old + 1;
        while (now < target) asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(c) : "memory");
      }
      __syncthreads();
      if (t < kSlabs) pairs[t] = __ldcg(partial + static_cast<size_t>(r) * kSlabs + t);
      __syncthreads();
      float sa = 0.f;
#pragma unroll 8
      for (int k = 0; k < kSlabs; ++k) sa += pairs[k].x;
      mean = sa * (1.0f / kN);
      float m2 = 0.f;
#pragma unroll 8
      for (int k = 0; k < kSlabs; ++k) {
        const float d = pairs[k].x * (1.0f / SLAB) - mean;
        m2 += pairs[k].y + static_cast<float>(SLAB) * d * d;
      }
      rstd = rsqrtf(m2 * (1.0f / kN) + 1e-5f);
    }
    uint4* const yp = reinterpret_cast<uint4*>(y + static_cast<size_t>(r) * kN + off);
#pragma unroll
    for (int j = 0; j < kPieces; ++j) {
      float wf[kVec], bf_[kVec], o[kVec];
      Piece<T>::get(wr[j], wf);
      Piece<T>::get(br[j], bf_);
#pragma unroll
      for (int k = 0; k < kVec; ++k) o[k] = (v[j][k] - mean) * rstd * wf[k] + bf_[k];
      yp[j * THREADS] = Piece<T>::put(o);
    }
    if (s == 0 && t == 0) {
      mean_out[r] = mean;
      rstd_out[r] = rstd;
    }
    if (PREFETCH) {
#pragma unroll
      for (int j = 0; j < kPieces; ++j) xc[j] = xn[j];
    } else if (r + lanes < M) {
      const uint4* p = row_ptr(r + lanes);
#pragma unroll
      for (int j = 0; j < kPieces; ++j) xc[j] = p[j * THREADS];
    }
  }
}

template <class T>
float host_float(const T& v);
template <>
float host_float<__nv_bfloat16>(const __nv_bfloat16& v) {
  uint16_t h;
  std::memcpy(&h, &v, 2);
  return bf(h);
}
template <>
float host_float<float>(const float& v) {
  return v;
}

// One dtype's buffers and kernels: x of 512 MiB, weight and bias of kN.
template <class T>
struct Probe {
  int sms = 0, M = 0;
  size_t bytes = 512u << 20;
  T *x = nullptr, *y = nullptr, *w = nullptr, *b = nullptr;
  float *mean = nullptr, *rstd = nullptr;
  float2* partial = nullptr;
  unsigned* count = nullptr;
  struct Kernel {
    std::string name;
    bool exchange;
    const void* fn;
    int threads, slabs;
    int lanes;  // the cooperative grid's lanes: every CTA resident (set by add)
  };
  std::vector<Kernel> ks;
  // What every row's counter holds: each exchange launch adds its slab count
  // to every row (kernels of different slab counts share the counters).
  unsigned added = 0;

  explicit Probe(int sm_count) : sms(sm_count) {
    M = static_cast<int>(bytes / sizeof(T) / kN);
    CK(cudaMalloc(&x, bytes));
    CK(cudaMalloc(&y, bytes));
    CK(cudaMalloc(&w, kN * sizeof(T)));
    CK(cudaMalloc(&b, kN * sizeof(T)));
    CK(cudaMalloc(&mean, M * 4));
    CK(cudaMalloc(&rstd, M * 4));
    CK(cudaMalloc(&partial, static_cast<size_t>(M) * 256 * sizeof(float2)));
    CK(cudaMalloc(&count, M * 4));
    CK(cudaMemset(count, 0, M * 4));
    // x in [1, 5) with a per-row offset (rows far from zero), w in [0.5,
    // 1.5), b in [-0.5, 0.5): fixed LCG.
    std::vector<T> h(bytes / sizeof(T));
    uint32_t st = 2024;
    auto rnd = [&] {
      st = st * 1664525u + 1013904223u;
      return (st >> 8) * (1.0f / 16777216.0f);
    };
    for (size_t i = 0; i < h.size(); ++i) h[i] = T(4.f * rnd() + 1.f + 0.01f * static_cast<float>(i / kN % 100));
    CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
    std::vector<T> hw(kN);
    for (auto& v : hw) v = T(rnd() + 0.5f);
    CK(cudaMemcpy(w, hw.data(), kN * sizeof(T), cudaMemcpyHostToDevice));
    for (auto& v : hw) v = T(rnd() - 0.5f);
    CK(cudaMemcpy(b, hw.data(), kN * sizeof(T), cudaMemcpyHostToDevice));
  }

  ~Probe() {
    for (void* q : {static_cast<void*>(x), static_cast<void*>(y), static_cast<void*>(w), static_cast<void*>(b),
                    static_cast<void*>(mean), static_cast<void*>(rstd), static_cast<void*>(partial),
                    static_cast<void*>(count)})
      cudaFree(q);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  // A kernel and its grid: as many lanes of kN / SLAB CTAs as fit at once.
  template <int SLAB, int THREADS, bool PREFETCH, bool EXCHANGE>
  void add(const char* name) {
    const void* fn = reinterpret_cast<const void*>(&split_fwd<T, SLAB, THREADS, PREFETCH, EXCHANGE>);
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, THREADS, 0));
    const int lanes = per_sm * sms / (kN / SLAB);
    if (lanes < 1) {
      std::fprintf(stderr, "%s: fewer CTAs fit the GPU at once than a row's %d slabs\n", name, kN / SLAB);
      std::exit(1);
    }
    ks.push_back({name, EXCHANGE, fn, THREADS, kN / SLAB, lanes});
  }

  void launch(const Kernel& k, cudaStream_t s) {
    int lanes = k.lanes;  // (kernel arguments go by address)
    if (k.exchange) added += static_cast<unsigned>(k.slabs);
    unsigned target = added;
    const T* cx = x;
    const T* cw = w;
    const T* cb = b;
    int m = M;
    void* args[] = {&cx, &cw, &cb, &y, &mean, &rstd, &partial, &count, &m, &lanes, &target};
    CK(cudaLaunchCooperativeKernel(k.fn, dim3(lanes * k.slabs), dim3(k.threads), args, 0, s));
  }

  // Each exchange kernel on 6 rows against float64: y within 0.05 (bf16) or
  // 1e-3 (fp32), mean and rstd within 1e-4 (relative for rstd).
  int check(cudaStream_t s) {
    int failed = 0;
    std::vector<T> hx(kN), hy(kN), hw(kN), hb(kN);
    CK(cudaMemcpy(hw.data(), w, kN * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), b, kN * sizeof(T), cudaMemcpyDeviceToHost));
    const double tol = sizeof(T) == 2 ? 0.05 : 1e-3;
    for (const Kernel& k : ks) {
      if (!k.exchange) continue;
      // On the kernel's stream: a non-blocking stream does not wait for the
      // legacy stream's memsets (session 56's first run lost 10 of 11
      // checks to the poison landing after the kernel's outputs).
      CK(cudaMemsetAsync(y, 0xff, bytes, s));
      CK(cudaMemsetAsync(mean, 0xff, M * 4, s));
      CK(cudaMemsetAsync(rstd, 0xff, M * 4, s));
      launch(k, s);
      CK(cudaStreamSynchronize(s));
      CK(cudaGetLastError());
      double worst = 0;
      for (int r : {0, 1, M / 3, M / 2 + 1, M - 2, M - 1}) {
        CK(cudaMemcpy(hx.data(), x + static_cast<size_t>(r) * kN, kN * sizeof(T), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hy.data(), y + static_cast<size_t>(r) * kN, kN * sizeof(T), cudaMemcpyDeviceToHost));
        double sum = 0, q = 0;
        for (int c = 0; c < kN; ++c) sum += host_float(hx[c]);
        const double mu = sum / kN;
        for (int c = 0; c < kN; ++c) q += (host_float(hx[c]) - mu) * (host_float(hx[c]) - mu);
        const double rs = 1.0 / std::sqrt(q / kN + 1e-5);
        for (int c = 0; c < kN; ++c) {
          const double ref = (host_float(hx[c]) - mu) * rs * host_float(hw[c]) + host_float(hb[c]);
          const double got = host_float(hy[c]);
          worst = std::isnan(got) ? 1e30 : std::max(worst, std::fabs(ref - got));
        }
        float gm, gr;
        CK(cudaMemcpy(&gm, mean + r, 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&gr, rstd + r, 4, cudaMemcpyDeviceToHost));
        if (!(std::fabs(gm - mu) < 1e-4) || !(std::fabs(gr - rs) / rs < 1e-4)) worst = 1e30;
      }
      const bool bad = !(worst < tol);
      failed += bad;
      std::printf("check %-44s lanes %3d  max |err| %.3g%s\n", k.name.c_str(), k.lanes, worst,
                  bad ? "  FAILED" : "");
    }
    return failed;
  }

  void time(Timer& tm) {
    std::vector<std::vector<float>> pct(ks.size());
    for (int round = 0; round < 3; ++round) {
      const float copy = tm.median_us([&] { CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, tm.s)); });
      for (size_t i = 0; i < ks.size(); ++i) pct[i].push_back(100.f * copy / tm.median_us([&] { launch(ks[i], tm.s); }));
      std::printf("round %d: memcpy %.1f us (%.0f GB/s)\n", round, copy, 2.0 * bytes / copy / 1e3);
    }
    for (size_t i = 0; i < ks.size(); ++i)
      std::printf("%-44s lanes %3d  %6.1f %6.1f %6.1f %% of copy\n", ks[i].name.c_str(), ks[i].lanes, pct[i][0],
                  pct[i][1], pct[i][2]);
  }
};

}  // namespace

// One dtype: its kernels (`add` puts them in the probe), checked, then
// timed where every check passed; returns the failures.
template <class T, class Add>
int run(Timer& tm, int sms, const char* dtype, Add add) {
  Probe<T> p(sms);
  std::printf("%s N = %d, M = %d\n", dtype, kN, p.M);
  add(p);
  const int failed = p.check(tm.s);
  if (!failed) p.time(tm);
  return failed;
}

int main() {
  Timer tm;
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("GPU %s, %d SMs\n", prop.name, sms);
  int failed = run<__nv_bfloat16>(tm, sms, "bf16", [](auto& p) {
    p.template add<16384, 512, true, true>("bf16 split slab 16384 t512 prefetch");
    p.template add<16384, 512, false, true>("bf16 split slab 16384 t512");
    p.template add<8192, 256, true, true>("bf16 split slab 8192 t256 prefetch");
    p.template add<8192, 256, false, true>("bf16 split slab 8192 t256");
    p.template add<4096, 128, true, true>("bf16 split slab 4096 t128 prefetch");
    p.template add<8192, 512, true, true>("bf16 split slab 8192 t512 prefetch");
    p.template add<8192, 256, true, false>("bf16 local slab 8192 t256 prefetch");
  });
  failed += run<float>(tm, sms, "fp32", [](auto& p) {
    p.template add<8192, 512, true, true>("fp32 split slab 8192 t512 prefetch");
    p.template add<8192, 512, false, true>("fp32 split slab 8192 t512");
    p.template add<4096, 256, true, true>("fp32 split slab 4096 t256 prefetch");
    p.template add<4096, 256, false, true>("fp32 split slab 4096 t256");
    p.template add<2048, 128, true, true>("fp32 split slab 2048 t128 prefetch");
    p.template add<4096, 256, true, false>("fp32 local slab 4096 t256 prefetch");
  });
  if (failed) {
    std::fprintf(stderr, "%d kernels failed their check: not timed\n", failed);
    return 1;
  }
  return 0;
}
