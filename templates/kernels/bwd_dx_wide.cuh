// lntune/kernels/bwd_dx_wide.cuh — the backward of both norms for wide rows
// (sm_90+): dx fused with partial dW/dB over a column-sliced persistent grid
// of clusters, the rows staged in shared memory by bulk copies.
//
// Grid: G clusters of C CTAs. Cluster g owns rows g, g + G, g + 2G, ...; CTA
// r of every cluster owns the fixed column slab [r * SLAB, (r + 1) * SLAB) for
// the whole kernel. So a thread owns the same columns of every row it sees:
// its dW/dB partial sums stay in registers from the first row to the last and
// are written once, as the cluster's partial row (G partial rows in all; the
// bwd_dwdb reduction sums them in a fixed order). Nothing crosses global
// memory per row but x, dy (and dz) in and dx out.
//
// Rows are staged: a ring of STAGES slots in shared memory, each holding the
// slab of one row's x and dy (and, with a residual where it fits, dz:
// STAGE_DZ, gen::wide_stages_dz; read from L2 into registers before, the
// fused 16-bit backward ran 15 points under the plain one: add + LayerNorm
// bf16 N = 16384 82.7 -> 98.2% of copy, bench/results/s46 call 2), filled
// by cp.async.bulk (the TMA copy engine)
// and tracked by one mbarrier per slot (transaction bytes). Thread 0 issues
// a row's copies as soon as its slot is free, STAGES rows ahead, so DRAM
// keeps STAGES - 1 rows' slabs in flight while the SM reduces and writes the
// current one. The two row sums (c1 = sum xhat w dy, c2 = sum w dy) cross the
// cluster without a cluster barrier: each CTA pushes its parts into every
// CTA's shared memory with st.async, counted on the receiver's mbarrier, as
// soon as it has them (four buffers of parts), and every CTA adds the parts
// in a fixed order. (barrier.cluster.arrive.release compiles to MEMBAR.ALL.GPU:
// a wait for every store in flight, per row.) With 3 stages or more, a CTA
// forms row i + 1's local sums before it waits for row i's parts: the
// exchange hides behind that work.
//
// Per row and thread: pass A reads x, dy (and w, staged once) from shared
// memory and forms the local sums; pass B, once the cluster's sums are in,
// reads them again, writes dx and adds dy * xhat and dy into the dW/dB
// registers. Shared memory, not registers, holds the row: the register file
// holds only the accumulators.
//
// Deterministic: each dW/dB element has one owner thread, which visits its
// cluster's rows in order; row sums are reduced in a fixed order (lanes by a
// butterfly, warps in index order, CTAs in rank order or by a butterfly over
// lanes: kLaneSums). No atomics.
//
// Where shared memory cannot hold every stage of x and dy (fp32 rows of 256K
// columns, whose slab of x and dy is 128 KB at clusters of 16), only x's
// stages and the weight slab are kept (STAGE_DY false): thread 0 then asks
// the copy engine to prefetch the row's dy slab into L2
// (cp.async.bulk.prefetch.L2) when it issues the row's x, and both passes
// read dy from global memory, the second time from L2. With L2 cache
// policies (x's copy evict_first, dy's prefetch and pass A's read
// evict_last, pass B's read evict_first) the kernel reads 1.12 GB of DRAM at
// fp32 N = 262144, x = 512 MiB (the bytes of x and dy), against 1.43 GB
// without: 72% of copy, 69% without (bench/results/h100_2026-11-25, call 6).
// Asking the next row's x and dy into L2 a row earlier doubled the DRAM
// reads instead (2.30 GB, 52%; call 5). The generator stages dy wherever it
// fits (gen::wide_stages_dy).
//
// Bulk copies need 16-byte aligned rows and slabs: 16-byte accesses (VEC *
// sizeof(R) and VEC * sizeof(Y) at least 16), which the generator checks
// against the call's vector width.
#pragma once

#include "lntune/common.cuh"
#include "lntune/kernels/bwd_dx.cuh"  // add_dz, prefetch_dz_row

namespace lntune {

// The compile-time shape of a wide backward. SLAB columns per CTA, CLUSTER
// CTAs per row (2 to 16: 16 is a non-portable cluster size, which the
// launcher opts into), STAGES staged rows per CTA. The variant parameters are
// RowShape's.
template <class RowT, class WeightT, int SLAB, int NUM_WARPS, int STAGES, int VEC, bool HAS_WEIGHT, bool HAS_BIAS,
          int CLUSTER, int NORM = kLayerNorm, class ResidT = void, bool ZERO_CENTERED = false, class OutT = RowT,
          bool STAGE_DY = true, bool STAGE_DZ = false>
struct WideShape {
  using T = RowT;
  using W = WeightT;
  static constexpr bool kResidual = !is_void_t<ResidT>::value;
  using R = typename pick<kResidual, ResidT, RowT>::type;  // the row read: z, or x
  using Y = OutT;                                          // dy
  static constexpr bool kRms = NORM == kRmsNorm;
  static constexpr bool kZeroCentered = ZERO_CENTERED;
  static constexpr int kSlab = SLAB;
  static constexpr int kWarps = NUM_WARPS;
  static constexpr int kThreads = 32 * NUM_WARPS;
  static constexpr int kStages = STAGES;
  static constexpr int kVec = VEC;
  static constexpr int kAccesses = SLAB / (kThreads * VEC);  // accesses per thread per row
  static constexpr bool kHasWeight = HAS_WEIGHT;
  static constexpr bool kHasBias = HAS_BIAS;
  static constexpr int kCluster = CLUSTER;
  static constexpr bool kFusedXhat = sizeof(RowT) == 2;  // as RowShape
  static constexpr bool kStageDy = STAGE_DY;  // else dy is read from global memory (via L2)
  static constexpr bool kStageDz = STAGE_DZ;  // the fused backward's dz staged with x and dy (stage_dz)

