// lntune/kernels/fwd_wide.cuh — the forward (both norms, every variant) for
// wide rows (sm_90+): a column-sliced persistent grid of clusters, the rows
// staged in shared memory by bulk copies several rows ahead, x read once.
//
// Grid: G clusters of C CTAs (2 to 16). Cluster g owns rows g, g + G, ...;
// CTA r of every cluster owns the fixed column slab [r * SLAB, (r + 1) *
// SLAB) for the whole kernel, so its weight and bias are loaded into
// registers once (fwd_smem.cuh reads them from L2 for every row: as many L2
// bytes again as x's).
//
// Rows are staged as in bwd_dx_wide.cuh: a ring of STAGES slots in shared
// memory, each holding the slab of one row's x (and residual), filled by
// cp.async.bulk and tracked by one mbarrier per slot (transaction bytes).
// Warp 0 issues a row's copies as soon as its slot is free, STAGES rows
// ahead, so DRAM keeps STAGES - 1 rows' slabs in flight while the SM reduces,
// waits for the cluster and writes the current one (fwd_smem.cuh issues a
// row's copies only once the previous row is written: nothing of x is in
// flight while it waits for the cluster). With 3 stages or more, a CTA forms
// row i + 1's slab sums before it waits for row i's exchange, as
// bwd_dx_wide.cuh does.
//
// Per row, one exchange over the cluster (fwd_smem.cuh has two for
// LayerNorm): each CTA takes its slab's sum a_r and, LayerNorm, the sum of
// squared deviations from its own slab mean, b_r = sum (x - a_r / n_r)^2 (two
// passes over shared memory, exact as the CPU reference's; in clusters of 16,
// a full slab's in one pass, each thread's deviations from its first column
// merged by Chan's formula: see kOnePass), and pushes the
// pair (a_r, b_r) into every CTA's shared memory with st.async, counted on the
// receiver's mbarrier (no cluster barrier: see fwd_smem.cuh's kExchangePush),
// as soon as it has them: four buffers of pairs let a CTA run up to two rows
// ahead of the others (`push`), so no CTA waits for an exchange between
// finishing one row and starting the next. (bwd_dx_wide.cuh, with two
// buffers, pushes row i + 1 only once it holds row i's parts: a full round
// trip of the cluster per row.) Every CTA then combines the pairs in a fixed
// pairwise order (the same bits in every CTA): mean = sum a_r / N, and the
// sum of squared deviations from the row's mean M2 = sum (b_r + n_r (a_r /
// n_r - mean)^2) (Chan et al.'s pairwise update, exact in real arithmetic and
// as stable as two passes), with reciprocals, not divisions: with sixteen
// divisions and their slow path there, bf16 LayerNorm rows of 256K columns
// ran at 59% of copy, without them 86% (H100, bench/results/h100_2026-11-24e,
// calls 2-3). RMSNorm: a_r = sum x^2, the mean square is sum a_r / N.
//
// With a residual, the first pass forms z = x + residual (rounded to the
// residual's dtype) in the residual's slot (or, where the residual is not
// staged with x, over x in x's: see FwdWideLayout) and writes it out.
//
// Bulk copies need 16-byte aligned rows and slabs: 16-byte accesses of x
// (and of the residual), which the generator checks against the call's
// vector width.
#pragma once

#include "lntune/kernels/fwd_smem.cuh"

