// The search space: every valid Config for a (kernel, dtype, N), by explicit
// rules, and the default heuristic used when nothing was tuned.
//
// Rules (fwd, bwd_dx), with threads_per_row = 32 * num_warps / rows_per_cta
// and items = block_size / threads_per_row:
//   * num_warps in {1, 2, 4, 8, 16, 32}; rows_per_cta a power of two.
//   * single tile: block_size = next_pow2(N); 1 <= items <= max_items
//     (32 fwd, 16 bwd_dx: registers); rows_per_cta * block_size <= 16384.
//   * tiled (N > 1024 only): block_size in {1024, 2048, 4096, 8192} below
//     next_pow2(N), rows_per_cta = 1, 4 <= num_warps, 2 <= items <= 16.
//   * clusters (sm_90+, N > 2048): cluster_size C in {2, 4, 8} CTAs share a
//     row, block_size = next_pow2(ceil(N / C)) columns each (no CTA left
//     empty), rows_per_cta = 1, items as for a single tile, num_warps >= 4.
//   * bwd_dx: group_size_m (CTAs, or clusters, of the persistent grid) in
//     {1, 2, 4, 8} * sm_count / cluster_size, clipped to the number of row
//     groups ceil(M / rows_per_cta).
//   * bwd_dx, wide rows (sm_90+, N > 8192; gen::is_wide_bwd: cluster_size > 1
//     and rows_per_cta = rows staged per CTA in {2, 3, 4}): see
//     add_wide_bwd in space.cpp. Never the default (not yet measured).
// Rules (bwd_dwdb): block_size (columns per CTA) in {32, 64, 128, 256} with
// block_size <= 32 * num_warps <= 1024 and at most 16 threads per column;
// group_size_m = row splits S (a 2D grid of column blocks x S splits, the
// last CTA per column block summing the splits): 1, and enough splits for
// 1, 2 and 4 CTAs per SM, at most max_dwdb_splits(N) and P / 8.
#pragma once

#include <cstdint>
#include <vector>

#include "lntune/types.hpp"

namespace lntune::gen {

struct SpaceQuery {
  Kernel kernel = Kernel::fwd;
  DType dtype = DType::f32;
  std::int64_t n = 0;
  std::int64_t m = 4096;   // rows; bounds group_size_m
  int sm_count = 132;      // of the target GPU (H100 SXM: 132)
  int cc = 90;             // compute capability (major * 10 + minor): clusters need 90
};

std::vector<Config> search_space(const SpaceQuery& q);

// The default config for untuned shapes. It began as the Triton tutorial's
// heuristic (block_size = next_pow2(N), num_warps = min(max(block_size/256,
// 1), 8)) and was refit to sweeps of the whole space on an H100
// (bench/kernel_sweep.cpp): a thread holds 16 elements of a row, CTAs have at
// least 64 threads (short rows share one; bwd_dx at M <= 8192: two rows per
// CTA for rows of up to 256 threads), rows needing more than 512 threads are split over a
// cluster (backward, sm_90+) or tiled; bwd_dx runs about 512 threads' worth
// of persistent CTAs per SM, but at least 8 rows per CTA; bwd_dwdb: 512
// threads, 32 columns per CTA and one split when that gives half the SMs a
// CTA, else 128 columns and splits for about a CTA per SM.
Config default_config(const SpaceQuery& q);

std::int64_t next_pow2(std::int64_t v);

// The most row splits bwd_dwdb takes at N columns (its second-level rows
// live in the backward's workspace: at most 32 rows, and 4 MiB per gradient).
std::int64_t max_dwdb_splits(std::int64_t n);

}  // namespace lntune::gen

namespace lntune::gen {

// The N values `lntune tune` covers by default: the Triton tutorial's grid
// (512 * i, i = 2..31), 32768 and 65536, and hidden sizes of popular models.
std::vector<std::int64_t> default_n_grid();

}  // namespace lntune::gen