  // Dynamic shared memory, in bytes: the stages (x slab, then dy slab where
  // staged, then dz slab where staged), the weight slab, then one mbarrier
  // per stage. The launcher passes kSmemBytes (gen::dynamic_smem_bytes
  // computes the same figure on the host).
  static constexpr unsigned kXBytes = static_cast<unsigned>(SLAB * sizeof(R));
  static constexpr unsigned kDyBytes = kStageDy ? static_cast<unsigned>(SLAB * sizeof(Y)) : 0u;
  static constexpr unsigned kStageBytes = kXBytes + kDyBytes + (kStageDz ? kXBytes : 0u);
  // The weight slab's 16-byte pieces an access spans: 2 for an fp32 weight
  // beside 16-bit rows (8 columns an access), else 1 (see stage_weight).
  static constexpr int kWPieces = VEC * sizeof(WeightT) > 16 ? static_cast<int>(VEC * sizeof(WeightT) / 16) : 1;
  static constexpr unsigned kWeightOffset = STAGES * kStageBytes;
  static constexpr unsigned kBarrierOffset = kWeightOffset + (HAS_WEIGHT ? static_cast<unsigned>(SLAB * sizeof(W)) : 0u);
  static constexpr unsigned kSmemBytes = kBarrierOffset + 8u * STAGES;

  // Any count of warps (session 46: slabs of other than a power of two of
  // threads, e.g. 9216 columns as two slabs of 4608 in 9 warps): nothing
  // below takes the warps as a power of two (the warps' sums are added in
  // index order).
  static_assert(NUM_WARPS >= 1 && NUM_WARPS <= 32, "num_warps: 1 to 32");
  static_assert(kAccesses >= 1 && kAccesses * kThreads * VEC == SLAB, "slab is a multiple of threads * vec");
  static_assert(VEC * sizeof(R) >= 16 && VEC * sizeof(Y) >= 16 && VEC * sizeof(RowT) <= 16,
                "vec: 16-byte accesses of x (z) and dy (bulk copies need 16-byte aligned rows)");
  static_assert(CLUSTER >= 2 && CLUSTER <= 16, "cluster: 2 to 16 CTAs (any count: the row's slabs, the last partial)");
  static_assert(STAGES >= 2 && STAGES <= 8, "stages: 2 to 8 staged rows");
  static_assert(NORM == kLayerNorm || NORM == kRmsNorm, "norm: kLayerNorm or kRmsNorm");
  static_assert(!ZERO_CENTERED || HAS_WEIGHT, "zero-centred gamma needs a weight");
  static_assert(!STAGE_DZ || (kResidual && STAGE_DY), "dz is staged only with a residual, beside dy");
};

// ---------------------------------------------- mbarriers and bulk copies
// (PTX ISA 8.0, sm_90: mbarrier with transaction counts, cp.async.bulk.)

__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}

// Makes the initialised barriers visible to the copy engine (async proxy).
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Arrives (the barrier's one expected arrival) and expects `bytes` more
// transaction bytes before the phase completes.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}

// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  const unsigned addr = shared_address(bar);
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  }
}

// Orders this CTA's earlier shared-memory accesses (generic proxy) before
// later bulk copies into the same bytes (async proxy).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from
// global to this CTA's shared memory; completion counts on `bar`.
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}
// The same with an L2 policy.
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, unsigned bytes, unsigned long long* bar,
                                              unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
          shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(bar)), "l"(policy)
      : "memory");
}

// Writes the pair (a, b) to `local`'s offset in CTA `rank`'s shared memory
// and counts its 8 bytes on that CTA's mbarrier at `bar`'s offset
// (st.async: no fence, no cluster barrier; the receiver waits on its
// mbarrier). `local` 8-byte aligned.
__device__ __forceinline__ void push_pair(const float* local, const unsigned long long* bar, unsigned rank, float a,
                                          float b) {
  unsigned addr, remote_bar;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(addr) : "r"(shared_address(local)), "r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_bar) : "r"(shared_address(bar)), "r"(rank));
  push_pair_remote(addr, a, b, remote_bar);
}

// ------------------------------------------------------------------ kernel

// The rows of cluster `first`, `first + step`, ...: row i of them.
struct WideRows {
  i64 first, step, count;
  __device__ __forceinline__ i64 row(i64 i) const { return first + i * step; }
};

template <class S>
__device__ __forceinline__ typename S::R* stage_x(unsigned char* smem, int s) {
  return reinterpret_cast<typename S::R*>(smem + static_cast<unsigned>(s) * S::kStageBytes);
}
template <class S>
__device__ __forceinline__ typename S::Y* stage_dy(unsigned char* smem, int s) {
  return reinterpret_cast<typename S::Y*>(smem + static_cast<unsigned>(s) * S::kStageBytes + S::kXBytes);
}
// The fused backward's dz slab of stage s (z's dtype; where kStageDz).
template <class S>
__device__ __forceinline__ typename S::R* stage_dz(unsigned char* smem, int s) {
  return reinterpret_cast<typename S::R*>(smem + static_cast<unsigned>(s) * S::kStageBytes + S::kXBytes + S::kDyBytes);
}

