// lntune/kernels/bwd_dwdb.cuh — the final dW/dB reduction: sums the P fp32
// partial rows written by the backward (bwd_dx.cuh) into dW and dB.
//
// The grid is (column blocks) x (row splits): CTA (b, s) owns S::kCols
// columns and the partial rows [P s / S, P (s + 1) / S). Each thread holds 4
// consecutive columns (16-byte loads when N % 4 == 0) and sums every R-th
// row of the split in order; the CTA's R row groups are combined by a
// fixed-shape tree in shared memory. With one split, that is dW/dB. With
// more, each CTA writes its sums to a second-level partial row (split s) and
// the last CTA of the column block to finish sums the S second-level rows
// with the same fixed tree, then resets the column block's counter. Which
// CTA finishes last changes nothing in the arithmetic, so the result does
// not depend on timing: dW/dB are bitwise reproducible.
//
// The counters start at zero: bwd_dx zeroes them (BwdParams::counters), and
// the finishing CTA leaves its counter at zero again.
#pragma once

#include "lntune/common.cuh"

namespace lntune {

// The compile-time shape of the reduction: output type, columns per CTA,
// warps, and which of dW and dB it produces.
template <class WeightT, int BLOCK_SIZE, int NUM_WARPS, bool HAS_WEIGHT, bool HAS_BIAS>
struct DwdbShape {
  using W = WeightT;
  static constexpr int kCols = BLOCK_SIZE;  // columns per CTA
  static constexpr int kThreads = 32 * NUM_WARPS;
  static constexpr int kLanes = BLOCK_SIZE / 4;         // threads across the columns, 4 columns each
  static constexpr int kRowGroups = kThreads / kLanes;  // threads down the rows
  static constexpr bool kHasWeight = HAS_WEIGHT;
  static constexpr bool kHasBias = HAS_BIAS;
  static_assert(BLOCK_SIZE >= 32 && kThreads % BLOCK_SIZE == 0, "32 <= block_size <= threads, both powers of two");
  static_assert(HAS_WEIGHT || HAS_BIAS, "a reduction of dW, dB or both");
};

// Adds 4 columns of one fp32 row (col is a multiple of 4; L2 only: the
// second-level rows come from other CTAs).
__device__ __forceinline__ void add4(const float* row, i64 col, i64 n, bool vec_ok, float (&acc)[4]) {
  if (vec_ok) {
    const float4 v = __ldcg(reinterpret_cast<const float4*>(row + col));
    acc[0] += v.x;
    acc[1] += v.y;
    acc[2] += v.z;
    acc[3] += v.w;
  } else {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (col + k < n) acc[k] += __ldcg(row + col + k);
  }
}

// Sums rows [lo, hi) of buf[.][n] (dW in buf[0], dB in buf[1]) in columns
// col..col+3: row group r adds rows lo + r, lo + r + R, ... in order (two at a
// time for loads in flight; the order of the additions is the serial one),
// then a fixed tree over the row groups. Thread (lane, r = 0) ends with the
// sums. Every thread of the CTA calls it.
template <class S>
__device__ __forceinline__ void sum_rows(const float* const (&buf)[2], i64 lo, i64 hi, i64 n, i64 col, bool vec_ok,
                                         int lane, int r, float (&acc)[2][4]) {
  constexpr int R = S::kRowGroups;
  constexpr bool kWant[2] = {S::kHasWeight, S::kHasBias};
#pragma unroll
  for (int g = 0; g < 2; ++g)
#pragma unroll
    for (int k = 0; k < 4; ++k) acc[g][k] = 0.f;
  if (col < n) {
    i64 i = lo + r;
    for (; i + R < hi; i += 2 * R) {
      float a[2][4], b[2][4];
#pragma unroll
      for (int g = 0; g < 2; ++g) {
#pragma unroll
        for (int k = 0; k < 4; ++k) a[g][k] = b[g][k] = 0.f;
        if (kWant[g] && buf[g]) {
          add4(buf[g] + i * n, col, n, vec_ok, a[g]);
          add4(buf[g] + (i + R) * n, col, n, vec_ok, b[g]);
        }
      }
#pragma unroll
      for (int g = 0; g < 2; ++g)
#pragma unroll
        for (int k = 0; k < 4; ++k) acc[g][k] = (acc[g][k] + a[g][k]) + b[g][k];
    }
    if (i < hi) {
#pragma unroll
      for (int g = 0; g < 2; ++g)
        if (kWant[g] && buf[g]) add4(buf[g] + i * n, col, n, vec_ok, acc[g]);
    }
  }
  if constexpr (R > 1) {
    __shared__ float4 tree[S::kHasWeight && S::kHasBias ? 2 : 1][R][S::kLanes];
    constexpr int kFirst = S::kHasWeight ? 0 : 1;
    constexpr int kLast = S::kHasBias ? 1 : 0;
#pragma unroll
    for (int g = kFirst; g <= kLast; ++g)
      tree[g - kFirst][r][lane] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
    __syncthreads();
#pragma unroll
    for (int h = R / 2; h >= 1; h /= 2) {
      if (r < h) {
#pragma unroll
        for (int g = kFirst; g <= kLast; ++g) {
          const float4 o = tree[g - kFirst][r + h][lane];
          acc[g][0] += o.x;
          acc[g][1] += o.y;
          acc[g][2] += o.z;
          acc[g][3] += o.w;
          tree[g - kFirst][r][lane] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
        }
      }
      __syncthreads();
    }
  }
}

template <class S>
__device__ __forceinline__ void layer_norm_bwd_dwdb(const DwdbParams& p) {
  // Launched as bwd_dx's programmatic dependent (rt::launch_dwdb): the
  // partial rows and the zeroed counters are bwd_dx's writes.
  wait_for_prior_grids();
  using W = typename S::W;
  const int lane = static_cast<int>(threadIdx.x) % S::kLanes;
  const int r = static_cast<int>(threadIdx.x) / S::kLanes;
  const i64 n = p.N;
  const i64 col = static_cast<i64>(blockIdx.x) * S::kCols + 4 * lane;
  const bool vec_ok = n % 4 == 0;  // rows 16-byte aligned (the workspace is)
  const i64 splits = gridDim.y, s = blockIdx.y;
  float acc[2][4];
  {
    const float* const buf[2] = {p.dw_partial, p.db_partial};
    sum_rows<S>(buf, p.P * s / splits, p.P * (s + 1) / splits, n, col, vec_ok, lane, r, acc);
  }
  if (splits > 1) {
    // Second level: this split's sums, then the last CTA of the column block
    // to arrive sums all splits (in split order, whoever arrives last).
    __shared__ bool last;
    float* const split[2] = {p.dw_split, p.db_split};
    if (r == 0 && col < n) {
#pragma unroll
      for (int g = 0; g < 2; ++g) {
        if (!split[g]) continue;
#pragma unroll
        for (int k = 0; k < 4; ++k)
          if (col + k < n) split[g][s * n + col + k] = acc[g][k];
      }
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(p.counters + blockIdx.x, 1u) == static_cast<unsigned>(splits - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();
    const float* const buf[2] = {p.dw_split, p.db_split};
    sum_rows<S>(buf, 0, splits, n, col, vec_ok, lane, r, acc);
    if (threadIdx.x == 0) p.counters[blockIdx.x] = 0;  // ready for the next backward
  }
  if (r != 0 || col >= n) return;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (col + k >= n) break;
    if constexpr (S::kHasWeight) {
      if (p.dw) static_cast<W*>(p.dw)[col + k] = from_float<W>(acc[0][k]);
    }
    if constexpr (S::kHasBias) {
      if (p.db) static_cast<W*>(p.db)[col + k] = from_float<W>(acc[1][k]);
    }
  }
}

// ------------------------------------------- the reduction inside the backward

// dW/dB finished by the backward kernel itself (bwd_dx.cuh), in a cooperative
// launch (rt::launch_backward), so that no second kernel runs: for the small
// grids of small M, where that launch costs more than the reduction. After a
// grid barrier (every partial row written) the grid sums the P partial rows.
//
// The CTA's threads (fewer than 512: rt::finish_fits) stand as `lanes` lanes
// of 4 columns by RG row groups, RG = finish_row_groups(P, THREADS): about 4
// rows per group, the rows a thread loads at once, so that a few rows take
// the whole CTA across many columns. An item is a block of 4 * lanes columns
// over all P rows; CTA c takes items c, c + G, ...
// Thread (lane, r) adds rows r, r + RG, ... in order, and a fixed tree then
// sums the row groups into group 0, which writes dW/dB. Nothing depends on
// timing: dW/dB are bitwise reproducible. The launcher takes this path only
// where every item has its own CTA and every thread loads its rows at once
// (rt::finish_fits; call 5: a second round of loads, or a second level of
// row splits behind another grid barrier, made it slower than bwd_dwdb).
template <int THREADS>
struct FinishShape {
  static constexpr int kSumThreads = THREADS;  // every thread sums
  static constexpr int kUnroll = 4;            // rows loaded at once per thread (rt::finish_fits' kItemRows)
  static_assert(THREADS % 32 == 0 && THREADS < 512, "whole warps, fewer than 512 threads (rt::finish_fits)");
};

// Row groups for `rows` rows with `threads` summing threads: the largest
// power of two <= rows / 4, within [1, threads / 8] (lanes stay >= 8).
// rt::finish_row_groups is the same function on the host.
__device__ __forceinline__ int finish_row_groups(i64 rows, int threads) {
  int rg = 1;
  while (rg * 2 <= threads / 8 && rg * 2 * 4 <= rows) rg *= 2;
  return rg;
}

// One item: rows [0, P) of buf[g] (g = 0: dW, 1: dB; null: not wanted) in
// the 4 * lanes columns from c0, written to dW/dB (out_w/out_b, W). Every
// thread of the CTA calls it, with the same rg.
template <class W, class F>
__device__ __forceinline__ void finish_item(const float* buf_w, const float* buf_b, i64 P, i64 n, i64 c0, int rg,
                                            bool vec_ok, void* out_w, void* out_b) {
  __shared__ float4 part[2][F::kSumThreads];
  const int tid = static_cast<int>(threadIdx.x);
  const int lanes = F::kSumThreads / rg;
  const int lane = tid % lanes, r = tid / lanes;
  const i64 col = c0 + 4 * lane;
  const float* const buf[2] = {buf_w, buf_b};
  float acc[2][4];
#pragma unroll
  for (int g = 0; g < 2; ++g)
#pragma unroll
    for (int k = 0; k < 4; ++k) acc[g][k] = 0.f;
  if (col < n) {
    constexpr int U = F::kUnroll;
    i64 i = r;
    // U rows' loads in flight; the additions keep the serial order.
    for (; i + (U - 1) * rg < P; i += U * rg) {
      float a[U][2][4];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int g = 0; g < 2; ++g) {
#pragma unroll
          for (int k = 0; k < 4; ++k) a[u][g][k] = 0.f;
          if (buf[g]) add4(buf[g] + (i + u * rg) * n, col, n, vec_ok, a[u][g]);
        }
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int g = 0; g < 2; ++g)
#pragma unroll
          for (int k = 0; k < 4; ++k) acc[g][k] += a[u][g][k];
    }
    for (; i < P; i += rg)
#pragma unroll
      for (int g = 0; g < 2; ++g)
        if (buf[g]) add4(buf[g] + i * n, col, n, vec_ok, acc[g]);
  }
  if (rg > 1) {
    // A fixed tree over the row groups: group r adds group r + h, h = RG/2 .. 1.
#pragma unroll
    for (int g = 0; g < 2; ++g) part[g][tid] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
    __syncthreads();
    for (int h = rg / 2; h >= 1; h /= 2) {
      if (r < h) {
#pragma unroll
        for (int g = 0; g < 2; ++g) {
          const float4 o = part[g][(r + h) * lanes + lane];
          acc[g][0] += o.x;
          acc[g][1] += o.y;
          acc[g][2] += o.z;
          acc[g][3] += o.w;
          part[g][tid] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
        }
      }
      __syncthreads();
    }
  }
  if (tid < lanes && col < n) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (col + k >= n) break;
      if (out_w) static_cast<W*>(out_w)[col + k] = from_float<W>(acc[0][k]);
      if (out_b) static_cast<W*>(out_b)[col + k] = from_float<W>(acc[1][k]);
    }
  }
  // part is free again: the tree's last reads are behind its last barrier.
}

