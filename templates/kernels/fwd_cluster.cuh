// lntune/kernels/fwd_cluster.cuh — LayerNorm forward for rows split over a
// thread-block cluster (sm_90+).
//
// S::kCluster CTAs share a row, each holding S::kBlockSize of its columns in
// registers (S is a RowShape with one row per CTA). Persistent: the grid's
// clusters walk the rows, loading the next row while the current one's
// statistics cross the cluster, so the memory system never idles through the
// exchange. Row statistics: each CTA's count, mean and squared deviations,
// merged in rank order (Chan), one exchange per row through distributed
// shared memory.
#pragma once

#include "lntune/common.cuh"

namespace lntune {

template <class S>
__device__ __forceinline__ void layer_norm_fwd_cluster(const FwdParams& p) {
  static_assert(S::kCluster > 1 && S::kRowsPerCta == 1 && S::kSingleTile, "a row over a cluster, in registers");
  using T = typename S::T;
  using W = typename S::W;
  constexpr int kSlab = S::kBlockSize;  // columns per CTA
  float* scratch = row_scratch<S, 1>();
  // This CTA's count, mean and squared deviations, double-buffered by row.
  float(*slots)[3] = cluster_slots<S::kCluster, 3>();
  const int t = static_cast<int>(threadIdx.x);
  const i64 slab = static_cast<i64>(cluster_rank()) * kSlab;  // this CTA's first column
  const i64 n = p.N - slab;                                  // columns from there on
  const float count = static_cast<float>(n < kSlab ? (n > 0 ? n : 0) : kSlab);
  const T* x = static_cast<const T*>(p.x) + slab;
  T* y = static_cast<T*>(p.y) + slab;
  const W* weight = static_cast<const W*>(p.weight) + slab;
  const W* bias = static_cast<const W*>(p.bias) + slab;
  const i64 step = cluster_count();

  i64 row = cluster_index();
  float v[S::kVecsPerThread][S::kVec];
  load_row_part<S>(row < p.M, n, t, v, x + row * p.x_stride);
  int parity = 0;
  for (; row < p.M; row += step) {
    float next[S::kVecsPerThread][S::kVec];
    load_row_part<S>(row + step < p.M, n, t, next, x + (row + step) * p.x_stride);

    const float sum = row_sum<S::kThreads, 1>(part_sum<S>(v), scratch);
    const float part_mean = count > 0.f ? sum / count : 0.f;
    const float sq = row_sum<S::kThreads, 1>(part_squares<S>(v, part_mean, n, t), scratch);
    const Welford stats = cluster_welford<S::kCluster>(Welford{count, part_mean, sq}, slots[parity]);
    parity ^= 1;
    const float mean = stats.mean;
    const float var = stats.m2 / static_cast<float>(p.N);
    const float rstd = 1.0f / sqrtf(var + p.eps);
    const float scale = xhat_scale(var, rstd);
    const float shift = -mean * scale;
    if (t == 0 && slab == 0) {
      if (p.mean) p.mean[row] = mean;
      if (p.rstd) p.rstd[row] = rstd;
    }

    T* out_row = y + row * p.y_stride;
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j) {
      const i64 col = static_cast<i64>(j * S::kThreads + t) * S::kVec;
      if (col >= n) continue;
      normalize_store<S>(out_row, weight, bias, col, v[j], mean, scale, shift);
    }
#pragma unroll
    for (int j = 0; j < S::kVecsPerThread; ++j)
#pragma unroll
      for (int k = 0; k < S::kVec; ++k) v[j][k] = next[j][k];
  }
  cluster_barrier();  // no CTA leaves while another may still read its slots
}

}  // namespace lntune