// This CTA's slab of row `row` of dy in global memory (bulk-copied or prefetched
// from there; read there where dy is not staged).
template <class S>
__device__ __forceinline__ const typename S::Y* global_dy(const BwdParams& p, i64 row, i64 c0) {
  return static_cast<const typename S::Y*>(p.dy) + row * p.dy_stride + c0;
}

// Where dy is not staged (only 2 stages of x fit), row i + 2's x is copied
// in two halves: the first as soon as pass B of row i has read the first
// half of its slot (the first kAccesses / 2 accesses of every thread), the
// second once it has read all of it. fp32 N = 262144 (H100,
// bench/results/h100_2026-11-25): LayerNorm 73.3% of copy, RMSNorm 76.6%
// (one copy: 72.1%, 72.9%; call 11); a part per access, each after a
// barrier, measured 72.6% and 74.7% (call 12).
// Not with a residual: there it measured no faster (fp32 add + norm, 66-68%
// of copy either way; calls 6 and 11), and at 32 warps its second issue
// point spilled.
template <class S>
constexpr bool split_copy() {
  return !S::kStageDy && !S::kResidual && S::kAccesses >= 2;
}
// Columns of the first half.
template <class S>
constexpr int split_columns() {
  return S::kAccesses / 2 * S::kThreads * S::kVec;
}

// The fused backward's dz where dy is not staged and dz is fp32 (fp32 rows
// of 256K columns): the copy engine prefetches the row's dz slab into L2
// beside dy (evict_last), and pass B reads it with evict_first. The
// threads' own prefetch a row earlier, without a policy, was evicted before
// pass B read it (fp32 add + LayerNorm at N = 262144: 2.19 GB of DRAM reads
// against 1.6 GB of z, dy and dz). At x = 512 MiB, % of copy, main against
// this (bench/results/s32): H100, with the row's dz pointer held across
// pass B (call 1), add + LayerNorm 68.7 -> 74.2, add + RMSNorm 72.1 ->
// 77.8; H200, this form (the pointer formed per access: held, it spilled
// at 32 warps; call 2), 65.5 -> 68.9 and 68.2 -> 70.3. Elsewhere (16-bit
// dz) the threads prefetch dz as before: there the copy engine's prefetch
// cost a spill at 16 warps, and it was not measured.
template <class S>
constexpr bool bulk_dz() {
  return S::kResidual && !S::kStageDy && sizeof(typename S::R) == 4 && S::kVec == 4;
}

// Whether pass B writes dx (and dresidual) whole: one 16-byte store an
// access (store_global; the compiler split store()'s into 4-byte stores
// here), but for RMSNorm + add of fp32 rows with dz through L2 (bulk_dz;
// 256K columns, 32 warps), which measured faster with store()'s: 78.0 /
// 78.9% of copy against 74.5 / 74.7, where LayerNorm + add measured 72.3 /
// 72.2 against 78.8 / 79.0 and RMSNorm 64.5 / 63.7 against 79.3 / 79.4
// (bench/results/s47, call 7).
template <class S>
constexpr bool whole_stores() {
  return !(bulk_dz<S>() && S::kRms);
}

// Thread 0: row i's slab of x and dy into stage i % kStages (x only, and
// dy's into L2, where dy is not staged). PART: 0 the first half of x (and
// every expected byte, and dy's prefetch), 1 the second half (split_copy),
// -1 all of it.
template <class S, int PART = -1>
__device__ __forceinline__ void issue_row(const BwdParams& p, unsigned char* smem, unsigned long long* bars,
                                          const WideRows& rows, i64 i, i64 c0, i64 n) {
  const int s = static_cast<int>(i % S::kStages);
  const i64 row = rows.row(i);
  const unsigned x_bytes = static_cast<unsigned>(n * static_cast<i64>(sizeof(typename S::R)));
  const unsigned dy_bytes = static_cast<unsigned>(n * static_cast<i64>(sizeof(typename S::Y)));
  const typename S::Y* dy = global_dy<S>(p, row, c0);
  const typename S::R* x = static_cast<const typename S::R*>(p.x) + row * p.x_stride + c0;
  fence_proxy_async();  // the slot's part was read (generic proxy) before the copy into it
  if constexpr (S::kStageDy) {
    // dz (z's dtype: x_bytes) where staged and given.
    const bool dz = S::kStageDz && p.dz != nullptr;
    mbarrier_arrive_expect_tx(bars + s, x_bytes + dy_bytes + (dz ? x_bytes : 0u));
    bulk_copy_g2s(stage_x<S>(smem, s), x, x_bytes, bars + s);
    bulk_copy_g2s(stage_dy<S>(smem, s), dy, dy_bytes, bars + s);
    if (dz)
      bulk_copy_g2s(stage_dz<S>(smem, s), static_cast<const typename S::R*>(p.dz) + row * p.dz_stride + c0, x_bytes,
                    bars + s);
  } else {
    // dy is read twice through L2 (kept there: evict_last, until pass B's
    // last read); x once (evict_first).
    const i64 half = n < split_columns<S>() ? n : split_columns<S>();
    const unsigned first = PART == -1 ? x_bytes : static_cast<unsigned>(half * static_cast<i64>(sizeof(typename S::R)));
    if constexpr (PART <= 0) {
      mbarrier_arrive_expect_tx(bars + s, x_bytes);
      bulk_copy_g2s(stage_x<S>(smem, s), x, first, bars + s, l2_evict_first());
      bulk_prefetch_l2(dy, dy_bytes, l2_evict_last());
      if constexpr (bulk_dz<S>())  // the fused backward's dz, read once, in pass B
        if (p.dz) bulk_prefetch_l2(static_cast<const typename S::R*>(p.dz) + row * p.dz_stride + c0, x_bytes, l2_evict_last());
    } else if (x_bytes > first) {
      bulk_copy_g2s(stage_x<S>(smem, s) + half, x + half, x_bytes - first, bars + s, l2_evict_first());
    }
  }
}