// The finish over many partial rows (more than 4 a thread in finish_item's
// layout: a grid of about one CTA a SM, whose partial rows are as many as its
// CTAs): an item is 4 columns of dW or of dB over all P rows, and a warp's.
// Lane l adds rows l, l + 32, ... in order, kUnroll of them loaded at once
// (16: up to 512 partial rows in one round, e.g. two CTAs an SM; 8 where
// the columns load one by one), then the warp's butterfly sums the lanes
// (every lane the same bits); warp q of the grid takes items q, q + Q, ...
// Nothing depends on timing, nor on the unroll: lane l adds the same rows in
// the same order. For bf16 N = 1024 at M = 4096 over 132 CTAs this finish
// took 3.2 us after the rows where bwd_dwdb after the kernel took 5.9
// (bench/probes/bwd_team_probe.cu, bench/results/s37, call 1). The 16-row
// loads through warp_item_rows (one pointer a lane, stepped by 32 rows)
// leave the finish without spills where the kernel has a bias (ptxas;
// without one, 24 bytes saved and restored once around finish_dwdb's call,
// at any unroll; the 8-row form through add4 spilled 16 bytes either way, a
// 16-row add4 360; KernelHeaders.TrainingBackwardFinishCompilesWithoutSpills).
struct WarpFinish {
  // Rows a lane loads at once (rt::finish_fits' warp_rows holds the same):
  static constexpr int kUnroll = 16;       // 16-byte rows (N % 4 == 0)
  static constexpr int kUnrollScalar = 8;  // rows whose columns load one by one
};

