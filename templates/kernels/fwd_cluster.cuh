// lntune/kernels/fwd_cluster.cuh — the forward (fwd.cuh: both norms, every
// variant) for rows split over a thread-block cluster (sm_90+).
//
// S::kCluster CTAs share a row, each holding S::kBlockSize of its columns in
// registers (S is a RowShape with one row per CTA). Persistent: the grid's
// clusters walk the rows, loading the next row while the current one's
// statistics cross the cluster, so the memory system never idles through the
// exchange. Row statistics: each CTA's count, mean and squared deviations,
// merged in rank order (Chan), one exchange per row through distributed
// shared memory. RMSNorm: each CTA's sum of squares, summed in rank order.
// With a residual, z = x + residual is formed as a row is loaded and written
// out while it is processed.
#pragma once

#include "lntune/common.cuh"

namespace lntune {

template <class S>
__device__ __forceinline__ void layer_norm_fwd_cluster(const FwdParams& p) {
  static_assert(S::kCluster > 1 && S::kRowsPerCta == 1 && S::kSingleTile, "a row over a cluster, in registers");
  using T = typename S::T;
  using W = typename S::W;
  using R = typename S::R;
  using Y = typename S::Y;
  constexpr int kSlab = S::kBlockSize;  // columns per CTA
  float* scratch = row_scratch<S, 1>();
  // This CTA's count, mean and squared deviations, double-buffered by row.
  float(*slots)[3] = cluster_slots<S::kCluster, 3>();
  const int t = static_cast<int>(threadIdx.x);
  const i64 slab = static_cast<i64>(cluster_rank()) * kSlab;  // this CTA's first column
  const i64 n = p.N - slab;                                  // columns from there on
  const float count = static_cast<float>(n < kSlab ? (n > 0 ? n : 0) : kSlab);
  const T* x = static_cast<const T*>(p.x) + slab;
  Y* y = static_cast<Y*>(p.y) + slab;
  const R* residual = static_cast<const R*>(p.residual) + slab;  // unused without a residual
  R* z = static_cast<R*>(p.z) + slab;
  const W* weight = static_cast<const W*>(p.weight) + slab;
  const W* bias = static_cast<const W*>(p.bias) + slab;
  const i64 step = cluster_count();

  // A row's part in `dst`: x, or z = x + residual.
  const auto load_row = [&](i64 r, float (&dst)[S::kVecsPerThread][S::kVec]) {
    if constexpr (S::kResidual) {
      float res[S::kVecsPerThread][S::kVec];
      load_row_part<S>(r < p.M, n, t, dst, x + r * p.x_stride, res, residual + r * p.residual_stride);
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) add_residual<S>(dst[j], res[j]);
    } else {
      load_row_part<S>(r < p.M, n, t, dst, x + r * p.x_stride);
    }
  };

  i64 row = cluster_index();
  float v[S::kVecsPerThread][S::kVec];
  load_row(row, v);
  int parity = 0;
  for (; row < p.M; row += step) {
    float next[S::kVecsPerThread][S::kVec];
    load_row(row + step, next);

    float mean, var;
    if constexpr (S::kRms) {
      float sq = row_sum<S::kThreads, 1>(part_squares<S>(v, 0.f, n, t), scratch);
      float unused = 0.f;
      cluster_sum2<S::kCluster>(sq, unused, slots[parity]);
      mean = 0.f;
      var = sq / static_cast<float>(p.N);
    } else {
      const float sum = row_sum<S::kThreads, 1>(part_sum<S>(v), scratch);
      const float part_mean = count > 0.f ? sum / count : 0.f;
      const float sq = row_sum<S::kThreads, 1>(part_squares<S>(v, part_mean, n, t), scratch);
      const Welford stats = cluster_welford<S::kCluster>(Welford{count, part_mean, sq}, slots[parity]);
      mean = stats.mean;
      var = stats.m2 / static_cast<float>(p.N);
    }
    parity ^= 1;
    const RowAffine a = row_affine<S>(p, row, mean, var, t == 0 && slab == 0);
    const float scale = a.scale, shift = a.shift;

    if constexpr (S::kResidual) {
      R* z_row = z + row * p.z_stride;
#pragma unroll
      for (int j = 0; j < S::kVecsPerThread; ++j) {
        const i64 col = static_cast<i64>(j * S::kThreads + t) * S::kVec;
        if (col < n) store_global<S::kVec, true>(z_row + col, v[j]);
      }
    }
    Y* out_row = y + row * p.y_stride;
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j) {
      const i64 col = static_cast<i64>(j * S::kThreads + t) * S::kVec;
      if (col >= n) continue;
      normalize_store<S, true>(out_row, weight, bias, col, v[j], mean, scale, shift);
    }
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j)
#pragma unroll
      for (int k = 0; k < S::kVec; ++k) v[j][k] = next[j][k];
  }
  cluster_barrier();  // no CTA leaves while another may still read its slots
}

}  // namespace lntune
