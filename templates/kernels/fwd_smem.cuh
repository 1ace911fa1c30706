// lntune/kernels/fwd_smem.cuh — the forward (fwd.cuh: both norms, every
// variant) for long rows, with a single read of x: each CTA stages its slab
// of a row (S::kBlockSize columns) in shared memory, so x is read from global
// memory once, however long the row, and the statistics passes and the output
// pass read shared memory. Rows too long for one CTA's shared memory are split
// over a thread-block cluster of S::kCluster CTAs (sm_90+, up to 16 with the
// non-portable cluster size), whose per-CTA sums cross the cluster through
// distributed shared memory, in rank order (deterministic).
//
// Per row:
//   1. stage: the slab of x (and of the residual) is copied into shared
//      memory, by LOAD: kLoadBulk, one-dimensional bulk copies (TMA,
//      cp.async.bulk, completing on an mbarrier; sm_90+, streams whose
//      accesses are 16 bytes) or kLoadAsync, cp.async by every thread (4, 8
//      or 16 bytes per copy; 2-byte accesses go through registers). A stream
//      that cannot take bulk copies (narrower accesses, sm_80) uses cp.async.
//      Every copy of the slab is in flight at once: a CTA puts its whole slab
//      (tens of KB) in flight, and the several CTAs an SM holds overlap one's
//      statistics and output with another's loads.
//   2. statistics: exact two passes over shared memory, as the CPU reference:
//      LayerNorm: the row sum (then the mean), then the sum of squared
//      deviations from the mean; RMSNorm: the sum of squares. Each sum is
//      taken over the CTA (row_sum), then over the cluster in rank order.
//      With a residual, the first pass forms z = x + residual (rounded to the
//      residual's dtype), writes it out and keeps it in shared memory.
//   3. output: y = xhat * w + b from shared memory.
// Grid: one cluster (CTA) per row, or fewer that walk the rows
// (gridDim.x / S::kCluster clusters, row += clusters).
//
// Shared memory: dynamic, fwd_smem_bytes<S>() bytes (the launcher sets the
// kernel's limit; the kernel traps when given less), plus a few static words.
#pragma once

#include "lntune/common.cuh"

