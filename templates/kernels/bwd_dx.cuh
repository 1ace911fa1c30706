// lntune/kernels/bwd_dx.cuh — the backward of both norms: dx fused with
// partial dW/dB.
//
// Persistent: the grid has group_size_m CTAs (clusters); CTA c processes row
// groups c, c + gridDim.x, ... and owns partial row c, which it writes (fp32)
// once at the end (single tile: a CTA's row slots are summed in shared memory
// first, in slot order) or accumulates in place (tiled rows). Each partial
// element has a single owner thread and rows are visited in a fixed order, so
// dW/dB are bitwise reproducible.
//
//   dx = rstd * (w dy - (xhat c1 + c2)),  c1 = mean(xhat w dy), c2 = mean(w dy)
//
// RMSNorm: xhat = x * rstd and c2 = 0 (no mean). Zero-centred gamma: w is
// 1 + w (dW is unchanged: dy * xhat). With a residual the input row is z (in
// the residual's dtype) and the upstream gradient of z, dz, is added into dx:
// dx = dnorm + dz, also written (when wanted) in the residual's dtype as
// the gradient of the residual. dy has the output dtype (S::Y).
#pragma once

#include "lntune/common.cuh"
#include "lntune/kernels/bwd_dwdb.cuh"

namespace lntune {

// ---- Staged rows. The single-tile backward (one CTA a row, or each CTA of
// a cluster its slab) copies the next row's x and dy (with a residual: z, dy
// and dz) into shared memory with cp.async while it reduces the current
// one, so that a pass waits on shared memory, not on L2 or DRAM. Each thread
// copies exactly the pieces it later reads, so cp.async.wait_group is the
// only synchronisation. Two stages of rows_per_cta rows (x's, then dy's,
// then dz's), at most kMaxBwdStageBytes, so that two CTAs fit an SM.
// Accesses of x, dy or dz narrower than 4 bytes are not staged
// (cp.async copies 4, 8 or 16). The stages are static shared memory where
// they fit its 48 KB beside the row slots' sums and the finish's tree, and
// dynamic shared memory beyond (gen::dynamic_smem_bytes sizes the launch
// alike; each instance checks the figure at compile time): the same rows in
// dynamic shared memory measured up to 2 points slower (bf16 N = 4096,
// M = 4096: 81.3 / 79.2% of copy; H100, bench/results/h100_s30, call 5).
// On an H100 at M = 4096 (default configs, each build against its own copy,
// bench/results/h100_s30), % of copy without / with the staging: bf16
// N = 1024 41.2 / 44.8, 4096 69.2 / 81.3, fp32 N = 1024 61.7 / 66.7,
// RMSNorm bf16 N = 1024 46.0 / 51.2, 4096 76.5 / 89.4 (call 1, static);
// bf16 N = 8192 75.7 / 91.0, fp32 N = 4096 90.4 / 97.0 (call 5, dynamic).
// At x = 512 MiB it cost at most 1.2 points (bf16 N = 1024: 97.2 / 96.0).
// The fused backward, staged since session 45 (it had held z, dy and dz in
// registers, the next row prefetched into L2), on an H200 at x = 512 MiB
// (bench/results/s45, call 1, A/B): add + LayerNorm bf16 N = 4096 88.2 ->
// 98.0% of copy, 8192 84.2 -> 99.5, add + RMSNorm bf16 8192 81.1 -> 100.0.
inline constexpr int kMaxBwdStageBytes = 96 * 1024;
// CTAs of 512 threads or more whose stages pass kMaxBwdStageBytes hold 8192
// elements of a row (the single tile's 16 elements a thread at 16 warps, 8
// above): their registers keep them one to an SM whatever their shared
// memory, so they may stage up to 192 KB (fp32 z, dy and dz of 8192 columns).
inline constexpr int kMaxBwdStageBytesAlone = 192 * 1024;

template <class S>
constexpr int bwd_stage_x_bytes() {
  return 2 * S::kRowsPerCta * S::kBlockSize * static_cast<int>(sizeof(typename S::R));
}
template <class S>
constexpr int bwd_stage_dy_bytes() {
  return 2 * S::kRowsPerCta * S::kBlockSize * static_cast<int>(sizeof(typename S::Y));
}
// dz's stages (the residual's dtype, as z), with a residual.
template <class S>
constexpr int bwd_stage_dz_bytes() {
  return S::kResidual ? bwd_stage_x_bytes<S>() : 0;
}
template <class S>
constexpr int bwd_stage_raw_bytes() {
  return bwd_stage_x_bytes<S>() + bwd_stage_dy_bytes<S>() + bwd_stage_dz_bytes<S>();
}
// Session 45's staging (a residual's rows, a cluster's slabs, stages over
// 96 KB) is sm_90's, where it was measured and a CTA gets 227 KB of shared
// memory; earlier GPUs (sm_80: 163 KB a CTA, sm_86 and sm_89: 99 KB, beside
// the row slots' sums and the finish's tree) keep session 30's: no residual,
// no cluster, up to kMaxBwdStageBytes. gen::stages_bwd_rows holds the same
// rule for the launch's compute capability.
template <class S>
constexpr bool bwd_stage_fits_arch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return bwd_stage_raw_bytes<S>() <= (S::kThreads >= 512 ? kMaxBwdStageBytesAlone : kMaxBwdStageBytes);
#else
  return S::kCluster == 1 && !S::kResidual && bwd_stage_raw_bytes<S>() <= kMaxBwdStageBytes;
#endif
}
template <class S>
constexpr bool staged_bwd() {
  return S::kSingleTile && S::kVec * sizeof(typename S::R) >= 4 && S::kVec * sizeof(typename S::Y) >= 4 &&
         bwd_stage_fits_arch<S>();
}
// The static shared memory the finishing entry's tree takes (finish_item's
// part[2][threads] of float4: 8 KB up to 256 threads, 12 KB at 384), at
// least 8 KB. Session 56's cold tune found the 8 KB that this once was too
// little for CTAs of 12 warps: 16-bit RMSNorm + add at 768 (4 rows) and 3072
// columns staged 40 KB statically, and the finishing entry's 52 KB failed
// ptxas (48 KB is static shared memory's limit), taking the whole instance.
template <class S>
constexpr int bwd_finish_tree_bytes() {
  return S::kThreads < 512 && 32 * S::kThreads > 8192 ? 32 * S::kThreads : 8192;
}
// Whether the stages fit static shared memory: 47 KB with the row slots'
// sums (rows_per_cta > 1) and the finish's tree. gen::bwd_stage_bytes holds
// the same rule.
template <class S>
constexpr bool bwd_stage_static() {
  return bwd_stage_raw_bytes<S>() + (S::kRowsPerCta > 1 ? S::kBlockSize * 4 : 0) + bwd_finish_tree_bytes<S>() <=
         47 * 1024;
}
// The dynamic shared memory the backward's launch needs (0: none).
template <class S>
constexpr int bwd_stage_bytes() {
  return staged_bwd<S>() && !bwd_stage_static<S>() ? bwd_stage_raw_bytes<S>() : 0;
}