// This thread's access at `col` of the staged row's dy: from the stage, or
// from `dy` in global memory where it is not staged. LAST: pass B's read,
// dy's last (where dy is not staged, fp32: read with evict_first, pass A's
// with evict_last).
template <class S, bool LAST = false>
__device__ __forceinline__ void read_dy(const unsigned char* smem, int s, const typename S::Y* dy, int col,
                                        float (&g)[S::kVec]) {
  if constexpr (S::kStageDy) {
    load<S::kVec>(stage_dy<S>(const_cast<unsigned char*>(smem), s) + col, g);
  } else if constexpr (sizeof(typename S::Y) == 4 && S::kVec == 4) {
    load4(reinterpret_cast<const float*>(dy + col), g, LAST ? l2_evict_first() : l2_evict_last());
  } else {
    load<S::kVec>(dy + col, g);
  }
}

// The weight slab in shared memory, staged once by every thread: piece p
// (of S::kWPieces, 16 bytes each) of access group g (kVec columns) at
// 16 (p * kSlab / kVec + g) bytes, so that each 16-byte load of a warp's
// accesses reads contiguous bytes. (An fp32 weight beside 16-bit rows, 32
// bytes an access in column order, was read as two loads at a 32-byte
// stride: two shared-memory wavefronts a quarter warp each.)
template <class S>
__device__ __forceinline__ void stage_weight(const BwdParams& p, unsigned char* smem, i64 c0, i64 n, int t) {
  using Chunk = Pack<unsigned, 4>;
  const i64 chunks = n * static_cast<i64>(sizeof(typename S::W)) / 16;  // n: a multiple of kVec (16-byte accesses)
  const Chunk* src = reinterpret_cast<const Chunk*>(static_cast<const typename S::W*>(p.weight) + c0);
  Chunk* dst = reinterpret_cast<Chunk*>(smem + S::kWeightOffset);
  for (i64 q = t; q < chunks; q += S::kThreads)
    dst[q % S::kWPieces * (S::kSlab / S::kVec) + q / S::kWPieces] = src[q];
}

// The weight of the access at `col` (raw, as stored), from stage_weight's layout.
template <class S>
__device__ __forceinline__ void load_weight(const unsigned char* smem, int col, float (&w)[S::kVec]) {
  const auto* base = reinterpret_cast<const typename S::W*>(smem + S::kWeightOffset);
  if constexpr (S::kWPieces == 1) {
    load<S::kVec>(base + col, w);
  } else {
    constexpr int kPer = S::kVec / S::kWPieces;  // columns a piece
    const int g = col / S::kVec;
#pragma unroll
    for (int q = 0; q < S::kWPieces; ++q) {
      float part[kPer];
      load<kPer>(base + (q * (S::kSlab / S::kVec) + g) * kPer, part);
#pragma unroll
      for (int k = 0; k < kPer; ++k) w[q * kPer + k] = part[k];
    }
  }
}

// The same access's x (z) and dy (read_dy; DY false: not dy, which the
// caller read ahead), and the applied weight (1 where there is none).
template <class S, bool LAST = false, bool DY = true>
__device__ __forceinline__ void read_access(const unsigned char* smem, int s, const typename S::Y* dy,
                                            int col, float (&x)[S::kVec], float (&g)[S::kVec],
                                            float (&w)[S::kVec]) {
  load<S::kVec>(stage_x<S>(const_cast<unsigned char*>(smem), s) + col, x);
  if constexpr (DY) read_dy<S, LAST>(smem, s, dy, col, g);
  if constexpr (S::kHasWeight) {
    load_weight<S>(smem, col, w);
#pragma unroll
    for (int k = 0; k < S::kVec; ++k) w[k] = applied_weight<S>(w[k]);
  } else {
#pragma unroll
    for (int k = 0; k < S::kVec; ++k) w[k] = 1.f;
  }
}

// Where dy is not staged it comes through L2, and a load under its access's
// bound (col < n) may not move above it: checked access by access, a pass
// went LDG, that access's arithmetic, the next LDG, one L2 round trip after
// another (SASS of fp32 N = 262144; ncu's main stall, long scoreboard,
// bench/results/h100_2026-11-25, call 6). There every access reads a valid
// address instead (past n, the slab's last access: its values unused), so
// no load waits on a bound (clamped_dy), and pass B loads dy in groups
// ahead of its accesses (dy_ahead_b). With a residual, pass A's clamping
// only, and at 32 warps only: elsewhere the loads in flight spilled (16
// warps: 4-24 bytes; pass B's groups with dz beside them: 32-276).
template <class S>
constexpr bool clamped_dy() {
  return !S::kStageDy && (!S::kResidual || S::kThreads > 512);
}
template <class S>
constexpr bool dy_ahead_b() {
  return !S::kStageDy && !S::kResidual;
}
// The access read for `col`: itself, or where clamped_dy and past n, the
// slab's last (n is a multiple of kVec: 16-byte accesses).
template <class S>
__device__ __forceinline__ int read_column(int col, i64 n) {
  return !clamped_dy<S>() || col < n ? col : static_cast<int>(n) - S::kVec;
}