namespace lntune {

enum FwdLoad : int { kLoadAsync = 0, kLoadBulk = 1 };
// How a cluster's CTAs exchange their sums (EXCHANGE):
//   kExchangePush     each CTA writes its sum into every CTA's shared memory
//                     (st.async) and waits on its own mbarrier for the
//                     cluster's sums: no cluster barrier per exchange, hence
//                     no barrier.cluster.arrive.release, which compiles to a
//                     MEMBAR.ALL.GPU that waits for all of the CTA's global
//                     stores and loads in flight. Two slot buffers and two
//                     mbarriers, alternated by exchange: a CTA is at most one
//                     exchange ahead of any other (it cannot finish exchange
//                     k before every CTA has sent it), so it never writes a
//                     buffer that another CTA still reads.
//   kExchangeBarrier  cluster_sum2 (common.cuh): write the local slot, cluster
//                     barrier, read every CTA's slot.
// Both sum the CTAs' values in rank order: the same bits in every CTA.
enum FwdExchange : int { kExchangePush = 0, kExchangeBarrier = 1 };

// Byte offset of the residual's slab (128-byte aligned), and the dynamic
// shared memory a shape needs: the x slab, and the residual's (where z is
// kept) when there is one. Mirrored on the host by gen::dynamic_smem_bytes.
template <class S>
constexpr int fwd_smem_residual_offset() {
  return (S::kBlockSize * static_cast<int>(sizeof(typename S::T)) + 127) / 128 * 128;
}
template <class S>
constexpr int fwd_smem_bytes() {
  return S::kResidual ? fwd_smem_residual_offset<S>() + S::kBlockSize * static_cast<int>(sizeof(typename S::R))
                      : S::kBlockSize * static_cast<int>(sizeof(typename S::T));
}

// CTAs of a shape an SM can hold (228 KB of shared memory, 1 KB reserved per
// CTA, 2048 threads), as long as each thread keeps at least 40 registers
// (fewer spill): the instance's __launch_bounds__ minimum, so that registers
// never lower the occupancy that shared memory allows.
template <class S>
constexpr int fwd_smem_ctas_per_sm() {
  constexpr int kBySmem = 228 * 1024 / (fwd_smem_bytes<S>() + 1024 + 256);
  constexpr int kByThreads = 2048 / S::kThreads;
  constexpr int kByRegisters = 65536 / (40 * S::kThreads);
  constexpr int kCtas = kBySmem < kByThreads ? kBySmem : kByThreads;
  constexpr int kCapped = kCtas < kByRegisters ? kCtas : kByRegisters;
  return kCapped < 1 ? 1 : kCapped;
}

namespace smem {

__device__ __forceinline__ unsigned address(const void* p) { return shared_address(p); }

__device__ __forceinline__ unsigned dynamic_size() { return dynamic_smem_size(); }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool kHasBulk = true;
#else
constexpr bool kHasBulk = false;
#endif

// mbarrier and bulk copies (sm_90+). The bodies are compiled for sm_90 only;
// callers reach them under `if constexpr (kHasBulk)`.
__device__ __forceinline__ void barrier_init(unsigned bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n\tfence.mbarrier_init.release.cluster;" ::"r"(bar),
               "r"(count)
               : "memory");
#endif
}
__device__ __forceinline__ void barrier_expect(unsigned bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ void barrier_wait(unsigned bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "wait_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra wait_%=;\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
}
// Orders this CTA's generic-proxy accesses to shared memory (the previous
// row's reads) before the async proxy's writes that follow (the next bulk copy).
__device__ __forceinline__ void fence_proxy_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
__device__ __forceinline__ void bulk_copy(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
#endif
}

// The address of the same shared-memory word in CTA `rank` of the cluster.
__device__ __forceinline__ unsigned cluster_address(unsigned local, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}
// Writes v to a word of another CTA's shared memory (cluster address), and
// counts its 4 bytes on that CTA's mbarrier (cluster address).
__device__ __forceinline__ void push_float(unsigned remote, float v, unsigned remote_bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote),
               "r"(__float_as_uint(v)), "r"(remote_bar)
               : "memory");
#endif
}
// Waits for a phase of an mbarrier whose bytes other CTAs of the cluster wrote.
__device__ __forceinline__ void barrier_wait_cluster(unsigned bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "wait_%=:\n\t"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra wait_%=;\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
}

// Bytes per bulk copy: a slab goes out as several copies, from the lanes of
// warp 0, so that the copy engine sees them side by side.
constexpr unsigned kBulkChunk = 8192;

// Whether a stream of E, accessed VEC elements at a time, takes bulk copies:
// its slabs start 16-byte aligned and are a multiple of 16 bytes long (the
// launcher's vector width guarantees both when an access is >= 16 bytes).
template <class E, int VEC, int LOAD>
constexpr bool takes_bulk() {
  return kHasBulk && LOAD == kLoadBulk && static_cast<int>(sizeof(E)) * VEC >= 16;
}

// Warp 0 issues the bulk copies of `n` elements of `src` to `dst`.
template <class E>
__device__ __forceinline__ void stage_bulk(E* dst, const E* src, i64 n, unsigned bar) {
  const unsigned bytes = static_cast<unsigned>(n) * static_cast<unsigned>(sizeof(E));
  const unsigned base = address(dst);
  const char* from = reinterpret_cast<const char*>(src);
  for (unsigned off = (threadIdx.x & 31u) * kBulkChunk; off < bytes; off += 32u * kBulkChunk) {
    const unsigned len = bytes - off < kBulkChunk ? bytes - off : kBulkChunk;
    bulk_copy(base + off, from + off, len, bar);
  }
}

// Every thread copies its accesses (VEC elements each) of the first `n`
// elements of `src` to `dst`: cp.async of 4 to 16 bytes, else (2 bytes)
// through a register.
template <class E, int VEC, int THREADS>
__device__ __forceinline__ void stage_async(E* dst, const E* src, i64 n, int t) {
  constexpr int kBytes = static_cast<int>(sizeof(E)) * VEC;
  constexpr int kCopy = kBytes > 16 ? 16 : kBytes;  // bytes per copy instruction
  constexpr int kPer = kCopy / static_cast<int>(sizeof(E));  // elements per copy
#pragma unroll 4
  for (i64 col = static_cast<i64>(t) * VEC; col < n; col += static_cast<i64>(THREADS) * VEC) {
#pragma unroll
    for (int k = 0; k < VEC; k += kPer) {
      if constexpr (kCopy >= 4) {
        copy_async<kCopy>(address(dst + col + k), src + col + k);
      } else {
        dst[col + k] = src[col + k];
      }
    }
  }
}