// Whether the single-tile backward loads the fused form's dz with x and dy
// (the row, then, in registers from the start), so that its latency hides
// behind theirs and the row's reductions: read after them, the whole CTA
// waited on it once a row (add + LayerNorm bf16 at N = 2048 and 8192: 89.9
// and 88.0% of copy, against 92.7 and 91.4% loaded early; fp32 N = 2048 91.4
// against 96.6; bench/results/h100_2026-11-25b, call 2). Not for a residual
// wider than x (fp32 beside 16-bit x): its row already takes twice x's
// registers, and dz beside it spilled in 128 registers at 16 columns a thread.
// Not where the rows are staged: dz is then read from its stage where dx
// adds it.
template <class S>
constexpr bool early_dz() {
  return S::kResidual && sizeof(typename S::R) <= sizeof(typename S::T) && !staged_bwd<S>();
}

// Whether the single-tile backward without a cluster takes its row sums
// with its row slots' own barriers (row_sum2's SLOT_BARRIER), so that the
// slots step apart: nothing else in its row loop waits on the whole CTA (the
// staged rows' copies are each thread's own). bf16 at M = 4096 in 132 CTAs,
// every config, the best (bench/results/s37, call 5 against call 2): N = 2048
// (8 warps, 2 rows) 22.7 -> 22.4 us, 4096 (16 warps, 2 rows) 34.7 -> 33.8;
// at x = 512 MiB level (bf16 and fp32 N = 256-4096, RMSNorm bf16 1024 and
// 4096). The probe's teams (bench/probes/bwd_team_probe.cu) ran their dx
// 2.3 us faster free than with a CTA barrier a row (call 3). Streaming loads
// and stores (ld/st .cs, an L2 evict-first policy on the staged copies),
// 1.0 us in the probe, cost 6-14 points at x = 512 MiB (call 5): not used.
template <class S>
constexpr bool bwd_slot_barriers() {
  return S::kSingleTile && S::kCluster == 1;
}

