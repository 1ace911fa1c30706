// The search space: every valid Config for a (kernel, dtype, N), by explicit
// rules, and the default heuristic used when nothing was tuned.
//
// Rules (fwd, bwd_dx), with threads_per_row = 32 * num_warps / rows_per_cta
// and items = block_size / threads_per_row:
//   * num_warps in {1, 2, 4, 8, 16, 32}; rows_per_cta a power of two; but
//     rows of other than a power of two of threads (gen::has_segmented_rows,
//     no residual, N not a power of two): block_size = N, a multiple of the
//     16-byte access vec, threads_per_row = N / (vec k) a multiple of 8, k
//     accesses a thread (items <= max_items, half above 16 warps), rows as
//     many as make whole warps, and twice and four times that (at most 1024
//     threads, rows_per_cta * N <= 16384): add_segmented_tiles in space.cpp.
//   * single tile: block_size = next_pow2(N); 1 <= items <= max_items
//     (32 fwd, 16 bwd_dx: registers); rows_per_cta * block_size <= 16384.
//   * tiled (N > 1024 only): block_size in {1024, 2048, 4096, 8192} below
//     next_pow2(N), rows_per_cta = 1, 4 <= num_warps, 2 <= items <= 16.
//   * clusters (sm_90+, N > 2048): cluster_size C in {2, 4, 8} CTAs share a
//     row, block_size = next_pow2(ceil(N / C)) columns each (no CTA left
//     empty), rows_per_cta = 1, items as for a single tile, num_warps >= 4.
//   * fwd with a slab in shared memory (sm_90+, N > kSmemForwardMinN = 8192): a
//     cluster of C in {1, 2, 4, 8, 16} CTAs per row, block_size =
//     next_pow2(ceil(N / C)) columns each (no CTA left empty) of 16 KB to
//     227 KB of x, num_warps in {4, 8, 16} with more than max_items elements
//     per thread (gen::forward_in_smem); group_size_m 0 (a cluster per row)
//     or one wave of persistent clusters.
//   * fwd, wide rows (sm_90+, N > 16384; gen::is_wide_fwd: cluster_size > 1
//     and rows_per_cta = rows staged per CTA in {2, 3, 4}): see add_wide_fwd
//     in space.cpp.
//   * bwd_dx: group_size_m (CTAs, or clusters, of the persistent grid) in
//     {1, 2, 4, 8} * sm_count / cluster_size, clipped to the number of row
//     groups ceil(M / rows_per_cta).
//   * bwd_dx, wide rows (sm_90+, N > 8192; gen::is_wide_bwd: cluster_size > 1
//     and rows_per_cta = rows staged per CTA in {2, 3, 4}): see
//     add_wide_bwd in space.cpp.
// default_config on sm_90 picks from the shared-memory and wide-row configs
// for long rows (forward N > 16384, backward N > 8192; measured on an H100):
// the first, in its order of preference, that the caller's filter accepts.
// Rules (bwd_dwdb): block_size (columns per CTA) in {32, 64, 128, 256} with
// block_size <= 32 * num_warps <= 1024 and at most 16 threads per column;
// group_size_m = row splits S (a 2D grid of column blocks x S splits, the
// last CTA per column block summing the splits): 1, and enough splits for
// 1, 2 and 4 CTAs per SM, at most max_dwdb_splits(N) and P / 8.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
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
  // A fused residual add (the forward also holds the residual's row, the
  // backward also reads dz): only default_config reads it; the search space
  // is the same.
  bool residual = false;
  Norm norm = Norm::layer;  // likewise (the fused backward's rule depends on it)
  // The target GPU's DRAM bytes per SM cycle (rt::DeviceInfo); 0: unknown,
  // taken as an H100's. Only default_config reads it (fast_memory).
  double dram_bytes_per_sm_cycle = 0;
};

// Where the memory outruns the SMs (at least this many DRAM bytes per SM
// cycle: an H200's 18.8, not an H100's 12.8), the kernels of a row are bound
// by the instructions each SM issues, not by DRAM, and default_config takes
// the rules measured on such a GPU (fewer threads a row, other stages and
// grids for long rows; see fast_memory_default in space.cpp).
inline constexpr double kFastMemoryBytesPerSmCycle = 16.0;
inline bool fast_memory(const SpaceQuery& q) { return q.dram_bytes_per_sm_cycle >= kFastMemoryBytesPerSmCycle; }

// Which shared-memory configs (fwd_smem.cuh, fwd_wide.cuh, bwd_dx_wide.cuh) default_config
// may return: the query sizes their slabs by the row dtype alone, so the
// caller, who knows the call's traits and vector width, gives the instance a
// config makes, none where it is invalid (the runtime: gen::make_instance).
// The default reads the instance too: a wide backward that stages x alone
// (gen::wide_stages_dy) is taken only where no slab stages x and dy. Empty:
// all of them, as the query sizes them.
using ConfigFilter = std::function<std::optional<InstanceKey>(const Config&)>;

// That filter for a call with traits `t` at N = n and vector width `vec`:
// a config's instance (gen::make_instance), none where the generator turns
// it down.
ConfigFilter instances_for(const Traits& t, std::int64_t n, int vec);

std::vector<Config> search_space(const SpaceQuery& q);