// VEC elements of T as stored (pieces of at most 16 bytes), converted to
// float where they are used: a 16-bit weight held for later takes half the
// registers of its floats.
template <class T, int VEC>
struct Raw {
  static constexpr int kPiece = piece<T, VEC>();
  Pack<T, kPiece> p[VEC / kPiece];
  __device__ __forceinline__ void load(const T* src) {
#pragma unroll
    for (int k = 0; k < VEC / kPiece; ++k) p[k] = *reinterpret_cast<const Pack<T, kPiece>*>(src + k * kPiece);
  }
  __device__ __forceinline__ float operator[](int k) const { return to_float(p[k / kPiece].v[k % kPiece]); }
};

}  // namespace smem

// y = xhat * w + b for one access, as normalize_store (common.cuh), with w
// and b already loaded (raw: 1 + w is formed here when zero-centred), stored
// with store_global (common.cuh; one st.global.v4 a 16-byte piece).
template <class S>
__device__ __forceinline__ void normalize_store_vec(typename S::Y* y, const smem::Raw<typename S::W, S::kVec>& w,
                                                    const smem::Raw<typename S::W, S::kVec>& b,
                                                    const float (&x)[S::kVec], float mean, float rstd, float shift) {
  float out[S::kVec];
#pragma unroll
  for (int k = 0; k < S::kVec; ++k) {
    const float xhat = S::kFusedXhat ? fmaf(x[k], rstd, shift) : (x[k] - mean) * rstd;
    if constexpr (S::kHasWeight && S::kHasBias) {
      out[k] = fmaf(xhat, applied_weight<S>(w[k]), b[k]);
    } else if constexpr (S::kHasWeight) {
      out[k] = xhat * applied_weight<S>(w[k]);
    } else if constexpr (S::kHasBias) {
      out[k] = xhat + b[k];
    } else {
      out[k] = xhat;
    }
  }
  store_global<S::kVec, true>(y, out);
}