// One row's x, dy (from column c0 on), mean and rstd; zeros past the end.
// With early_dz, the row's dz too, held as loaded (16-bit values two to a
// register) until dx adds it.
template <class S>
struct BwdRow {
  float x[S::kVecsPerThread][S::kVec];
  float dy[S::kVecsPerThread][S::kVec];
  Held<typename S::R, S::kVec> dz[early_dz<S>() ? S::kVecsPerThread : 1];
  float mean, rstd;
};

template <class S>
__device__ __forceinline__ void load_bwd_row(const BwdParams& p, i64 row, i64 c0, i64 n, int t, BwdRow<S>& r) {
  using R = typename S::R;
  using Y = typename S::Y;
  const bool valid = row < p.M;
  const R* x = static_cast<const R*>(p.x) + (valid ? row : 0) * p.x_stride + c0;
  const Y* dy = static_cast<const Y*>(p.dy) + (valid ? row : 0) * p.dy_stride + c0;
  load_row_part<S>(valid, n, t, r.x, x, r.dy, dy);
  if constexpr (early_dz<S>()) {
    if (p.dz) load_row_part<S>(valid, n, t, r.dz, static_cast<const R*>(p.dz) + (valid ? row : 0) * p.dz_stride + c0);
  }
  r.mean = valid && !S::kRms ? p.mean[row] : 0.f;
  r.rstd = valid ? p.rstd[row] : 0.f;
}

// The fused backward's dz for `row` (this thread's accesses: `accesses` of
// kVec columns, `stride` threads apart) into L2, where the shape has a
// residual and dz was given (with the next row's x and dy in the single-tile
// kernel; where dz is read after the row's reductions, as add_dz does,
// nothing else hides its latency). A hint only: no value depends on it.
template <class S>
__device__ __forceinline__ void prefetch_dz_row(const BwdParams& p, i64 row, i64 c0, i64 n, int t, int stride,
                                                int accesses) {
  if constexpr (S::kResidual) {
    if (!p.dz || row >= p.M) return;
    const typename S::R* dz = static_cast<const typename S::R*>(p.dz) + row * p.dz_stride + c0;
    for (int j = 0; j < accesses; ++j) {
      const i64 col = static_cast<i64>(j * stride + t) * S::kVec;
      if (col < n) prefetch_l2(dz + col);
    }
  }
}

// out += the VEC values at src (global or shared memory).
template <int VEC, class T>
__device__ __forceinline__ void add_loaded(const T* src, float (&out)[VEC]) {
  float d[VEC];
  load<VEC>(src, d);
#pragma unroll
  for (int k = 0; k < VEC; ++k) out[k] += d[k];
}

// dx += dz for one access, when the shape has a residual and dz was given.
template <class S>
__device__ __forceinline__ void add_dz(const BwdParams& p, i64 row, i64 col, float (&out)[S::kVec]) {
  if constexpr (S::kResidual) {
    if (p.dz) add_loaded<S::kVec>(static_cast<const typename S::R*>(p.dz) + row * p.dz_stride + col, out);
  }
}

// The gradient of the residual, when the shape has one and it is wanted:
// dx's fp32 values, stored in the residual's dtype (z = x + residual, so
// both gradients are dz; no second rounding through x's dtype). WHOLE:
// through store_global (the wide backward's stores; common.cuh).
template <class S, bool WHOLE = false>
__device__ __forceinline__ void store_dresidual(const BwdParams& p, i64 row, i64 col, const float (&out)[S::kVec]) {
  if constexpr (S::kResidual) {
    if (p.dresidual) {
      typename S::R* dst = static_cast<typename S::R*>(p.dresidual) + row * p.dresidual_stride + col;
      if constexpr (WHOLE) {
        store_global<S::kVec>(dst, out);
      } else {
        store<S::kVec>(dst, out);
      }
    }
  }
}