// Rows longer than this get forward candidates with a slab in shared memory
// (a CTA of 512 threads holds 16384 columns in registers, yet at 8192 <
// N <= 16384 a 16-bit row staged in one CTA's shared memory measured faster:
// see smem_forward_default).
inline constexpr std::int64_t kSmemForwardMinN = 8192;

// The default config for untuned shapes. It began as the Triton tutorial's
// heuristic (block_size = next_pow2(N), num_warps = min(max(block_size/256,
// 1), 8)) and was refit to sweeps of the whole space on an H100
// (bench/kernel_sweep.cpp): a thread holds 16 elements of a row, CTAs have at
// least 64 threads (short rows share one; bwd_dx at M <= 8192: two rows per
// CTA for rows of up to 128 threads), rows needing more than 512 threads are split over a
// cluster (backward, sm_90+) or tiled; bwd_dx runs about 512 threads' worth
// of persistent CTAs per SM, but at least 8 rows per CTA; bwd_dwdb: 512
// threads, 32 columns per CTA and one split when that gives half the SMs a
// CTA, else 128 columns and splits for about a CTA per SM.
// M enters only where it was measured: the backward's paired rows at
// M <= 8192 and the grid sizes clipped to the rows. The forward does not
// depend on M. At large M the 16-bit defaults measured within 1% of the best
// config (bench/NOTES.md); the fp32 gap there (88-89% against 99% of copy at
// N = 1024..4096) is not an M rule, and the bandwidth-regime bucket of the
// default grid now tunes those keys. A further M rule waits for that
// bucket's measured `vs default` column.
// Long rows on sm_90 take the first shared-memory config that `accept`
// takes, else the register kernels' default. A fused residual add
// (q.residual) has its own measured rules: the forward at 8192 < N <= 16384
// runs 8192-column tiles in 1024 threads, the register backward one 16-byte access per
// thread and row input, the wide backward 32 warps on 16384-column slices.
Config default_config(const SpaceQuery& q, const ConfigFilter& accept = {});

// The rows from which default_config no longer depends on M on a GPU of
// `sm_count` SMs: max(8193, 512 * sm_count). Every M rule's threshold (M <=
// 8192 the highest) and every grid's clip to the rows (at most 8 CTAs a SM,
// up to 64 rows a CTA for the shortest rows) lie below it;
// Default.NoMRuleFromTheBound checks it. The launcher keys its default plans
// by M below it (rt::PlanKey::m).
std::int64_t default_m_bound(int sm_count);

std::int64_t next_pow2(std::int64_t v);

// v rounded up to a multiple of grain (> 0): tiles and slabs of a multiple
// of a CTA's accesses, the launcher's workspace sizes.
template <class T>
constexpr T round_up(T v, T grain) {
  return (v + grain - 1) / grain * grain;
}

// The most row splits bwd_dwdb takes at N columns (its second-level rows
// live in the backward's workspace: at most 32 rows, and 4 MiB per gradient).
std::int64_t max_dwdb_splits(std::int64_t n);

}  // namespace lntune::gen

namespace lntune::gen {

// `lntune tune`'s default grid has two M buckets (cache::m_bucket):
//   * training: M = kTrainingM rows over default_n_grid();
//   * bandwidth regime: x of kBandwidthBytes, M = bandwidth_m(N, dtype), over
//     the sparser bandwidth_n_grid(). Its M depends on N and the dtype, so
//     its keys fall in M buckets 2..5 on an H100 (132 SMs): bf16 N = 65536
//     gives M = 4096, the training key itself, and fp32 N = 16384 M = 8192
//     shares the training bucket; the tuner then tunes such a key once.
// The launcher covers the N in between with its nearest-N rule, and other M
// with its nearest-M-bucket rule (runtime/cache_binding.hpp).

// The training bucket's rows.
inline constexpr std::int64_t kTrainingM = 4096;

// The N values of the training bucket: the Triton tutorial's grid
// (512 * i, i = 2..31), 32768 and 65536, and hidden sizes of popular models.
std::vector<std::int64_t> default_n_grid();

// The size of x in the bandwidth-regime bucket: 512 MiB, the benchmark's
// (bench/bench_layernorm.py --bandwidth-mib), well past any GPU's L2.
inline constexpr std::int64_t kBandwidthBytes = std::int64_t{512} << 20;

// The N values of the bandwidth-regime bucket: the bandwidth targets,
// powers of four from 256 to 262144 (every other N of the benchmark's
// powers of two; the nearest-N rule is within a factor of 2 of one of them).
// Sparse on purpose: a target of x = 512 MiB costs about 3-4 s to tune
// (fwd) or 4-5 s (bwd with its dW/dB), mostly building and checking 512 MiB
// tensors (random inputs, CPU reference, verification), against 0.2-1 s at
// M = 4096 (an H100 cold tune's --trace of 2026-11-23): about
// 110-120 s for the bucket's 30 targets on an H100, and 156 more NVRTC
// compilations (block sizes 256 and the N = 262144 clusters).
std::vector<std::int64_t> bandwidth_n_grid();

// Rows giving x of at least kBandwidthBytes: ceil(kBandwidthBytes / (N *
// size of dtype)), as the benchmark computes them. Throws lntune::Error for
// N < 1.
std::int64_t bandwidth_m(std::int64_t n, DType dtype);

}  // namespace lntune::gen
