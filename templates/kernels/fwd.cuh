// lntune/kernels/fwd.cuh — LayerNorm forward: y = (x - mean) * rstd * weight + bias.
//
// One row per S::kThreadsPerRow threads, S::kRowsPerCta rows per CTA (S is a
// RowShape). A row that fits one tile (S::kSingleTile) stays in registers:
// one read of x, two passes over registers for mean and variance, one write
// of y. Longer rows are processed in tiles of S::kBlockSize: a statistics
// pass (Welford, merged once a tile), then the output pass. Writes mean and
// rstd (fp32) when the pointers are not null.
#pragma once

#include "lntune/common.cuh"

namespace lntune {

template <class S>
__device__ __forceinline__ void layer_norm_fwd(const FwdParams& p) {
  static_assert(S::kCluster == 1, "rows split over a cluster: layer_norm_fwd_cluster (fwd_cluster.cuh)");
  using T = typename S::T;
  using W = typename S::W;
  // Cross-warp reductions: a float per warp and row; three for Welford statistics.
  float* scratch = row_scratch<S, S::kSingleTile ? 1 : 3>();
  const int t = static_cast<int>(threadIdx.x) % S::kThreadsPerRow;
  const i64 row = static_cast<i64>(blockIdx.x) * S::kRowsPerCta + static_cast<int>(threadIdx.x) / S::kThreadsPerRow;
  const bool active = row < p.M;
  const i64 n = p.N;
  const T* x = static_cast<const T*>(p.x) + (active ? row : 0) * p.x_stride;
  T* y = static_cast<T*>(p.y) + (active ? row : 0) * p.y_stride;
  const W* weight = static_cast<const W*>(p.weight);
  const W* bias = static_cast<const W*>(p.bias);

  float v[S::kVecsPerThread][S::kVec];  // single tile: this thread's part of the row
  float mean, var;
  if constexpr (S::kSingleTile) {
    load_row_part<S>(active, n, t, v, x);
    mean = row_sum<S::kThreadsPerRow, S::kRowsPerCta>(part_sum<S>(v), scratch) / static_cast<float>(n);
    const float sq = part_squares<S>(v, mean, n, t);
    var = row_sum<S::kThreadsPerRow, S::kRowsPerCta>(sq, scratch) / static_cast<float>(n);
  } else {
    // Each thread's share of a tile: its mean and squared deviations (two
    // passes over registers), merged into the running statistics once a tile.
    Welford stats{0.f, 0.f, 0.f};
    for (i64 base = 0; base < n; base += S::kBlockSize) {
      float tile[S::kVecsPerThread][S::kVec];
      float sum = 0.f;
      int valid = 0;
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        const i64 col = base + static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
        if (active && col < n) {
          load<S::kVec>(x + col, tile[j]);
          ++valid;
#pragma unroll
          for (int k = 0; k < S::kVec; ++k) sum += tile[j][k];
        }
      }
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
    stats = row_welford<S::kThreadsPerRow, S::kRowsPerCta>(stats, scratch);
    mean = stats.mean;
    var = stats.m2 / static_cast<float>(n);
  }
  const float rstd = 1.0f / sqrtf(var + p.eps);
  const float scale = xhat_scale(var, rstd);
  const float shift = -mean * scale;
  if (!active) return;  // no barrier follows
  if (t == 0) {
    if (p.mean) p.mean[row] = mean;
    if (p.rstd) p.rstd[row] = rstd;
  }

  if constexpr (S::kSingleTile) {
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j) {
      const i64 col = static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
      if (col >= n) continue;
      normalize_store<S>(y, weight, bias, col, v[j], mean, scale, shift);
    }
  } else {
    for (i64 base = 0; base < n; base += S::kBlockSize) {
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        const i64 col = base + static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
        if (col >= n) continue;
        float in[S::kVec];
        load<S::kVec>(x + col, in);
        normalize_store<S>(y, weight, bias, col, in, mean, scale, shift);
      }
    }
  }
}

}  // namespace lntune