// This thread's pieces of `row` (zeros past M or N) into stage buffers sx/sdy
// (and sdz with a residual, where dz was given) (this slot's kBlockSize
// elements each), as one cp.async group.
template <class S>
__device__ __forceinline__ void stage_bwd_row(const BwdParams& p, i64 row, i64 c0, i64 n, int t,
                                              typename S::R* sx, typename S::Y* sdy, typename S::R* sdz) {
  using R = typename S::R;
  using Y = typename S::Y;
  const bool valid = row < p.M;
  const R* x = static_cast<const R*>(p.x) + (valid ? row : 0) * p.x_stride + c0;
  const Y* dy = static_cast<const Y*>(p.dy) + (valid ? row : 0) * p.dy_stride + c0;
  const R* dz = S::kResidual && p.dz ? static_cast<const R*>(p.dz) + (valid ? row : 0) * p.dz_stride + c0 : nullptr;
#pragma unroll
  for (int j = 0; j < S::kVecsPerThread; ++j) {
    const int col = (j * S::kThreadsPerRow + t) * S::kVec;
    const bool ok = valid && col < n;
    copy_async<S::kVec * sizeof(R)>(shared_address(sx + col), x + (ok ? col : 0), ok);
    copy_async<S::kVec * sizeof(Y)>(shared_address(sdy + col), dy + (ok ? col : 0), ok);
    if constexpr (S::kResidual) {
      if (dz) copy_async<S::kVec * sizeof(R)>(shared_address(sdz + col), dz + (ok ? col : 0), ok);
    }
  }
  copy_async_commit();
}

// Starts bringing a row into L2, so that loading it later waits less.
template <class S>
__device__ __forceinline__ void prefetch_bwd_row(const BwdParams& p, i64 row, i64 c0, i64 n, int t) {
  using R = typename S::R;
  using Y = typename S::Y;
  if (row >= p.M) return;
  const R* x = static_cast<const R*>(p.x) + row * p.x_stride + c0;
  const Y* dy = static_cast<const Y*>(p.dy) + row * p.dy_stride + c0;
#pragma unroll
  for (int j = 0; j < S::kVecsPerThread; ++j) {
    const i64 col = static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
    if (col < n) {
      prefetch_l2(x + col);
      prefetch_l2(dy + col);
    }
  }
  prefetch_dz_row<S>(p, row, c0, n, t, S::kThreadsPerRow, S::kVecsPerThread);
}

// The row slots of a CTA hold the same columns of their partials: slot 0
// ends with their sum, (((v[R-1] + v[R-2]) + ...) + v[0]), through shared
// memory (kBlockSize floats: at most 32 KB, as rows_per_cta * block_size <=
// 16384). Every thread of the CTA calls it.
template <class S>
__device__ __forceinline__ void sum_row_slots(float (&v)[S::kVecsPerThread][S::kVec], int slot, int t) {
  __shared__ float sum[S::kBlockSize];
  for (int s = S::kRowsPerCta - 1; s >= 1; --s) {
    if (slot == s) {
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j)
#pragma unroll
        for (int k = 0; k < S::kVec; ++k) {
          const int col = (j * S::kThreadsPerRow + t) * S::kVec + k;
          sum[col] = s == S::kRowsPerCta - 1 ? v[j][k] : v[j][k] + sum[col];
        }
    }
    __syncthreads();
  }
  if (slot == 0) {
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j)
#pragma unroll
      for (int k = 0; k < S::kVec; ++k) v[j][k] += sum[(j * S::kThreadsPerRow + t) * S::kVec + k];
  }
  __syncthreads();  // the buffer is free again
}

// dW/dB asked of the plain entry (BwdParams::dw/db; the finishing entry
// always finishes by its grid): the launcher's one-CTA path (rt::finish_path:
// alone; a grid of one CTA, rows held whole, dW/dB 16-byte aligned). The
// CTA's own sums are the result, written directly: no partial row, no grid
// barrier. The launcher decides; the kernel does not guess it from its grid
// (a one-CTA cooperative launch with unaligned dW/dB must not take it).
// Not for a residual wider than x (fp32 beside 16-bit x): those kernels sit
// at their register limit, and the second store path spilled 16 bytes.
// rt::finish_path holds the same rule.
template <class S>
constexpr bool can_finish_alone() {
  return S::kSingleTile && S::kCluster == 1 && !(S::kResidual && sizeof(typename S::R) > sizeof(typename S::T));
}
template <class S, bool FINISH>
__device__ __forceinline__ bool finishes_alone(const BwdParams& p) {
  return !FINISH && can_finish_alone<S>() && (p.dw || p.db);
}

