// lntune/kernels/fwd.cuh — the forward of both norms:
//   LayerNorm  y = (x - mean) * rstd * w + b,  rstd = 1/sqrt(var + eps)
//   RMSNorm    y = x * rstd * w + b,           rstd = 1/sqrt(mean(x^2) + eps)
// with the variants of RowShape: a fused residual add (z = x + residual is
// written out and normalised instead of x), zero-centred gamma (w -> 1 + w),
// an output dtype of its own.
//
// One row per S::kThreadsPerRow threads, S::kRowsPerCta rows per CTA (S is a
// RowShape). A row that fits one tile (S::kSingleTile) stays in registers:
// one read of x, two passes over registers for mean and variance, one write
// of y. Longer rows are processed in tiles of S::kBlockSize: a statistics
// pass (Welford, merged once a tile; RMSNorm: a sum of squares), then the
// output pass (which reads z back when there is a residual). Writes mean
// (LayerNorm) and rstd (fp32) when the pointers are not null.
#pragma once

#include "lntune/common.cuh"

namespace lntune {

template <class S>
__device__ __forceinline__ void layer_norm_fwd(const FwdParams& p) {
  static_assert(S::kCluster == 1, "rows split over a cluster: layer_norm_fwd_cluster (fwd_cluster.cuh)");
  using T = typename S::T;
  using W = typename S::W;
  using R = typename S::R;
  using Y = typename S::Y;
  // Cross-warp reductions: a float per warp and row; two for the single tile
  // (the mean's and the variance's areas: no barrier between the reads of
  // one and the writes of the other), three for Welford statistics.
  float* scratch = row_scratch<S, S::kSingleTile ? 2 : 3>();
  const int t = static_cast<int>(threadIdx.x % S::kThreadsPerRow);
  const int local = static_cast<int>(threadIdx.x / S::kThreadsPerRow);  // the row's place in the CTA
  const i64 row = static_cast<i64>(blockIdx.x) * S::kRowsPerCta + local;
  const bool active = row < p.M;
  const i64 n = p.N;
  const T* x = static_cast<const T*>(p.x) + (active ? row : 0) * p.x_stride;
  Y* y = static_cast<Y*>(p.y) + (active ? row : 0) * p.y_stride;
  const W* weight = static_cast<const W*>(p.weight);
  const W* bias = static_cast<const W*>(p.bias);
  // The residual stream and z (unused without a residual).
  const R* residual = static_cast<const R*>(p.residual) + (active ? row : 0) * p.residual_stride;
  R* z = static_cast<R*>(p.z) + (active ? row : 0) * p.z_stride;

  float v[S::kVecsPerThread][S::kVec];  // single tile: this thread's part of the row
  float mean, var;
  if constexpr (S::kSingleTile) {
    if constexpr (S::kResidual) {
      float r[S::kVecsPerThread][S::kVec];
      load_row_part<S>(active, n, t, v, x, r, residual);
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        add_residual<S>(v[j], r[j]);
        const i64 col = static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
        if (active && col < n) store<S::kVec>(z + col, v[j]);
      }
    } else {
      load_row_part<S>(active, n, t, v, x);
    }
    // One division a row (a multiply by 1/N for each statistic: within the
    // ulp the error analysis gives the division, tuner/compare.hpp).
    const float inv_n = 1.0f / static_cast<float>(n);
    if constexpr (S::kRms) {
      mean = 0.f;
    } else {
      mean = row_sum<S::kThreadsPerRow, S::kRowsPerCta, false>(part_sum<S>(v), scratch) * inv_n;
    }
    const float sq = part_squares<S>(v, mean, n, t);
    var = row_sum<S::kThreadsPerRow, S::kRowsPerCta, false>(sq, scratch + row_scratch_area<S>()) * inv_n;
  } else {
    // Each thread's share of a tile: its mean and squared deviations (two
    // passes over registers), merged into the running statistics once a tile.
    // RMSNorm: its sum of squares.
    Welford stats{0.f, 0.f, 0.f};
    float sumsq = 0.f;
    for (i64 base = 0; base < n; base += S::kBlockSize) {
      float tile[S::kVecsPerThread][S::kVec];
      float sum = 0.f;
      int valid = 0;
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        const i64 col = base + static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
        if (active && col < n) {
          load<S::kVec>(x + col, tile[j]);
          if constexpr (S::kResidual) {
            float r[S::kVec];
            load<S::kVec>(residual + col, r);
            add_residual<S>(tile[j], r);
            store<S::kVec>(z + col, tile[j]);
          }
          ++valid;
#pragma unroll
          for (int k = 0; k < S::kVec; ++k) {
            if constexpr (S::kRms) {
              sumsq += tile[j][k] * tile[j][k];
            } else {
              sum += tile[j][k];
            }
          }
        }
      }
      if constexpr (!S::kRms) {
        if (valid == 0) continue;
        const float count = static_cast<float>(valid * S::kVec);
        const float part_mean = sum / count;
        float sq = 0.f;
#pragma unroll
        for (int j = 0; j < S::kVecsPerThread; ++j) {
          if (j < valid) {  // the valid accesses are the first ones
#pragma unroll
            for (int k = 0; k < S::kVec; ++k) sq += (tile[j][k] - part_mean) * (tile[j][k] - part_mean);
          }
        }
        stats = welford_merge(stats, Welford{count, part_mean, sq});
      }
    }
    if constexpr (S::kRms) {
      mean = 0.f;
      var = row_sum<S::kThreadsPerRow, S::kRowsPerCta>(sumsq, scratch) / static_cast<float>(n);
    } else {
      stats = row_welford<S::kThreadsPerRow, S::kRowsPerCta>(stats, scratch);
      mean = stats.mean;
      var = stats.m2 / static_cast<float>(n);
    }
  }
  // var: the variance (LayerNorm) or the mean square (RMSNorm).
  // Several rows a CTA: their statistics go out together (put_cta_stats,
  // store_cta_stats: every thread reaches the put); one row: by its t == 0.
  constexpr bool kCtaStats = S::kRowsPerCta > 1;
  const RowAffine a = row_affine<S>(p, row, mean, var, !kCtaStats && active && t == 0);
  if constexpr (kCtaStats) put_cta_stats<S>(p, local, active && t == 0, mean, a.rstd);
  // An inactive row has nothing to write: its threads return, except where
  // the CTA's statistics are stored by warp 0, all of whose lanes must reach
  // store_cta_stats (session 54's first version returned them: the rstd of
  // the last CTA's rows went unwritten where a row's lanes held those
  // entries, gpu_norms_test at M = 67); there they skip every column.
  if (!kCtaStats && !active) return;
  const i64 n_out = active ? n : 0;
  const float scale = a.scale, shift = a.shift;

  if constexpr (S::kSingleTile) {
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j) {
      const i64 col = static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
      if (col >= n_out) continue;
      normalize_store<S>(y, weight, bias, col, v[j], mean, scale, shift);
    }
  } else {
    // The normalised row: z (written by this thread in the statistics pass,
    // same columns) or x.
    const R* src;
    if constexpr (S::kResidual) {
      src = z;
    } else {
      src = x;
    }
    for (i64 base = 0; base < n_out; base += S::kBlockSize) {
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        const i64 col = base + static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
        if (col >= n_out) continue;
        float in[S::kVec];
        load<S::kVec>(src + col, in);
        normalize_store<S>(y, weight, bias, col, in, mean, scale, shift);
      }
    }
  }
  if constexpr (kCtaStats) store_cta_stats<S>(p, row - local);
}

}  // namespace lntune