// One access of the fused backward's dz, in pass B (its only read): with
// evict_first where the copy engine prefetched it into L2 (bulk_dz), ordered
// against the thread's stores (dx or dresidual may be written over dz).
template <class S>
__device__ __forceinline__ void wide_load_dz(const typename S::R* src, float (&d)[S::kVec]) {
  if constexpr (bulk_dz<S>()) {
    load4<true>(reinterpret_cast<const float*>(src), d, l2_evict_first());
  } else {
    load<S::kVec>(src, d);
  }
}

// dx += dz for the access at column `col` of row `row`: add_dz
// (bwd_dx.cuh), or with wide_load_dz's read where bulk_dz.
template <class S>
__device__ __forceinline__ void wide_add_dz(const BwdParams& p, i64 row, i64 col, float (&out)[S::kVec]) {
  if constexpr (!bulk_dz<S>()) {
    add_dz<S>(p, row, col, out);
  } else if (p.dz) {
    float d[S::kVec];
    wide_load_dz<S>(static_cast<const typename S::R*>(p.dz) + row * p.dz_stride + col, d);
#pragma unroll
    for (int k = 0; k < S::kVec; ++k) out[k] += d[k];
  }
}

template <class S>
__device__ __forceinline__ float wide_xhat(float x, float mean, float rstd, float shift) {
  return S::kFusedXhat ? fmaf(x, rstd, shift) : (x - mean) * rstd;
}

// Whether the passes run unguarded where the CTA's slab is full (n == SLAB):
// no bounds check an access, so the compiler moves the next access's loads
// above this one's arithmetic. Where measured faster: 16-bit rows, x and dy
// staged, slabs of up to 8192 columns (the configs of two CTAs a SM), plain
// LayerNorm and the fused add without a bias (RMSNorm). An H200 at x = 512
// MiB, A/B, two rounds, % of copy (bench/results/s38, calls 6 and 7):
// LayerNorm bf16 N = 12288 83.0 -> 88.7, 16384 86.9 -> 90.1, 32768 86.5 ->
// 90.2, 65536 86.3 -> 90.3, fp16 65536 86.0 -> 89.8; add + RMSNorm bf16
// 16384 85.9 -> 95.8, 32768 83.9 -> 86.9. Not add + LayerNorm, whose bias
// accumulators beside dW's and the preloaded dz fill the 128 registers two
// CTAs a SM leave (16384: 82.3 -> 81.3 in call 6, 81.9 -> 80.3 in call 7;
// 65536 81.6 -> 81.1). Slower elsewhere: RMSNorm bf16 65536 88.4 -> 86.3
// (16384 level), the 16384-column slabs at one CTA a SM (LayerNorm bf16
// 131072 82.5 -> 79.9, 262144 73.0 -> 70.7; RMSNorm 262144 77.9 -> 75.3),
// fp32 rows of 256K columns with x alone staged 67.5 -> 54.3 (fp32 16384
// and 65536 level).
template <class S>
constexpr bool wide_unguarded() {
  return S::kStageDy && sizeof(typename S::T) == 2 && S::kSlab <= 8192 && (S::kResidual ? !S::kHasBias : !S::kRms);
}

// Pass A for staged row i: this CTA's parts of c1 = sum xhat w dy and
// c2 = sum w dy (the same bits in thread 0 whatever the timing: lanes by a
// butterfly, warps in index order). Every thread calls it; thread 0 gets the
// CTA's sums. `scratch` holds 2 * kWarps floats, not touched again until
// the CTA has passed another __syncthreads.
// FULL: the CTA's slab is full (n == kSlab), so every access is in bounds and
// none is guarded (wide_unguarded; see layer_norm_bwd_dx_wide).
template <class S, bool FULL = false>
__device__ __forceinline__ void wide_row_sums(const unsigned char* smem, int s, const typename S::Y* dy,
                                              int t, i64 n, float mean, float rstd, float* scratch, float& a,
                                              float& b) {
  const float shift = -mean * rstd;
  float s_xw = 0.f, s_w = 0.f;
#pragma unroll
  for (int j = 0; j < S::kAccesses; ++j) {
    const int col = (j * S::kThreads + t) * S::kVec;
    const bool in = FULL || col < n;
    if (!clamped_dy<S>() && !in) continue;
    float x[S::kVec], g[S::kVec], w[S::kVec];
    read_access<S>(smem, s, dy, read_column<S>(col, n), x, g, w);
#pragma unroll
    for (int k = 0; k < S::kVec; ++k) {
      const float wdy = w[k] * g[k];
      const float xw = wide_xhat<S>(x[k], mean, rstd, shift) * wdy;
      s_xw = in ? s_xw + xw : s_xw;
      if constexpr (!S::kRms) s_w = in ? s_w + wdy : s_w;  // RMSNorm has no c2
    }
  }
  s_xw = segment_sum<32>(s_xw);
  s_w = segment_sum<32>(s_w);
  const int warp = t / 32;
  if ((t & 31) == 0) {
    scratch[warp] = s_xw;
    scratch[S::kWarps + warp] = s_w;
  }
  __syncthreads();
  a = b = 0.f;
  if (t == 0) {
#pragma unroll
    for (int q = 0; q < S::kWarps; ++q) {
      a += scratch[q];
      b += scratch[S::kWarps + q];
    }
  }
}