// A row of N <= kBlockSize * kCluster in registers; dW/dB partials accumulate
// in registers across rows. With a cluster, each CTA holds a slab of
// kBlockSize columns and the row sums cross the cluster.
template <class S, bool FINISH>
__device__ __forceinline__ void layer_norm_bwd_dx_single_tile(const BwdParams& p) {
  using T = typename S::T;
  using W = typename S::W;
  constexpr bool kClustered = S::kCluster > 1;
  float* scratch = row_scratch<S, 2>();  // two sums per warp and row
  // This CTA's parts of c1 and c2, double-buffered by row.
  float(*slots)[2] = cluster_slots<S::kCluster, 2>();
  const int t = kClustered ? static_cast<int>(threadIdx.x) : static_cast<int>(threadIdx.x) % S::kThreadsPerRow;
  const int slot = kClustered ? 0 : static_cast<int>(threadIdx.x) / S::kThreadsPerRow;
  const i64 slab = kClustered ? static_cast<i64>(cluster_rank()) * S::kBlockSize : 0;  // this CTA's first column
  const i64 n = p.N - slab;  // columns from there on
  // One partial row per cluster or CTA (its row slots summed first).
  const i64 partial_row = kClustered ? static_cast<i64>(cluster_index()) : static_cast<i64>(blockIdx.x);
  const W* weight = static_cast<const W*>(p.weight) + slab;
  const float inv_n = 1.0f / static_cast<float>(p.N);

  float w[S::kVecsPerThread][S::kVec];
  float dw[S::kVecsPerThread][S::kVec];
  float db[S::kVecsPerThread][S::kVec];
#pragma unroll
  for (int j = 0; j < S::kVecsPerThread; ++j) {
    if constexpr (S::kHasWeight) {
      const i64 col = static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
      if (col < n) {
        load<S::kVec>(weight + col, w[j]);
#pragma unroll
        for (int k = 0; k < S::kVec; ++k) w[j][k] = applied_weight<S>(w[j][k]);
      } else {
#pragma unroll
        for (int k = 0; k < S::kVec; ++k) w[j][k] = 0.f;
      }
    }
#pragma unroll
    for (int k = 0; k < S::kVec; ++k) {
      if constexpr (S::kHasWeight) dw[j][k] = 0.f;
      if constexpr (S::kHasBias) db[j][k] = 0.f;
    }
  }

  // Persistent: this CTA's rows, in order. The next row is prefetched into L2
  // while the current one is reduced and written.
  int parity = 0;
  const i64 first_row = kClustered ? static_cast<i64>(cluster_index()) : static_cast<i64>(blockIdx.x) * S::kRowsPerCta;
  const i64 step = kClustered ? static_cast<i64>(cluster_count()) : static_cast<i64>(gridDim.x) * S::kRowsPerCta;
  const i64 c0 = slab;
  // The first row's dz, where it is read late (prefetch_bwd_row takes each
  // next row's).
  if constexpr (!early_dz<S>() && !staged_bwd<S>())
    prefetch_dz_row<S>(p, first_row + slot, c0, n, t, S::kThreadsPerRow, S::kVecsPerThread);
  constexpr bool kStaged = staged_bwd<S>();
  using R = typename S::R;
  using Y = typename S::Y;
  // Staged rows: x's [stage][slot][column], then dy's (then dz's), in static
  // shared memory where they fit, else dynamic.
  constexpr bool kStatic = kStaged && bwd_stage_static<S>();
  __shared__ __align__(16) unsigned char stage_static[kStatic ? bwd_stage_raw_bytes<S>() : 16];
  extern __shared__ __align__(128) unsigned char bwd_stage_smem[];
  unsigned char* const stage_base = kStatic ? stage_static : bwd_stage_smem;
  R* const stage_x = reinterpret_cast<R*>(stage_base);
  Y* const stage_dy = reinterpret_cast<Y*>(stage_base + bwd_stage_x_bytes<S>());
  R* const stage_dz = reinterpret_cast<R*>(stage_base + bwd_stage_x_bytes<S>() + bwd_stage_dy_bytes<S>());
  const auto stage_at = [&](auto* base, int stage) { return base + (stage * S::kRowsPerCta + slot) * S::kBlockSize; };
  int stage = 0;
  float next_mean = 0.f, next_rstd = 0.f;  // the staged row's statistics, loaded a row ahead
  if constexpr (kStaged) {
    if (!kStatic && dynamic_smem_size() < static_cast<unsigned>(bwd_stage_bytes<S>())) __trap();  // launched wrongly
    const i64 row0 = first_row + slot;
    stage_bwd_row<S>(p, row0, c0, n, t, stage_at(stage_x, 0), stage_at(stage_dy, 0), stage_at(stage_dz, 0));
    next_mean = row0 < p.M && !S::kRms ? p.mean[row0] : 0.f;
    next_rstd = row0 < p.M ? p.rstd[row0] : 0.f;
  }
  for (i64 first = first_row; first < p.M; first += step) {
    const i64 row = first + slot;
    const bool active = row < p.M;
    BwdRow<S> cur;
    [[maybe_unused]] const R* sdz = nullptr;  // this row's staged dz
    if constexpr (kStaged) {
      // The next row's copies, then wait for this row's (issued a row ago).
      stage_bwd_row<S>(p, row + step, c0, n, t, stage_at(stage_x, stage ^ 1), stage_at(stage_dy, stage ^ 1),
                       stage_at(stage_dz, stage ^ 1));
      copy_async_wait<1>();
      const R* const sx = stage_at(stage_x, stage);
      const Y* const sdy = stage_at(stage_dy, stage);
      sdz = stage_at(stage_dz, stage);  // read where dx adds it (the slot is copied into again a row later)
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        const int col = (j * S::kThreadsPerRow + t) * S::kVec;
        load<S::kVec>(sx + col, cur.x[j]);
        load<S::kVec>(sdy + col, cur.dy[j]);
      }
      cur.mean = next_mean;
      cur.rstd = next_rstd;
      next_mean = row + step < p.M && !S::kRms ? p.mean[row + step] : 0.f;
      next_rstd = row + step < p.M ? p.rstd[row + step] : 0.f;
      stage ^= 1;
    } else {
      load_bwd_row<S>(p, row, c0, n, t, cur);
      prefetch_bwd_row<S>(p, row + step, c0, n, t);
    }
    float (&xhat)[S::kVecsPerThread][S::kVec] = cur.x;
    float (&g)[S::kVecsPerThread][S::kVec] = cur.dy;
    // At N = 1 (inv_n == 1 exactly then, and only then), dx and dW are
    // exactly 0: a zero rstd makes xhat, c1r and c2r 0 (rstd = 1/sqrt(eps)
    // would magnify the rounding of the FMA form into dx of about 3e-5); NaN
    // and Inf still propagate. Once per row, nothing per element; testing
    // inv_n, which stays live anyway, keeps the loop's registers as they were.
    // (A constant row with N > 1 cannot be told apart here: the backward sees
    // only mean and rstd.)
    // (LayerNorm only: an RMSNorm row of N = 1 has xhat = x * rstd, not 0.)
    const float mean = cur.mean, rstd = !S::kRms && inv_n == 1.f ? 0.f : cur.rstd;

    const float shift = -mean * rstd;  // xhat = x * rstd + shift (S::kFusedXhat)
    float s_xw = 0.f, s_w = 0.f;
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j) {
      const bool valid = active && static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec < n;
#pragma unroll
      for (int k = 0; k < S::kVec; ++k) {
        if constexpr (S::kFusedXhat) {
          xhat[j][k] = valid ? fmaf(xhat[j][k], rstd, shift) : 0.f;
        } else {
          xhat[j][k] = valid ? (xhat[j][k] - mean) * rstd : 0.f;
        }
        const float wdy = S::kHasWeight ? w[j][k] * g[j][k] : g[j][k];
        s_xw += xhat[j][k] * wdy;
        if constexpr (!S::kRms) s_w += wdy;  // RMSNorm has no c2 (no mean term)
      }
    }
    row_sum2<S::kThreadsPerRow, S::kRowsPerCta, bwd_slot_barriers<S>()>(s_xw, s_w, scratch);
    if constexpr (kClustered) {
      cluster_sum2<S::kCluster>(s_xw, s_w, slots[parity]);
      parity ^= 1;
    }
    // dx = rstd * (w dy - (xhat c1 + c2)) = w dy rstd + xhat c1r + c2r
    // (w dy is formed again where dx needs it: no array of it lives across
    // the reductions; the same product, so the same dx.)
    const float c1r = -s_xw * inv_n * rstd;
    const float c2r = S::kRms ? 0.f : -s_w * inv_n * rstd;

    T* dx = static_cast<T*>(p.dx) + (active ? row : 0) * p.dx_stride + c0;
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j) {
      const i64 col = static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
      if (!active || col >= n) continue;
      float out[S::kVec];
#pragma unroll
      for (int k = 0; k < S::kVec; ++k) {
        const float wdy = S::kHasWeight ? w[j][k] * g[j][k] : g[j][k];
        out[k] = fmaf(wdy, rstd, fmaf(xhat[j][k], c1r, c2r));
        if constexpr (S::kHasWeight) dw[j][k] += g[j][k] * xhat[j][k];
        if constexpr (S::kHasBias) db[j][k] += g[j][k];
      }
      if constexpr (kStaged && S::kResidual) {
        if (p.dz) add_loaded<S::kVec>(sdz + col, out);
      } else if constexpr (early_dz<S>()) {
        if (p.dz) add_held<S::kVec>(cur.dz[j], out);
      } else {
        add_dz<S>(p, row, c0 + col, out);
      }
      store<S::kVec>(dx + col, out);
      store_dresidual<S>(p, row, c0 + col, out);
    }
  }
  if constexpr (kStaged) copy_async_wait<0>();  // the last (empty) row's copies
  if constexpr (kClustered) cluster_arrive();  // done reading the other CTAs' slots

  if constexpr (S::kRowsPerCta > 1) {
    if constexpr (S::kHasWeight) sum_row_slots<S>(dw, slot, t);
    if constexpr (S::kHasBias) sum_row_slots<S>(db, slot, t);
  }

  // A grid of one CTA asked for dW/dB (finishes_alone): its sums are dW/dB,
  // written in w_dtype (16-byte aligned: rt::finish_path), not as a
  // partial row.
  const bool alone = finishes_alone<S, FINISH>(p);
  if (kClustered || slot == 0) {
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j) {
      const i64 col = static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
      if (col >= n) continue;
      if constexpr (S::kHasWeight) {
        if (alone) {
          if (p.dw) store<S::kVec>(static_cast<W*>(p.dw) + col, dw[j]);
        } else if (p.dw_partial) {
          store<S::kVec>(p.dw_partial + partial_row * p.N + slab + col, dw[j]);
        }
      }
      if constexpr (S::kHasBias) {
        if (alone) {
          if (p.db) store<S::kVec>(static_cast<W*>(p.db) + col, db[j]);
        } else if (p.db_partial) {
          store<S::kVec>(p.db_partial + partial_row * p.N + slab + col, db[j]);
        }
      }
    }
  }
  if constexpr (kClustered) cluster_wait();  // keep this CTA's slots alive until every CTA has read them
}