namespace lntune {

// How a wide forward stages the residual (gen::wide_fwd_residual picks it:
// the first whose shared memory fits).
//  * kResidualStaged: with x, in every stage.
//  * kResidualSlot (fp32 rows and residual of 256K columns at 2 stages: the
//    stages of both need 256 KiB at clusters of 16): x's stages and one slot
//    for the residual. Row i + 1's residual is copied into it as soon as every
//    thread has formed row i's z (over x, in x's slot); thread 0 asks the copy
//    engine to prefetch each row's residual into L2 when it issues the row's
//    x, STAGES rows ahead, so that copy reads L2.
//  * kResidualGlobal (3 stages there): x alone staged; the first pass reads
//    the residual from global memory (prefetched into L2 as above) and writes
//    z over x.
// The last two need the residual in x's dtype.
constexpr int kResidualGlobal = 0, kResidualSlot = 1, kResidualStaged = 2;

// Shared memory of a wide forward: STAGES slots (x's slab, 128-byte aligned,
// then the residual's where it is staged with x; each slot 128-byte aligned),
// the residual's one slot (kResidualSlot), then an 8-byte mbarrier per slot.
// gen::dynamic_smem_bytes computes the same.
template <class S, int STAGES, int RESIDUAL = kResidualStaged>
struct FwdWideLayout {
  static constexpr unsigned kXBytes =
      (static_cast<unsigned>(S::kBlockSize * sizeof(typename S::T)) + 127u) / 128u * 128u;
  static constexpr unsigned kRBytes =
      S::kResidual && RESIDUAL == kResidualStaged ? static_cast<unsigned>(S::kBlockSize * sizeof(typename S::R)) : 0u;
  static constexpr unsigned kStageBytes = (kXBytes + kRBytes + 127u) / 128u * 128u;
  static constexpr unsigned kRSlotOffset = STAGES * kStageBytes;
  static constexpr unsigned kRSlotBytes =
      S::kResidual && RESIDUAL == kResidualSlot
          ? (static_cast<unsigned>(S::kBlockSize * sizeof(typename S::R)) + 127u) / 128u * 128u
          : 0u;
  static constexpr unsigned kBarrierOffset = kRSlotOffset + kRSlotBytes;
  static constexpr unsigned kBarriers = STAGES + (kRSlotBytes > 0 ? 1 : 0);  // the residual slot's last
  static constexpr unsigned kSmemBytes = kBarrierOffset + 8u * kBarriers;
};

// The largest power of two below N (N >= 2).
template <int N>
constexpr int pow2_below() {
  int h = 1;
  while (2 * h < N) h *= 2;
  return h;
}

// Sum of v[0..N) in a fixed pairwise order (the same bits wherever it runs):
// ceil(log2(N)) dependent adds, not N. The first half is the largest power of
// two below N (N / 2 for a power of two; a cluster of 13 CTAs sums 8 + 5).
template <int N>
__device__ __forceinline__ float tree_sum(const float* v) {
  static_assert(N >= 1, "at least one value");
  if constexpr (N == 1) {
    return v[0];
  } else {
    constexpr int kHalf = pow2_below<N>();
    return tree_sum<kHalf>(v) + tree_sum<N - kHalf>(v + kHalf);
  }
}

constexpr int kPairBuffers = 4;

// Whether a thread's share of the slab (as floats) and of the weight and
// bias (as stored) fit its registers, less 40 for the rest: then LayerNorm's
// second pass reads the row from the registers of its first.
template <class S>
constexpr bool fwd_wide_keeps_row() {
  constexpr int kColumns = S::kBlockSize / S::kThreads;  // a thread's
  return !S::kRms && kColumns + 2 * kColumns * static_cast<int>(sizeof(typename S::W)) / 4 <= 65536 / S::kThreads - 40;
}

// Whether a full slab's LayerNorm statistics take one pass (kOnePass, in
// layer_norm_fwd_wide_cta): clusters of 16, up to 32 columns a thread. Also
// where the row does not stay in registers for a second pass (fp32 rows of
// 256K columns in 16 warps; H200, % of copy, A/B, bench/results/s40, calls
// 1-2: 89.2 / 88.9 -> 89.7 / 89.6, with an fp32 residual 88.7 / 88.7 ->
// 89.6 / 90.4): the full-slab instance is then compiled for it alone.
template <class S>
constexpr bool fwd_wide_one_pass() {
  return !S::kRms && S::kCluster > 8 && S::kBlockSize / S::kThreads <= 32;
}

// A wide forward's static shared memory, declared once by
// layer_norm_fwd_wide for both its instantiations (FULL or not): the pairs
// are pushed to the same offset in every CTA of the cluster, whichever
// instantiation each runs.
template <class S>
struct FwdWideShared {
  // Row i's pairs land in pairs[i % 4], counted on pairs_bar[i % 4] (see
  // `push` for why four buffers let a CTA push before it has gathered).
  unsigned long long pairs_bar[kPairBuffers];
  float pairs[kPairBuffers][S::kCluster][2];  // by row, by rank
  // Columns of each CTA of the cluster and their reciprocals (0 for a CTA
  // without columns), as floats, for LayerNorm's combination: in shared
  // memory, not in registers hoisted out of the row loop.
  float columns[S::kCluster], inv_columns[S::kCluster];
  // The two-pass sums' warp parts; or, in clusters of 16 (whose full slabs
  // take the one-pass statistics: kOnePass), the warp parts (mean, m2) of
  // those, by row parity: with two buffers no barrier after the cross-warp
  // step (the next row that writes a buffer follows the barrier of the row
  // between's output). A CTA takes one path or the other for the whole
  // kernel. (Elsewhere its size as before: 256 more bytes of static shared
  // memory moved the stages and measured 1 point slower, bf16 N = 65536 in
  // clusters of 4; bench/results/s39, call 3.)
  static constexpr int kWarpParts = S::kThreads > 32 ? S::kThreads / 32 : 1;
  float scratch[(S::kCluster > 8 ? 4 : 1) * kWarpParts];
};

// Statistics of two parts of `c` values each (mean, sum of squared
// deviations from it) merged in place (Chan et al.): mean (a + b) / 2, m2
// m2a + m2b + (mb - ma)^2 c / 2. The same bits whichever part is `mean`
// (a butterfly leaves every lane the same), and m2 = 0 exactly for a
// constant row.
__device__ __forceinline__ void merge_equal_parts(float& mean, float& m2, float mean_b, float m2_b, float c) {
  const float d = mean_b - mean;
  m2 = fmaf(d * d, 0.5f * c, m2 + m2_b);
  mean = (mean + mean_b) * 0.5f;
}

// FULL: this CTA's slab has all kSlab columns (known at compile time: no
// bounds check, and its convergence region, around each access).
template <class S, int STAGES, int RESIDUAL, bool FULL>
__device__ __forceinline__ void layer_norm_fwd_wide_cta(const FwdParams& p, FwdWideShared<S>& sh) {
  static_assert(S::kRowsPerCta == 1 && S::kSingleTile, "a row's slab per CTA, in shared memory");
  static_assert(S::kCluster >= 2 && S::kCluster <= 16, "cluster: 2 to 16 CTAs (any count: the row's slabs, the last partial)");
  static_assert(STAGES >= 2 && STAGES <= 8, "stages: 2 to 8 staged rows");
  static_assert(S::kThreads > 32, "more than a warp: row_sum's barriers order the exchanges (below)");
  using T = typename S::T;
  using W = typename S::W;
  using R = typename S::R;
  using Y = typename S::Y;
  using L = FwdWideLayout<S, STAGES, RESIDUAL>;
  static_assert(RESIDUAL == kResidualGlobal || RESIDUAL == kResidualSlot || RESIDUAL == kResidualStaged,
                "RESIDUAL: kResidualGlobal, kResidualSlot or kResidualStaged");
  // z lives in the residual's slot where it is staged with x, otherwise over
  // x in x's.
  constexpr bool kStagedR = S::kResidual && RESIDUAL == kResidualStaged;
  constexpr bool kSlotR = S::kResidual && RESIDUAL == kResidualSlot;
  static_assert(kStagedR || !S::kResidual || sizeof(typename S::R) == sizeof(typename S::T),
                "z written over x needs the residual in x's size (and dtype: the generator checks)");
  constexpr int kSlab = S::kBlockSize;
  constexpr int kThreads = S::kThreads;
  constexpr int kVec = S::kVec;
  constexpr int kCluster = S::kCluster;
  constexpr int kAccesses = kSlab / (kThreads * kVec);
  static_assert(kAccesses >= 1 && kAccesses * kThreads * kVec == kSlab, "slab is a multiple of threads * vec");
  static_assert(smem::takes_bulk<T, kVec, kLoadBulk>() && (!S::kResidual || smem::takes_bulk<R, kVec, kLoadBulk>()),
                "16-byte accesses of x (and of the residual): bulk copies");

  extern __shared__ __align__(128) unsigned char fwd_wide_smem[];
  if (smem::dynamic_size() < L::kSmemBytes) __trap();  // launched wrongly
  const unsigned bars = smem::address(fwd_wide_smem + L::kBarrierOffset);  // slot s: bars + 8 s
  float* scratch = sh.scratch;
  auto& pairs = sh.pairs;
  auto& pairs_bar = sh.pairs_bar;
  auto& columns = sh.columns;
  auto& inv_columns = sh.inv_columns;

  const int t = static_cast<int>(threadIdx.x);
  const unsigned rank = cluster_rank();
  const i64 c0 = static_cast<i64>(rank) * kSlab;
  const int n = FULL ? kSlab : static_cast<int>(p.N - c0 < kSlab ? (p.N - c0 > 0 ? p.N - c0 : 0) : kSlab);  // its columns
  const auto in_slab = [&](int col) { return FULL || col < n; };
  const i64 first = cluster_index(), step = cluster_count();
  const i64 count = first < p.M ? (p.M - 1 - first) / step + 1 : 0;  // rows of this cluster
  const auto row_of = [&](i64 i) { return first + i * step; };
  const T* x = static_cast<const T*>(p.x) + c0;
  const R* residual = static_cast<const R*>(p.residual) + c0;  // unused without a residual
  R* z = static_cast<R*>(p.z) + c0;
  Y* y = static_cast<Y*>(p.y) + c0;

  const auto x_slot = [&](i64 i) {
    return reinterpret_cast<T*>(fwd_wide_smem + static_cast<unsigned>(i % STAGES) * L::kStageBytes);
  };
  const auto r_slot = [&](i64 i) {
    if constexpr (kSlotR) return reinterpret_cast<R*>(fwd_wide_smem + L::kRSlotOffset);
    return reinterpret_cast<R*>(fwd_wide_smem + static_cast<unsigned>(i % STAGES) * L::kStageBytes + L::kXBytes);
  };
  const unsigned r_bar = bars + 8u * STAGES;  // the residual slot's (kSlotR)
  // Warp 0: row i's slab of x (and of the residual) into slot i % STAGES.
  const auto issue = [&](i64 i) {
    const unsigned bar = bars + 8u * static_cast<unsigned>(i % STAGES);
    const i64 row = row_of(i);
    if (t == 0) {
      smem::fence_proxy_async();  // the slot's previous row was read (generic proxy) before this copy
      unsigned bytes = static_cast<unsigned>(n) * static_cast<unsigned>(sizeof(T));
      if constexpr (kStagedR) bytes += static_cast<unsigned>(n) * static_cast<unsigned>(sizeof(R));
      smem::barrier_expect(bar, bytes);
      if constexpr (S::kResidual && !kStagedR)
        bulk_prefetch_l2(residual + row * p.residual_stride, static_cast<unsigned>(n) * sizeof(R));
    }
    __syncwarp();
    smem::stage_bulk(x_slot(i), x + row * p.x_stride, n, bar);
    if constexpr (kStagedR) smem::stage_bulk(r_slot(i), residual + row * p.residual_stride, n, bar);
  };
  // Warp 0 (kSlotR): row i's residual into its slot, once every thread has
  // read row i - 1's from it.
  const auto issue_residual = [&](i64 i) {
    if (t == 0) {
      smem::fence_proxy_async();  // the slot's previous row was read (generic proxy) before this copy
      smem::barrier_expect(r_bar, static_cast<unsigned>(n) * static_cast<unsigned>(sizeof(R)));
    }
    __syncwarp();
    smem::stage_bulk(r_slot(i), residual + row_of(i) * p.residual_stride, n, r_bar);
  };

  // With 3 stages or more, a CTA forms row i + 1's sums before it waits for
  // row i's pairs (the exchange hides behind that work: the loads of rows
  // i + 2 on stay in flight); with 2, the slot of row i + 1 would be waited
  // for as soon as it was issued, so each row's sums come just before its
  // exchange.
  constexpr bool kLookahead = STAGES >= 3;
  if (t == 0) {
    for (unsigned s = 0; s < L::kBarriers; ++s) smem::barrier_init(bars + 8u * s, 1);
    for (int q = 0; q < kPairBuffers; ++q) smem::barrier_init(smem::address(&pairs_bar[q]), 1);
    // The phases of rows 0 and 1 are armed before any CTA can push to them
    // (the cluster barrier below); push(j) arms row j + 2's.
    for (int q = 0; q < 2 && q < count; ++q) smem::barrier_expect(smem::address(&pairs_bar[q]), 8u * kCluster);
  }
  if (t < kCluster) {
    const i64 left = p.N - static_cast<i64>(t) * kSlab;
    columns[t] = static_cast<float>(left < kSlab ? (left > 0 ? left : 0) : kSlab);
    inv_columns[t] = left > 0 ? 1.0f / columns[t] : 0.f;
  }
  // The weight and bias of this CTA's slab, once, as stored.
  smem::Raw<W, kVec> wr[kAccesses], br[kAccesses];
#pragma unroll
  for (int j = 0; j < kAccesses; ++j) {
    const int col = (j * kThreads + t) * kVec;
    if (in_slab(col)) {
      if constexpr (S::kHasWeight) wr[j].load(static_cast<const W*>(p.weight) + c0 + col);
      if constexpr (S::kHasBias) br[j].load(static_cast<const W*>(p.bias) + c0 + col);
    }
  }
  // Every CTA of the cluster has initialised and armed its barriers before
  // any CTA pushes a pair to it (the only cluster barriers: here and at exit).
  cluster_barrier();
  if (t < 32 && n > 0) {
    for (i64 i = 0; i < STAGES && i < count; ++i) issue(i);
    if (kSlotR && count > 0) issue_residual(0);
  }

  // The normalised row of staged row i in shared memory: z, or x.
  const auto row_at = [&](i64 i, int col, float (&v)[kVec]) {
    if constexpr (kStagedR) {
      load<kVec>(r_slot(i) + col, v);
    } else {
      load<kVec>(x_slot(i) + col, v);
    }
  };
  // 1. Staged row i's slab sums (every thread gets them): a = sum x (sum x^2:
  // RMSNorm); b = sum (x - a/n)^2 (LayerNorm). With a residual, z is formed
  // in the residual's slot and written out first. Waits for the slot.
  // LayerNorm's second pass reads the row from the registers of the first
  // (no second read of shared memory and conversion: the passes are bound by
  // instruction latency at one CTA of 8-16 warps an SM) where they hold it
  // without spilling: a full slab (a partial one's checks take registers)
  // and the row, weight and bias within the registers a thread has, less 40
  // for the rest. Otherwise it reads the slot again.
  // A full slab's LayerNorm statistics in one pass (kOnePass): each thread
  // sums its columns' deviations d from its first column x0, s = sum d and
  // q = sum d^2, so that its mean is x0 + s / c and its m2 q - s^2 / c (c
  // its columns: exact powers of two). x0 is one of the values, so m2 >=
  // (x0 - mean)^2 and q <= (c + 1) m2: the cancellation costs at most
  // log2(c + 1) bits (c <= 32), where the sum of x alone, as the two-pass
  // form's first pass, is as stable only once the mean is subtracted. The
  // threads' parts merge by Chan's formula (all parts of a level the same
  // size): a butterfly over the warp, then over the warps' parts, with one
  // barrier, where the two passes took two sums over the CTA (four
  // barriers) and a second pass over the row. Where measured faster: clusters
  // of 16, whose exchange over the cluster is the long pole of a row. On an
  // H200 at x = 512 MiB, % of copy, two passes -> one, A/B, two rounds
  // (bench/results/s39, call 2): LayerNorm fp16 N = 262144 81.7 / 81.4 ->
  // 88.2 / 87.9, + add bf16 262144 90.7 / 90.8 -> 91.9 / 91.7 (bf16 262144
  // level: 81.0 / 80.4 -> 80.5 / 80.0). Slower in smaller clusters: bf16
  // 65536 (clusters of 4) 91.5 / 91.7 -> 90.0 / 90.0, fp16 91.8 / 91.7 ->
  // 90.9 / 90.6, bf16 131072 (8) 94.4 / 94.1 -> 92.6 / 93.5.
  constexpr bool kOnePass = FULL && fwd_wide_one_pass<S>();
  constexpr bool kKeepRow = FULL && fwd_wide_keeps_row<S>() && !kOnePass;  // a second pass, from registers
  const auto local_sums = [&](i64 i, float& a, float& b) {
    if (n > 0) smem::barrier_wait(bars + 8u * static_cast<unsigned>(i % STAGES), static_cast<unsigned>((i / STAGES) & 1));
    if (kSlotR && n > 0) smem::barrier_wait(r_bar, static_cast<unsigned>(i & 1));
    const T* xs = x_slot(i);
    R* zs = r_slot(i);
    const i64 row = row_of(i);
    // kVec partial sums a thread (chains of kAccesses adds, not kAccesses *
    // kVec), summed in a fixed pairwise order.
    float part[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) part[k] = 0.f;
    // The row, for the second pass where kKeepRow; else an access at a time.
    float v[kKeepRow ? kAccesses : 1][kVec];
    float x0 = 0.f, sq[kOnePass ? kVec : 1];  // kOnePass: the shift, the sums of d^2
#pragma unroll
    for (int k = 0; k < (kOnePass ? kVec : 1); ++k) sq[k] = 0.f;
#pragma unroll
    for (int j = 0; j < kAccesses; ++j) {
      const int col = (j * kThreads + t) * kVec;
      if (!in_slab(col)) continue;
      float (&u)[kVec] = v[kKeepRow ? j : 0];
      load<kVec>(xs + col, u);
      if constexpr (S::kResidual) {
        float r[kVec];
        if constexpr (kStagedR || kSlotR) {
          load<kVec>(zs + col, r);
        } else {
          load<kVec>(residual + row * p.residual_stride + col, r);
        }
        add_residual<S>(u, r);
        if constexpr (kStagedR) {
          store<kVec>(zs + col, u);
        } else {
          store<kVec>(const_cast<T*>(xs) + col, u);  // z over x (same dtype)
        }
        store_global<kVec, true>(z + row * p.z_stride + col, u);
      }
      if constexpr (kOnePass) {
        if (j == 0) x0 = u[0];
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const float d = u[k] - x0;
          part[k] += d;
          sq[k] = fmaf(d, d, sq[k]);
        }
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) part[k] = S::kRms ? fmaf(u[k], u[k], part[k]) : part[k] + u[k];
      }
    }
    if constexpr (kOnePass) {
      static_assert(kAccesses * kVec <= 32, "the bound on cancellation above (fwd_wide_one_pass)");
      constexpr float kColumns = static_cast<float>(kAccesses * kVec);  // a thread's (a power of two)
      const float s = tree_sum<kVec>(part), q = tree_sum<kVec>(sq);
      float mean = fmaf(s, 1.0f / kColumns, x0);
      float m2 = fmaxf(fmaf(-s, s * (1.0f / kColumns), q), 0.f);
      float c = kColumns;
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        merge_equal_parts(mean, m2, __shfl_xor_sync(0xffffffffu, mean, o), __shfl_xor_sync(0xffffffffu, m2, o), c);
        c *= 2.f;
      }
      constexpr int kWarps = kThreads / 32;
      if constexpr (kWarps > 1) {
        float(&st)[2][kWarps] = reinterpret_cast<float(*)[2][2][kWarps]>(sh.scratch)[0][i & 1];
        if ((t & 31) == 0) {
          st[0][t / 32] = mean;
          st[1][t / 32] = m2;
        }
        __syncthreads();
        mean = st[0][t % kWarps];
        m2 = st[1][t % kWarps];
#pragma unroll
        for (int o = 1; o < kWarps; o <<= 1) {
          merge_equal_parts(mean, m2, __shfl_xor_sync(0xffffffffu, mean, o), __shfl_xor_sync(0xffffffffu, m2, o), c);
          c *= 2.f;
        }
      }
      a = mean * static_cast<float>(kSlab);  // the slab's sum (kSlab a power of two)
      b = m2;
    } else {
      // The loop form of the cross-warp step: the shuffle form spilled here
      // (fp32 + residual rows at 16 warps sit at 128 registers:
      // KernelHeaders.WideSpaceCompilesWithoutSpills), and a sum per slab of
      // thousands of columns does not show.
      a = row_sum<kThreads, 1, true, WarpCombine::loop>(tree_sum<kVec>(part), scratch);
      b = 0.f;
      if constexpr (!S::kRms) {
        const float local_mean = n > 0 ? a / static_cast<float>(n) : 0.f;
#pragma unroll
        for (int k = 0; k < kVec; ++k) part[k] = 0.f;
#pragma unroll
        for (int j = 0; j < kAccesses; ++j) {
          const int col = (j * kThreads + t) * kVec;
          if (!in_slab(col)) continue;
          float u[kVec];
          if constexpr (kKeepRow) {
#pragma unroll
            for (int k = 0; k < kVec; ++k) u[k] = v[j][k];
          } else {
            row_at(i, col, u);
          }
#pragma unroll
          for (int k = 0; k < kVec; ++k) part[k] = fmaf(u[k] - local_mean, u[k] - local_mean, part[k]);
        }
        b = row_sum<kThreads, 1, true, WarpCombine::loop>(tree_sum<kVec>(part), scratch);
      }
    }
  };
  // Thread 0, once every thread has formed row i's sums (local_sums ends
  // with a barrier): row i's pair to every CTA of the cluster
  // (pairs[i % 4][rank]), after arming row i + 2's phase here. A CTA pushes
  // row i without waiting for row i - 1's pairs, so the exchange is on no
  // CTA's path from one row to the next; four buffers make that safe:
  //  * a CTA q pushes row k only after it gathered row k - 2 (the loop
  //    below), hence after this CTA pushed row k - 2, which this CTA does
  //    after local_sums(k - 2)'s barriers, which every thread of it passes
  //    only after gathering row k - 4: so buffer k % 4's previous
  //    row (k - 4) is read, and its mbarrier's previous phase waited on, by
  //    every thread before any row-k pair lands or the phase is re-armed;
  //  * row k's phase is armed at push(k - 2), before this CTA's row k - 2
  //    pair goes out, hence before any CTA can push row k.
  const auto push = [&](i64 i, float a, float b) {
    const int q = static_cast<int>(i % kPairBuffers);
    if (i + 2 < count)
      smem::barrier_expect(smem::address(&pairs_bar[(i + 2) % kPairBuffers]), 8u * kCluster);
    const unsigned slot = smem::address(&pairs[q][rank][0]);
    const unsigned bar = smem::address(&pairs_bar[q]);
#pragma unroll
    for (int r = 0; r < kCluster; ++r)
      push_pair_remote(smem::cluster_address(slot, static_cast<unsigned>(r)), a, b,
                       smem::cluster_address(bar, static_cast<unsigned>(r)));
  };
  // 2. Row i's statistics from the cluster's pairs, summed in a fixed order:
  // where kLaneGather, lane r of each kCluster lanes takes rank r's pair and
  // the sums are a butterfly over those lanes (the same bits in every lane,
  // warp and CTA); else every thread sums all kCluster pairs in a tree, four
  // shared loads and four flops a rank (at clusters of 16 and 32 columns a
  // thread, about 4 of the 19 instructions an element the forward issued;
  // ncu, bench/results/s39, call 11). Where measured faster: 16-bit
  // LayerNorm rows (with or without the residual add) in clusters of 16 and
  // 4. On an H200 at x = 512 MiB, % of copy, tree -> lanes, A/B, two rounds
  // (call 12): LayerNorm bf16 N = 262144 85.5 / 84.8 -> 92.9 / 92.8, fp16
  // 88.2 / 88.2 -> 94.0 / 93.9, + add bf16 91.9 / 91.8 -> 92.6 / 92.5, bf16
  // 65536 (clusters of 4) 92.0 / 92.0 -> 93.6 / 93.8; slower in clusters of
  // 8 (bf16 131072 94.7 / 93.8 -> 92.5 / 92.5). RMSNorm and fp32 rows keep
  // the tree: RMSNorm bf16 262144 93.4 / 93.5 -> 92.4 / 92.4 with the lanes,
  // 131072 (clusters of 4) 79.0 / 79.4 -> 78.5 / 78.6, fp32 262144 level
  // (s40, call 1).
  constexpr bool kLaneGather = (kCluster > 8 || kCluster == 4) && !S::kRms && sizeof(T) == 2;
  // Lanes a group (a power of two; lanes past the cluster's ranks add 0).
  constexpr int kLaneGroup = kCluster > 8 ? 16 : kCluster;
  const auto gather = [&](i64 i, float& mean, float& var) {
    const int par = static_cast<int>(i % kPairBuffers);
    smem::barrier_wait_cluster(smem::address(&pairs_bar[par]), static_cast<unsigned>((i / kPairBuffers) & 1));
    // The variance's terms n_r (a_r / n_r - mean)^2 as e^2 / n_r with
    // e = a_r - n_r mean in one FMA, a multiply by the reciprocal, no
    // division and its slow path (this is on the path from one row's
    // exchange to the next's, which every CTA of the cluster waits for): a
    // constant row (a_r = n_r mean exactly) gives e = 0 and so a variance of
    // exactly 0 (y = bias, Gpu.DegenerateRowsAreExact), where a_r times the
    // rounded 1 / n_r left a residue for slabs of other than a power of two
    // columns (the last CTA of N = 20000). An empty CTA has a_r = b_r = 0
    // and 1 / n_r = 0.
    mean = 0.f;
    if constexpr (kLaneGather) {
      const int r = t & (kLaneGroup - 1);
      const bool is_rank = r < kCluster;  // lane r stands for a rank (always, where the group is the cluster)
      const float a_r = is_rank ? pairs[par][r][0] : 0.f;
      const float total = segment_sum<kLaneGroup>(a_r);
      if constexpr (S::kRms) {
        var = total / static_cast<float>(p.N);
      } else {
        mean = total / static_cast<float>(p.N);
        const float e = is_rank ? fmaf(-columns[r], mean, a_r) : 0.f;
        const float term = is_rank ? fmaf(e * inv_columns[r], e, pairs[par][r][1]) : 0.f;
        var = segment_sum<kLaneGroup>(term) / static_cast<float>(p.N);
      }
    } else {
      float part[kCluster];
#pragma unroll
      for (int r = 0; r < kCluster; ++r) part[r] = pairs[par][r][0];
      const float total = tree_sum<kCluster>(part);
      if constexpr (S::kRms) {
        var = total / static_cast<float>(p.N);
      } else {
        mean = total / static_cast<float>(p.N);
        float term[kCluster];
#pragma unroll
        for (int r = 0; r < kCluster; ++r) {
          const float e = fmaf(-columns[r], mean, pairs[par][r][0]);
          term[r] = fmaf(e * inv_columns[r], e, pairs[par][r][1]);
        }
        var = tree_sum<kCluster>(term) / static_cast<float>(p.N);
      }
    }
  };
  // 3. Row i's output, from its slot and the weight and bias in registers;
  // then, once every thread has read the slot, its next row's copies.
  const auto output = [&](i64 i, float mean, float var) {
    const i64 row = row_of(i);
    const RowAffine aff = row_affine<S>(p, row, mean, var, t == 0 && rank == 0);
    Y* out_row = y + row * p.y_stride;
#pragma unroll
    for (int j = 0; j < kAccesses; ++j) {
      const int col = (j * kThreads + t) * kVec;
      if (!in_slab(col)) continue;
      float v[kVec];
      row_at(i, col, v);
      normalize_store_vec<S>(out_row + col, wr[j], br[j], v, mean, aff.scale, aff.shift);
    }
    // z was written into the slot by generic stores, which the copy
    // engine's next copy into it (async proxy) must follow.
    if constexpr (S::kResidual) smem::fence_proxy_async();
    __syncthreads();
    if (t < 32 && n > 0 && i + STAGES < count) issue(i + STAGES);
  };

  // Row i's sums, pushed at once; then (kSlotR: local_sums' barriers
  // follow every thread's reads of the residual slot) row i + 1's residual.
  const auto sums_push = [&](i64 i, float& a, float& b) {
    local_sums(i, a, b);
    if (t == 0) push(i, a, b);
    if (kSlotR && t < 32 && n > 0 && i + 1 < count) issue_residual(i + 1);
  };
  float a = 0.f, b = 0.f;
  if (kLookahead && count > 0) sums_push(0, a, b);
  for (i64 i = 0; i < count; ++i) {
    // Row i + 1's sums (the lookahead) or row i's.
    const i64 next = kLookahead ? i + 1 : i;
    if (next < count) sums_push(next, a, b);
    float mean, var;
    gather(i, mean, var);
    output(i, mean, var);
  }
  // No CTA exits while a pair may still be pushed to it.
  cluster_barrier();
}

// The forward: a CTA whose slab is full (all of them where N = cluster *
// slab, the shapes the wide forward is for) runs the instance without bounds
// checks, keeping LayerNorm's row in registers; a CTA with fewer columns, the
// checked one. A cluster may mix the two (N = 245768 in clusters of 16).
template <class S, int STAGES, int RESIDUAL = kResidualStaged>
__device__ __forceinline__ void layer_norm_fwd_wide(const FwdParams& p) {
  __shared__ __align__(8) FwdWideShared<S> sh;
  // Only where the full slab keeps the row in registers or takes the one
  // pass: elsewhere the two paths together took more registers than either
  // (spills at fp32 rows and residual of 256K columns, 16 warps, before the
  // one pass served them).
  if constexpr (fwd_wide_keeps_row<S>() || fwd_wide_one_pass<S>()) {
    if (p.N - static_cast<i64>(cluster_rank()) * S::kBlockSize >= S::kBlockSize) {
      layer_norm_fwd_wide_cta<S, STAGES, RESIDUAL, true>(p, sh);
      return;
    }
  }
  layer_norm_fwd_wide_cta<S, STAGES, RESIDUAL, false>(p, sh);
}

}  // namespace lntune