template <class S>
__device__ __forceinline__ void layer_norm_bwd_dx_wide(const BwdParams& p) {
  allow_dependent_grids();  // bwd_dwdb may take SMs as this grid's CTAs leave (it waits for the whole grid)
  using T = typename S::T;
  using W = typename S::W;
  // The dW/dB reduction that follows counts its arrivals from zero.
  if (p.counters && blockIdx.x == 0)
    for (i64 i = threadIdx.x; i < p.num_counters; i += S::kThreads) p.counters[i] = 0;
  extern __shared__ __align__(128) unsigned char smem[];
  // The launcher sizes shared memory from the instance (gen::dynamic_smem_bytes);
  // a mismatch is a bug, never silent corruption.
  if (dynamic_smem_size() < S::kSmemBytes) __trap();
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(smem + S::kBarrierOffset);
  __shared__ float scratch[2][2 * S::kWarps];  // warp sums, by row parity
  // Every CTA's (c1, c2) parts of row i, in sums[i % 4], pushed by their
  // owners (push_pair) and counted on sums_bar[i % 4]: 8 * kCluster bytes a
  // row. Four buffers let a CTA push a row's parts as soon as it has them
  // (`push`), as fwd_wide.cuh does.
  constexpr int kBuffers = 4;
  __shared__ __align__(8) float sums[kBuffers][S::kCluster][2];
  __shared__ unsigned long long sums_bar[kBuffers];
  __shared__ float row_stats[kBuffers][2];  // row i's mean and rstd in [i % 4]

  const int t = static_cast<int>(threadIdx.x);
  const unsigned rank = cluster_rank();
  const i64 c0 = static_cast<i64>(rank) * S::kSlab;         // this CTA's first column
  const i64 n = p.N - c0 < S::kSlab ? p.N - c0 : S::kSlab;  // its columns (the generator keeps it >= 1)
  const bool full = wide_unguarded<S>() && n == S::kSlab;  // every access in bounds: the unguarded passes
  const i64 cluster = cluster_index(), clusters = cluster_count();
  const WideRows rows{cluster, clusters, cluster < p.M ? (p.M - 1 - cluster) / clusters + 1 : 0};
  const float inv_n = 1.0f / static_cast<float>(p.N);
  // Row i's mean and rstd, into row_stats[i % 4] (at N = 1, rstd is taken
  // as 0 so that dx and dW are exactly 0, as in bwd_dx.cuh; LayerNorm only;
  // RMSNorm's mean stays 0). Thread 0 loads them by cp.async a row before
  // their pass A (an exposed load a row cost bf16 N = 65536 6% of copy, and
  // registers holding them a row ahead spilled at 32 warps); they are
  // waited for before the barrier that ends the previous row's pass B.
  const auto load_stats = [&](i64 i) {
    const int q = static_cast<int>(i % kBuffers);
    const i64 row = rows.row(i);
    if constexpr (!S::kRms) copy_async<4>(shared_address(&row_stats[q][0]), p.mean + row);
    if (!S::kRms && inv_n == 1.f) {
      row_stats[q][1] = 0.f;
    } else {
      copy_async<4>(shared_address(&row_stats[q][1]), p.rstd + row);
    }
  };

  if (t == 0) {
    for (int s = 0; s < S::kStages; ++s) mbarrier_init(bars + s, 1);
    for (int q = 0; q < kBuffers; ++q) mbarrier_init(sums_bar + q, 1);
    mbarrier_init_fence();
  }
  // The weight slab, once (raw, in W: applied when read).
  if constexpr (S::kHasWeight) stage_weight<S>(p, smem, c0, n, t);
  if (t == 0) {
    for (int q = 0; q < kBuffers; ++q) row_stats[q][0] = 0.f;  // RMSNorm's mean
    for (i64 i = 0; i < 2 && i < rows.count; ++i) load_stats(i);
    copy_async_wait_all();
  }
  __syncthreads();  // barriers initialised, weights and rows 0 and 1's statistics in place
  // sums_bar armed for rows 0 and 1, where they exist (a phase is armed only
  // when it will complete and be waited on), once its initialisation is
  // visible to the CTA; push(i) arms row i + 2's.
  if (t == 0)
    for (int q = 0; q < 2; ++q)
      if (q < rows.count) mbarrier_arrive_expect_tx(sums_bar + q, 8u * S::kCluster);
  // Every CTA of the cluster has started, initialised and armed its barriers
  // before any CTA pushes sums to it. (The only cluster barriers: here and at
  // exit.)
  cluster_barrier();
  if (t == 0 && n > 0)
    for (i64 i = 0; i < S::kStages && i < rows.count; ++i) issue_row<S>(p, smem, bars, rows, i, c0, n);

  float dw[S::kAccesses][S::kVec];
  float db[S::kAccesses][S::kVec];
#pragma unroll
  for (int j = 0; j < S::kAccesses; ++j)
#pragma unroll
    for (int k = 0; k < S::kVec; ++k) {
      if constexpr (S::kHasWeight) dw[j][k] = 0.f;
      if constexpr (S::kHasBias) db[j][k] = 0.f;
    }

  // Thread 0: row i's parts to every CTA of the cluster (sums[i % 4][rank]),
  // after arming row i + 2's phase here. Four buffers make pushing before
  // this CTA has gathered row i - 1 safe (fwd_wide.cuh's `push` has the
  // argument: a CTA pushes row k only after it gathered row k - 2, and this
  // CTA's pass A of row k - 2, whose barrier every thread passes only after
  // gathering row k - 4, precedes its push of row k - 2).
  const auto push = [&](i64 i, float a, float b) {
    const int q = static_cast<int>(i % kBuffers);
    if (i + 2 < rows.count) mbarrier_arrive_expect_tx(sums_bar + (i + 2) % kBuffers, 8u * S::kCluster);
#pragma unroll 1  // one thread; unrolled, the 16-bit instances of 32 warps and 4 stages spilled
    for (int r = 0; r < S::kCluster; ++r) push_pair(sums[q][rank], sums_bar + q, static_cast<unsigned>(r), a, b);
  };
  // Pass A of row i (the next whose sums come), pushed at once.
  const auto sums_push = [&](i64 i) {
    const float mean = row_stats[i % kBuffers][0], rstd = row_stats[i % kBuffers][1];
    // The fused backward's dz is read in pass B: from its stage (STAGE_DZ),
    // else straight from global memory, prefetched into L2 here (a hint; no
    // value depends on it) or by the copy engine in issue_row (bulk_dz).
    if constexpr (!bulk_dz<S>() && !S::kStageDz) prefetch_dz_row<S>(p, rows.row(i), c0, n, t, S::kThreads, S::kAccesses);
    const int s = static_cast<int>(i % S::kStages);
    if (n > 0) mbarrier_wait(bars + s, static_cast<unsigned>((i / S::kStages) & 1));
    float a, b;
    if (full)
      wide_row_sums<S, true>(smem, s, global_dy<S>(p, rows.row(i), c0), t, n, mean, rstd, scratch[i & 1], a, b);
    else
      wide_row_sums<S>(smem, s, global_dy<S>(p, rows.row(i), c0), t, n, mean, rstd, scratch[i & 1], a, b);
    if (t == 0) push(i, a, b);
  };

  // With 3 stages or more, a CTA forms row i + 1's local sums before it
  // waits for the cluster's row i (the exchange hides behind that work, and
  // the copies of rows i + 2 on stay in flight). With 2, row i + 1's copies
  // are issued only once row i - 1 is written, and waiting for them before
  // row i's pass B leaves no row of x in flight: there each row's pass A
  // comes just before its exchange (fp32 N = 65536, 8192-column slabs in
  // clusters of 8: 97.9% of copy; bench/results/h100_2026-11-25, call 2),
  // except where dy is not staged: its pass A reads dy from global memory,
  // and without the lookahead fp32 rows of 256K columns fell from 69% to
  // 47-57% (call 2).
  // (With a residual at 32 warps, the path without the lookahead spilled:
  // those keep it, as every instance did before.)
  constexpr bool kLookahead = S::kStages >= 3 || !S::kStageDy || (S::kResidual && S::kThreads > 512);
  // The cluster's c1 and c2 by lanes (below) where measured faster: clusters
  // of 16 with 3 stages or more. On an H200 at x = 512 MiB, % of copy, rank
  // order -> lanes, A/B, two rounds (bench/results/s39, call 12): LayerNorm
  // fp16 N = 262144 (3 stages) 73.1 / 72.7 -> 79.7 / 79.9; bf16 65536
  // (clusters of 8, 3 stages) level, 89.4 / 88.6 -> 89.3 / 88.7; slower at 2
  // stages (bf16 262144 73.0 / 72.7 -> 67.4 / 67.0). The fused add's 16-bit
  // LayerNorm rows too (bench/results/s40, calls 1-2: bf16 262144 76.1 /
  // 76.4 -> 76.7 / 77.0, fp16 77.8 / 77.3 -> 78.5 / 78.2); RMSNorm keeps the
  // rank order (bf16 262144 77.9 / 78.0 -> 74.0 / 74.3 with the lanes), as do
  // fp32 rows (not measured at 3 stages).
  constexpr bool kLaneSums = S::kCluster > 8 && S::kStages >= 3 && sizeof(typename S::T) == 2 && !S::kRms;
  constexpr int kLaneGroup = 16;  // lanes past the cluster's ranks add 0
  if (kLookahead && rows.count > 0) sums_push(0);
  for (i64 i = 0; i < rows.count; ++i) {
    const int s = static_cast<int>(i % S::kStages);
    const int q = static_cast<int>(i % kBuffers);
    // The statistics of the row whose pass A comes next iteration: their
    // slot's previous row (i - 2) was last read before the barriers of the
    // passes since.
    if (t == 0 && i + 2 < rows.count) load_stats(i + 2);
    if (!kLookahead) {
      sums_push(i);
    } else if (i + 1 < rows.count) {
      sums_push(i + 1);
    }
    // Where dy_ahead_b: pass B's dy loaded in groups ahead of their accesses
    // (a load would otherwise wait for the previous access's dx store, which
    // may alias it): every access up to 16 warps, half of them at 32.
    constexpr int kAheadGroup = S::kThreads > 512 && S::kAccesses >= 2 ? S::kAccesses / 2 : S::kAccesses;
    float dy_ahead[dy_ahead_b<S>() ? S::kAccesses : 1][S::kVec];
    // Row i's parts from every CTA of the cluster.
    mbarrier_wait(sums_bar + q, static_cast<unsigned>((i / kBuffers) & 1));
    // c1, c2 over the cluster, in a fixed order: where kLaneSums, lane r of
    // each kCluster lanes takes rank r's parts and the sums are a butterfly
    // over those lanes (the same bits in every lane, warp and CTA; as
    // fwd_wide.cuh's gather), else every thread adds them in rank order.
    float s_xw = 0.f, s_w = 0.f;
    if constexpr (kLaneSums) {
      const int r = t & (kLaneGroup - 1);
      s_xw = segment_sum<kLaneGroup>(r < S::kCluster ? sums[q][r][0] : 0.f);
      s_w = segment_sum<kLaneGroup>(r < S::kCluster ? sums[q][r][1] : 0.f);
    } else {
#pragma unroll
      for (int r = 0; r < S::kCluster; ++r) {
        s_xw += sums[q][r][0];
        s_w += sums[q][r][1];
      }
    }
    // dx = rstd * (w dy - (xhat c1 + c2)) = w dy rstd + xhat c1r + c2r
    const float mean = row_stats[q][0], rstd = row_stats[q][1];
    const float c1r = -s_xw * inv_n * rstd;
    const float c2r = S::kRms ? 0.f : -s_w * inv_n * rstd;
    const float shift = -mean * rstd;
    const i64 row = rows.row(i);
    T* dx = static_cast<T*>(p.dx) + row * p.dx_stride + c0;
    const typename S::Y* dy = global_dy<S>(p, row, c0);
    const bool next_row = n > 0 && i + S::kStages < rows.count;  // a row to copy into stage s
    // The fused backward's dz, every access's loaded before any dx is stored
    // (loads after a store that may alias them would wait for it: one L2
    // round trip an access), where the registers allow (up to 16 warps: at
    // 32, a thread's 64 registers spill), and where it is not staged (then
    // read from its stage, copied before any store of the row).
    constexpr bool kPreloadDz = S::kResidual && !S::kStageDz && S::kThreads <= 512;
    float dzv[kPreloadDz ? S::kAccesses : 1][S::kVec];
    if constexpr (kPreloadDz) {
      if (p.dz) {
        const typename S::R* dz = static_cast<const typename S::R*>(p.dz) + row * p.dz_stride + c0;
#pragma unroll
        for (int j = 0; j < S::kAccesses; ++j) {
          const int col = (j * S::kThreads + t) * S::kVec;
          if (full || col < n) wide_load_dz<S>(dz + col, dzv[j]);
        }
      }
    }
    // Pass B, with every access in bounds where the slab is full (kFull,
    // wide_unguarded): no access guarded, so the compiler can move the next
    // access's loads above this one's arithmetic (with a guard an access, each
    // was its own branch: ncu of bf16 N = 16384, bench/results/s38, call 1).
    const auto pass_b = [&](auto full_tag) {
      constexpr bool kFull = decltype(full_tag)::value;
#pragma unroll
      for (int j = 0; j < S::kAccesses; ++j) {
        if constexpr (split_copy<S>()) {
          if (j == S::kAccesses / 2) {
            __syncthreads();  // the first half of stage s is read by every thread
            if (t == 0 && next_row) issue_row<S, 0>(p, smem, bars, rows, i + S::kStages, c0, n);
          }
        }
        const int col = (j * S::kThreads + t) * S::kVec;
        if constexpr (dy_ahead_b<S>()) {
          if (j % kAheadGroup == 0) {
#pragma unroll
            for (int a = j; a < j + kAheadGroup; ++a)
              read_dy<S, true>(smem, s, dy, read_column<S>((a * S::kThreads + t) * S::kVec, n), dy_ahead[a]);
          }
        }
        if (!kFull && col >= n) continue;
        float x[S::kVec], g[S::kVec], w[S::kVec], out[S::kVec];
        read_access<S, true, !dy_ahead_b<S>()>(smem, s, dy, col, x, g, w);
        if constexpr (dy_ahead_b<S>()) {
#pragma unroll
          for (int k = 0; k < S::kVec; ++k) g[k] = dy_ahead[j][k];
        }
#pragma unroll
        for (int k = 0; k < S::kVec; ++k) {
          const float xhat = wide_xhat<S>(x[k], mean, rstd, shift);
          out[k] = fmaf(w[k] * g[k], rstd, fmaf(xhat, c1r, c2r));
          if constexpr (S::kHasWeight) dw[j][k] += g[k] * xhat;
          if constexpr (S::kHasBias) db[j][k] += g[k];
        }
        if constexpr (kPreloadDz) {
          if (p.dz) {
#pragma unroll
            for (int k = 0; k < S::kVec; ++k) out[k] += dzv[j][k];
          }
        } else if constexpr (S::kStageDz) {
          if (p.dz) add_loaded<S::kVec>(stage_dz<S>(smem, s) + col, out);
        } else {
          wide_add_dz<S>(p, row, c0 + col, out);
        }
        if constexpr (whole_stores<S>()) {
          store_global<S::kVec>(dx + col, out);
        } else {
          store<S::kVec>(dx + col, out);
        }
        store_dresidual<S, whole_stores<S>()>(p, row, c0 + col, out);
      }
    };
    if (full)
      pass_b(bool_constant<true>{});
    else
      pass_b(bool_constant<false>{});
    if (t == 0) copy_async_wait_all();  // row i + 2's statistics, for the CTA after the barrier
    __syncthreads();  // stage s is read by every thread
    if (t == 0 && next_row) issue_row<S, split_copy<S>() ? 1 : -1>(p, smem, bars, rows, i + S::kStages, c0, n);
  }
  // No CTA exits while a push to it may be in flight.
  cluster_barrier();

  // The cluster's partial row: this CTA's slab of it.
  const i64 partial_row = cluster;
#pragma unroll
  for (int j = 0; j < S::kAccesses; ++j) {
    const int col = (j * S::kThreads + t) * S::kVec;
    if (col >= n) continue;
    if constexpr (S::kHasWeight) {
      if (p.dw_partial) store_global<S::kVec>(p.dw_partial + partial_row * p.N + c0 + col, dw[j]);
    }
    if constexpr (S::kHasBias) {
      if (p.db_partial) store_global<S::kVec>(p.db_partial + partial_row * p.N + c0 + col, db[j]);
    }
  }
}

}  // namespace lntune