// Lane `lane`'s rows of one item (columns col..col+3 of buf's P rows): rows
// lane, lane + 32, ... added in that order, U of them loaded at once.
// VEC: one 16-byte load a row (n % 4 == 0), else the columns one by one:
// add4's loads, written out, as measured (through add4, vec_ok a constant,
// the kernel compiled to 64-120 more SASS instructions: bf16 and fp32
// N = 1024, session 49's review).
template <int U, bool VEC>
__device__ __forceinline__ void warp_item_rows(const float* buf, i64 P, i64 n, i64 col, int lane, float (&acc)[4]) {
  for (i64 base = 0; base < P; base += 32 * U) {
    float a[U][4];
    const float* const first = buf + (base + lane) * n + col;
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int k = 0; k < 4; ++k) a[u][k] = 0.f;
      if (base + 32 * u + lane < P) {
        const float* const row = first + static_cast<i64>(32 * u) * n;
        if constexpr (VEC) {
          const float4 v = __ldcg(reinterpret_cast<const float4*>(row));
          a[u][0] = v.x;
          a[u][1] = v.y;
          a[u][2] = v.z;
          a[u][3] = v.w;
        } else {
#pragma unroll
          for (int k = 0; k < 4; ++k)
            if (col + k < n) a[u][k] = __ldcg(row + k);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < 4; ++k) acc[k] += a[u][k];
  }
}