// A partial row's running sums for one access: zeros on the CTA's first visit
// (or when that partial is not wanted), else what the thread stored last time.
template <int VEC>
__device__ __forceinline__ void load_partial(const float* partial, bool first_visit, i64 row_offset, i64 col,
                                             float (&dst)[VEC]) {
  if (first_visit || !partial) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) dst[k] = 0.f;
  } else {
    load<VEC>(partial + row_offset + col, dst);
  }
}

// Rows longer than a tile: a reduction pass over the row's tiles, then dx and
// the partials, which this CTA accumulates in place in the partial rows.
template <class S>
__device__ __forceinline__ void layer_norm_bwd_dx_tiled(const BwdParams& p) {
  static_assert(S::kCluster == 1, "tiled rows take no cluster");
  using T = typename S::T;
  using W = typename S::W;
  using R = typename S::R;
  using Y = typename S::Y;
  float* scratch = row_scratch<S, 2>();  // two sums per warp and row
  const int t = static_cast<int>(threadIdx.x) % S::kThreadsPerRow;
  const int slot = static_cast<int>(threadIdx.x) / S::kThreadsPerRow;
  const i64 n = p.N;
  const i64 partial_row = static_cast<i64>(blockIdx.x) * S::kRowsPerCta + slot;
  const W* weight = static_cast<const W*>(p.weight);
  const float inv_n = 1.0f / static_cast<float>(p.N);

  const i64 first_row = static_cast<i64>(blockIdx.x) * S::kRowsPerCta;
  for (i64 first = first_row; first < p.M; first += static_cast<i64>(gridDim.x) * S::kRowsPerCta) {
    const i64 row = first + slot;
    const bool active = row < p.M;
    const R* x = static_cast<const R*>(p.x) + (active ? row : 0) * p.x_stride;
    const Y* dy = static_cast<const Y*>(p.dy) + (active ? row : 0) * p.dy_stride;
    const float mean = active && !S::kRms ? p.mean[row] : 0.f;
    const float rstd = active ? p.rstd[row] : 0.f;

    // Pass 1: the row sums c1 = mean(xhat * w * dy), c2 = mean(w * dy).
    float s_xw = 0.f, s_w = 0.f;
    for (i64 base = 0; base < n; base += S::kBlockSize) {
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        const i64 col = base + static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
        if (!active || col >= n) continue;
        float xv[S::kVec], g[S::kVec], w[S::kVec];
        load<S::kVec>(x + col, xv);
        load<S::kVec>(dy + col, g);
        if constexpr (S::kHasWeight) load<S::kVec>(weight + col, w);
#pragma unroll
        for (int k = 0; k < S::kVec; ++k) {
          const float wdy = S::kHasWeight ? applied_weight<S>(w[k]) * g[k] : g[k];
          s_xw += (xv[k] - mean) * rstd * wdy;
          if constexpr (!S::kRms) s_w += wdy;
        }
      }
    }
    row_sum2<S::kThreadsPerRow, S::kRowsPerCta>(s_xw, s_w, scratch);
    // dx = rstd * (w dy - (xhat c1 + c2)) = w dy rstd + xhat c1r + c2r
    const float c1r = -s_xw * inv_n * rstd;
    const float c2r = S::kRms ? 0.f : -s_w * inv_n * rstd;

    // Pass 2: dx, and the partials. This thread is the only one to touch its
    // partial elements, so it can accumulate them in place without atomics.
    const bool first_visit = first == first_row;
    T* dx = static_cast<T*>(p.dx) + (active ? row : 0) * p.dx_stride;
    for (i64 base = 0; base < n; base += S::kBlockSize) {
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        const i64 col = base + static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
        if (col >= n) continue;
        float xhat[S::kVec], g[S::kVec];
        if (active) {
          load<S::kVec>(x + col, xhat);
          load<S::kVec>(dy + col, g);
        } else {
#pragma unroll
          for (int k = 0; k < S::kVec; ++k) xhat[k] = g[k] = 0.f;
        }
        float w[S::kVec], dw[S::kVec], db[S::kVec];
        if constexpr (S::kHasWeight) {
          load<S::kVec>(weight + col, w);
          load_partial<S::kVec>(p.dw_partial, first_visit, partial_row * p.N, col, dw);
        }
        if constexpr (S::kHasBias) load_partial<S::kVec>(p.db_partial, first_visit, partial_row * p.N, col, db);
        float out[S::kVec];
#pragma unroll
        for (int k = 0; k < S::kVec; ++k) {
          xhat[k] = (xhat[k] - mean) * rstd;
          const float wdy = S::kHasWeight ? applied_weight<S>(w[k]) * g[k] : g[k];
          out[k] = fmaf(wdy, rstd, fmaf(xhat[k], c1r, c2r));
          if constexpr (S::kHasWeight) dw[k] += g[k] * xhat[k];
          if constexpr (S::kHasBias) db[k] += g[k];
        }
        if (active) {
          add_dz<S>(p, row, col, out);
          store<S::kVec>(dx + col, out);
          store_dresidual<S>(p, row, col, out);
        }
        if constexpr (S::kHasWeight) {
          if (p.dw_partial) store<S::kVec>(p.dw_partial + partial_row * p.N + col, dw);
        }
        if constexpr (S::kHasBias) {
          if (p.db_partial) store<S::kVec>(p.db_partial + partial_row * p.N + col, db);
        }
      }
    }
  }
}