template <class S, int LOAD = kLoadBulk, int EXCHANGE = kExchangePush>
__device__ __forceinline__ void layer_norm_fwd_smem(const FwdParams& p) {
  static_assert(S::kRowsPerCta == 1 && S::kSingleTile, "a row's slab per CTA, in shared memory");
  static_assert(LOAD == kLoadAsync || LOAD == kLoadBulk, "LOAD: kLoadAsync or kLoadBulk");
  static_assert(EXCHANGE == kExchangePush || EXCHANGE == kExchangeBarrier, "EXCHANGE: kExchangePush or kExchangeBarrier");
  using T = typename S::T;
  using W = typename S::W;
  using R = typename S::R;
  using Y = typename S::Y;
  constexpr int kSlab = S::kBlockSize;  // columns per CTA
  constexpr int kThreads = S::kThreads;
  constexpr int kVec = S::kVec;
  constexpr bool kBulkX = smem::takes_bulk<T, kVec, LOAD>();
  constexpr bool kBulkR = S::kResidual && smem::takes_bulk<R, kVec, LOAD>();
  constexpr bool kAnyBulk = kBulkX || kBulkR;
  constexpr bool kAnyAsync = !kBulkX || (S::kResidual && !kBulkR);

  extern __shared__ __align__(128) unsigned char fwd_smem_slab[];
  T* xs = reinterpret_cast<T*>(fwd_smem_slab);
  R* zs = reinterpret_cast<R*>(fwd_smem_slab + fwd_smem_residual_offset<S>());  // residual, then z
  float* scratch = row_scratch<S, 1>();
  // Per-CTA sums exchanged over the cluster: two buffers, alternated by exchange.
  float(*slots)[2] = cluster_slots<EXCHANGE == kExchangeBarrier ? S::kCluster : 1, 2>();
  __shared__ __align__(8) unsigned long long bar_storage;
  const unsigned bar = smem::address(&bar_storage);

  if (smem::dynamic_size() < static_cast<unsigned>(fwd_smem_bytes<S>())) __trap();  // launched wrongly

  const int t = static_cast<int>(threadIdx.x);
  const unsigned rank = S::kCluster > 1 ? cluster_rank() : 0u;
  const i64 slab = static_cast<i64>(rank) * kSlab;  // this CTA's first column
  const i64 rest = p.N - slab;
  const i64 n = rest < kSlab ? (rest > 0 ? rest : 0) : kSlab;  // this CTA's columns
  const T* x = static_cast<const T*>(p.x) + slab;
  Y* y = static_cast<Y*>(p.y) + slab;
  const R* residual = static_cast<const R*>(p.residual) + slab;  // unused without a residual
  R* z = static_cast<R*>(p.z) + slab;
  const W* weight = static_cast<const W*>(p.weight) + slab;
  const W* bias = static_cast<const W*>(p.bias) + slab;
  const i64 first = S::kCluster > 1 ? static_cast<i64>(cluster_index()) : static_cast<i64>(blockIdx.x);
  const i64 step = S::kCluster > 1 ? static_cast<i64>(cluster_count()) : static_cast<i64>(gridDim.x);

  // kExchangePush: [buffer][rank] sums pushed by the cluster's CTAs, and an
  // mbarrier per buffer.
  constexpr bool kPush = S::kCluster > 1 && EXCHANGE == kExchangePush;
  __shared__ float pushed[2][S::kCluster];
  __shared__ __align__(8) unsigned long long pushed_bar[2];

  if constexpr (kAnyBulk || kPush) {
    if (t == 0) {
      if constexpr (kAnyBulk) smem::barrier_init(bar, 1);
      if constexpr (kPush) {
        smem::barrier_init(smem::address(&pushed_bar[0]), 1);
        smem::barrier_init(smem::address(&pushed_bar[1]), 1);
      }
    }
    if constexpr (kPush) {
      cluster_barrier();  // every CTA's mbarriers are initialised before any CTA pushes
    } else {
      __syncthreads();
    }
  }
  unsigned phase = 0;  // of the mbarrier of the copies
  int parity = 0;      // of the cluster slots (kExchangeBarrier)
  unsigned exchange = 0;  // exchanges so far (kExchangePush)

  // A sum over the row: over the CTA, then over the cluster in rank order.
  // (row_sum ends with __syncthreads for more than a warp: every thread has
  // read the previous exchange's buffer before thread 0 pushes again.)
  const auto row_total = [&](float v) {
    v = row_sum<kThreads, 1>(v, scratch);
    if constexpr (kThreads <= 32) __syncwarp();
    if constexpr (kPush) {
      const unsigned b = exchange & 1u;
      const unsigned local_bar = smem::address(&pushed_bar[b]);
      if (t == 0) {
        smem::barrier_expect(local_bar, 4u * S::kCluster);
        const unsigned slot = smem::address(&pushed[b][rank]);
#pragma unroll
        for (int r = 0; r < S::kCluster; ++r) {
          const unsigned to = static_cast<unsigned>(r);
          smem::push_float(smem::cluster_address(slot, to), v, smem::cluster_address(local_bar, to));
        }
      }
      smem::barrier_wait_cluster(local_bar, (exchange >> 1) & 1u);
      ++exchange;
      v = 0.f;
#pragma unroll
      for (int r = 0; r < S::kCluster; ++r) v += pushed[b][r];
    } else if constexpr (S::kCluster > 1) {
      float unused = 0.f;
      cluster_sum2<S::kCluster>(v, unused, slots[parity]);
      parity ^= 1;
    }
    return v;
  };

  for (i64 row = first; row < p.M; row += step) {
    // 1. Stage the slab.
    const T* x_row = x + row * p.x_stride;
    const R* r_row = residual + row * p.residual_stride;
    if constexpr (kAnyBulk) {
      if (t < 32) {
        if (t == 0) {
          smem::fence_proxy_async();
          unsigned bytes = 0;
          if constexpr (kBulkX) bytes += static_cast<unsigned>(n * static_cast<i64>(sizeof(T)));
          if constexpr (kBulkR) bytes += static_cast<unsigned>(n * static_cast<i64>(sizeof(R)));
          smem::barrier_expect(bar, bytes);
        }
        __syncwarp();
        if constexpr (kBulkX) smem::stage_bulk(xs, x_row, n, bar);
        if constexpr (kBulkR) smem::stage_bulk(zs, r_row, n, bar);
      }
    }
    if constexpr (kAnyAsync) {
      if constexpr (!kBulkX) smem::stage_async<T, kVec, kThreads>(xs, x_row, n, t);
      if constexpr (S::kResidual && !kBulkR) smem::stage_async<R, kVec, kThreads>(zs, r_row, n, t);
      copy_async_wait_all();
      __syncthreads();
    }
    if constexpr (kAnyBulk) {
      smem::barrier_wait(bar, phase);
      phase ^= 1;
    }

    // 2. Statistics. The first pass forms z (with a residual) and sums.
    R* z_row = z + row * p.z_stride;
    float first_sum = 0.f;
#pragma unroll 4
    for (i64 col = static_cast<i64>(t) * kVec; col < n; col += static_cast<i64>(kThreads) * kVec) {
      float v[kVec];
      if constexpr (S::kResidual) {
        float r[kVec];
        load<kVec>(xs + col, v);
        load<kVec>(zs + col, r);
        add_residual<S>(v, r);
        store<kVec>(zs + col, v);
        store_global<kVec, true>(z_row + col, v);
      } else {
        load<kVec>(xs + col, v);
      }
#pragma unroll
      for (int k = 0; k < kVec; ++k) first_sum += S::kRms ? v[k] * v[k] : v[k];
    }
    // The normalised row in shared memory: z, or x.
    const auto row_at = [&](i64 col, float (&v)[kVec]) {
      if constexpr (S::kResidual) {
        load<kVec>(zs + col, v);
      } else {
        load<kVec>(xs + col, v);
      }
    };
    float mean, var;
    if constexpr (S::kRms) {
      mean = 0.f;
      var = row_total(first_sum) / static_cast<float>(p.N);
    } else {
      mean = row_total(first_sum) / static_cast<float>(p.N);
      float sq = 0.f;
#pragma unroll 4
      for (i64 col = static_cast<i64>(t) * kVec; col < n; col += static_cast<i64>(kThreads) * kVec) {
        float v[kVec];
        row_at(col, v);
#pragma unroll
        for (int k = 0; k < kVec; ++k) sq += (v[k] - mean) * (v[k] - mean);
      }
      var = row_total(sq) / static_cast<float>(p.N);
    }
    const RowAffine a = row_affine<S>(p, row, mean, var, t == 0 && rank == 0);
    const float scale = a.scale, shift = a.shift;

    // 3. Output.
    // Weight and bias (L2) for kBatch accesses are loaded before any of
    // their y is stored: the stores may alias them, so the compiler would
    // otherwise wait for each access's loads after the previous one's store.
    // Fewer at high occupancy (registers; more warps hide the latency).
    Y* out_row = y + row * p.y_stride;
    constexpr int kRegs = 65536 / (fwd_smem_ctas_per_sm<S>() * kThreads);  // per thread
    constexpr int kBatch = kRegs >= 128 ? 4 : kRegs >= 64 ? 2 : 1;
    constexpr i64 kStride = static_cast<i64>(kThreads) * kVec;
    for (i64 base = static_cast<i64>(t) * kVec; base < n; base += kBatch * kStride) {
      smem::Raw<W, kVec> w[kBatch], b[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const i64 col = base + u * kStride;
        if (col < n) {
          if constexpr (S::kHasWeight) w[u].load(weight + col);
          if constexpr (S::kHasBias) b[u].load(bias + col);
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const i64 col = base + u * kStride;
        if (col < n) {
          float v[kVec];
          row_at(col, v);
          normalize_store_vec<S>(out_row + col, w[u], b[u], v, mean, scale, shift);
        }
      }
    }
    __syncthreads();  // the slab is read before the next row's copies overwrite it
  }
  if constexpr (S::kCluster > 1) cluster_barrier();  // no CTA leaves while another may still read its slots
}

}  // namespace lntune