template <class W>
__device__ __forceinline__ void finish_by_warps(const float* buf_w, const float* buf_b, i64 P, i64 n, bool vec_ok,
                                                void* out_w, void* out_b) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const i64 warps = blockDim.x / 32;
  const i64 per = (n + 3) / 4;  // items of one gradient
  const i64 first = static_cast<i64>(blockIdx.x) * warps + threadIdx.x / 32;
  for (i64 item = first; item < 2 * per; item += gridDim.x * warps) {
    const bool bias = item >= per;
    const float* const buf = bias ? buf_b : buf_w;
    if (!buf) continue;  // that gradient is not wanted (the whole warp alike)
    const i64 col = 4 * (item - (bias ? per : 0));
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    if (vec_ok) {
      warp_item_rows<WarpFinish::kUnroll, true>(buf, P, n, col, lane, acc);
    } else {
      warp_item_rows<WarpFinish::kUnrollScalar, false>(buf, P, n, col, lane, acc);
    }
#pragma unroll
    for (int o = 16; o >= 1; o /= 2)
#pragma unroll
      for (int k = 0; k < 4; ++k) acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], o);
    if (lane == 0) {
      W* const out = static_cast<W*>(bias ? out_b : out_w);
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (out && col + k < n) out[col + k] = from_float<W>(acc[k]);
    }
  }
}

// The whole finish; every thread of every CTA calls it (it holds a grid
// barrier). dw_partial/db_partial: the P partial rows (null: that gradient is
// not wanted); dw/db: the outputs. Not inlined: a call after the backward's
// row loop leaves that loop's register allocation as it was (inlined, the
// 64-register kernels of 1024 threads spilled 20-84 bytes, before those
// kernels were left out). The entry's register count is still the larger of
// the two (120 for the finish of 8 warps), which is why only the backward's
// second entry calls it (bwd_dx.cu.j2).
template <class F, class W>
__device__ __noinline__ void finish_dwdb(const float* dw_partial, const float* db_partial, void* dw, void* db, i64 P,
                                         i64 n) {
  grid_barrier();
  const bool vec_ok = n % 4 == 0;  // rows 16-byte aligned (the workspace is)
  const int rg = finish_row_groups(P, F::kSumThreads);
  // rt::finish_fits holds the same choice.
  if ((P + rg - 1) / rg > F::kUnroll) {
    finish_by_warps<W>(dw_partial, db_partial, P, n, vec_ok, dw, db);
    return;
  }
  const i64 width = 4 * (F::kSumThreads / rg);
  for (i64 b = blockIdx.x; b * width < n; b += gridDim.x)
    finish_item<W, F>(dw_partial, db_partial, P, n, b * width, rg, vec_ok, dw, db);
}

}  // namespace lntune