// FINISH: the entry that also finishes dW/dB (cooperative launches; CTAs
// under 512 threads without a cluster, rt::finish_fits). The one-CTA case
// (finishes_alone) needs no finish and runs in the plain entry.
template <class S, bool FINISH>
__device__ __forceinline__ void layer_norm_bwd_dx(const BwdParams& p) {
  allow_dependent_grids();  // bwd_dwdb may take SMs as this grid's CTAs leave (it waits for the whole grid)
  // The dW/dB reduction that follows counts its arrivals from zero.
  if (p.counters && blockIdx.x == 0)
    for (i64 i = threadIdx.x; i < p.num_counters; i += S::kThreads) p.counters[i] = 0;
  if constexpr (S::kSingleTile) {
    layer_norm_bwd_dx_single_tile<S, FINISH>(p);
  } else {
    layer_norm_bwd_dx_tiled<S>(p);
  }
  // dW/dB in this kernel: cooperative launches of CTAs under 512 threads
  // without a cluster (rt::finish_fits).
  if constexpr (FINISH) {
    static_assert(S::kCluster == 1 && S::kThreads < 512, "the finish takes CTAs under 512 threads, no cluster");
    if (p.dw || p.db)
      finish_dwdb<FinishShape<S::kThreads>, typename S::W>(S::kHasWeight ? p.dw_partial : nullptr,
                                                           S::kHasBias ? p.db_partial : nullptr, p.dw, p.db, p.P, p.N);
  }
}

}  // namespace lntune
