// Kernel instances: from (traits, config, N, vector width) to the key that
// names one compiled kernel, and from the key to readable CUDA source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lntune/types.hpp"

namespace lntune::gen {

// Registers per thread bound the elements a thread may hold per tile: a CTA
// of 1024 threads gets at most 64 registers per thread, so it holds half;
// so do CTAs of 17-31 warps (rows of other than a power of two of threads:
// the backward spilled 124-296 bytes at 16 elements a thread in 576-768).
int max_items_per_thread(Kernel k, int num_warps);

// Widest vector (elements) a dtype allows: 16 bytes per access.
int max_vec(DType d);

// The forward stages each CTA's slab of a row in shared memory (one read of
// x; kernels/fwd_smem.cuh) when the row fits the CTA (or the cluster) and the
// slab would give a thread more than max_items_per_thread elements: a config
// holds its slab in registers when it can, else in shared memory.
bool forward_in_smem(const Config& config, std::int64_t n);

// A single tile of other than a power of two: one CTA, block_size N rounded
// up to a multiple of its threads' accesses (the forward in registers or
// shared memory, the backward in registers; search_space). Every other
// block_size is a power of two but the wide-row backward's slabs (clusters).
bool is_odd_tile(const Config& config);

// Rows of other than a power of two of threads: num_warps or rows_per_cta
// not a power of two (the single tile in one CTA of fwd in registers or of
// bwd_dx, whose row is exactly N rounded up to its accesses; 1152 bf16
// columns in rows of 144 threads, two a CTA of 9 warps). Their row sums go
// by segments of row_segment_lanes lanes (common.cuh), a warp may hold the
// end of one row and the start of the next. Never the wide kernels (their
// rows_per_cta counts staged rows).
bool has_segmented_rows(const InstanceKey& key);
bool has_segmented_rows(Kernel kernel, const Config& config);
// The CTAs an SM a bwd_dx entry asks its registers to allow
// (__launch_bounds__'s second figure; 0: none). CTAs of fewer than 512
// threads: 512 threads' worth (at most 128 registers a thread), as the
// persistent grid's defaults assume (left free, a 256-thread CTA of the
// fused add + LayerNorm, bf16 N = 4096, took 143 registers and ran one CTA
// an SM: 71% of copy against 91.5; bench/results/h100_2026-11-25b, call 2).
// Larger CTAs name no minimum (a minimum of one let the fp32 backward of
// N = 2048 in 512 threads take 74 registers, not 64: one CTA an SM, 78.0%
// of copy against 100.3; call 4). The plain entry's rows of other than a
// power of two of threads at up to 8 elements a thread: 896 threads' worth
// (72 registers: bf16 1152 in rows of 144 threads, two a CTA of 9 warps,
// three CTAs an SM, no spills; bench/results/s44, call 2).
int bwd_min_ctas(const InstanceKey& key, bool finish);

// Whether an instance is such a forward (from its block_size, num_warps,
// rows_per_cta and single_tile: its name tells it apart already).
bool stages_in_smem(const InstanceKey& key);

// Dynamic shared memory an instance's kernel needs at launch on a GPU of
// compute capability `cc` (10 * major + minor), in bytes: 0 but for
// fwd_smem.cuh's (the x slab, 128-byte aligned, then the residual's slab
// when there is one; mirrors fwd_smem_bytes<S>() there; at most
// kMaxDynamicSmem), the wide-row forward's (its stages: FwdWideLayout), the
// wide-row backward's (its stages and weight slab; at most kWideSmemLimit;
// those three sm_90 kernels) and the register backward's staged rows
// (bwd_stage_bytes, which depend on `cc`). Each instantiation checks the
// same figure at compile time (bwd_dx.cu.j2: both figures, by __CUDA_ARCH__).
std::int64_t dynamic_smem_bytes(const InstanceKey& key, int cc);

// Whether the register backward stages each next row in shared memory
// (bwd_dx.cuh, staged_bwd) on a GPU of compute capability `cc`: two stages
// of rows_per_cta rows of x and of dy (with a residual: z, dy and dz), for a
// row held whole by one CTA or a cluster's (each CTA its slab), accesses of
// each of at least 4 bytes, at most kMaxBwdStageBytes (kMaxBwdStageBytesAlone
// for CTAs of 512 threads or more, one to an SM by their registers). Before
// sm_90 (an sm_80 CTA gets at most 163 KB of shared memory, an sm_86 or
// sm_89 one 99 KB) as before session 45: no residual, no cluster, up to
// kMaxBwdStageBytes.
bool stages_bwd_rows(const InstanceKey& key, int cc);
// The dynamic shared memory those stages take: 0 where the backward does not
// stage, or where the stages fit static shared memory (47 KB with the row
// slots' sums and the finish's 8 KB: bwd_stage_static there).
std::int64_t bwd_stage_bytes(const InstanceKey& key, int cc);
inline constexpr std::int64_t kMaxBwdStageBytes = 96 * 1024;
inline constexpr std::int64_t kMaxBwdStageBytesAlone = 192 * 1024;
inline constexpr std::int64_t kMaxDynamicSmem = 227 * 1024;  // per CTA, sm_90 (sm_80: 163 KB)

// The instance that runs `config` on rows of `n` elements with accesses of
// `vec` elements (vec is lowered when the tile is too narrow for it). Throws
// lntune::Error naming the violated rule when the combination is invalid.
InstanceKey make_instance(const Traits& traits, const Config& config, std::int64_t n, int vec);

// Throws lntune::Error naming the violated rule (see README "Search space").
void validate(const InstanceKey& key);

// The wide-row backward (templates/kernels/bwd_dx_wide.cuh, sm_90+): a
// bwd_dx config with cluster_size > 1 and rows_per_cta > 1. There
// rows_per_cta counts the rows each CTA keeps staged in shared memory (2 to
// 8), not rows side by side (a cluster's CTAs always share one row at a
// time), and cluster_size may be 16 (non-portable; the loader opts in).
bool is_wide_bwd(Kernel kernel, const Config& config);
bool is_wide_bwd(const InstanceKey& key);
// Whether a bwd_dx instance has the second entry that finishes dW/dB itself
// (KernelSource::finish_kernel_name): no cluster, CTAs under 512 threads (the
// finish's shape, FinishShape in bwd_dwdb.cuh; at 512 the fp32 N = 256
// default's finishing entry took 49 KB of static shared memory, over the 48
// allowed).
bool has_finish_entry(const InstanceKey& key);
// Whether such an instance stages dy with x (bwd_dx_wide.cuh's STAGE_DY):
// exactly when all its stages of both and the weight slab fit
// kWideSmemLimit. Otherwise only x's stages and the weight slab are kept,
// and dy is read from global memory twice a row, the second time from L2
// (fp32 rows of 256K columns: 128 KB of x and dy per stage at clusters of
// 16).
bool wide_stages_dy(const InstanceKey& key);
// Whether such an instance with a residual also stages the upstream
// gradient of z (dz, in z's dtype) with x and dy (bwd_dx_wide.cuh's
// STAGE_DZ): where dy is staged and all three stages and the weight slab fit
// kWideSmemLimit. Otherwise pass B reads dz from global memory (prefetched
// into L2).
bool wide_stages_dz(const InstanceKey& key);

// The wide-row forward (templates/kernels/fwd_wide.cuh, sm_90+): a fwd
// config with cluster_size > 1 and rows_per_cta > 1 (which the register
// forward's clusters never take). As for the wide backward, rows_per_cta
// counts the rows each CTA keeps staged in shared memory (2 to 8); each CTA
// owns one column slab for the whole kernel, its weight and bias in
// registers (at most 32 columns per thread), and the grid is persistent
// (group_size_m clusters).
bool is_wide_fwd(Kernel kernel, const Config& config);
bool is_wide_fwd(const InstanceKey& key);
// How such an instance stages a residual (fwd_wide.cuh's RESIDUAL): with x
// in every stage where the stages of both fit; otherwise (fp32 rows and
// residual of 256K columns) x's stages and one slot for the residual where
// they fit (2 stages); otherwise x alone, the residual read from global
// memory (prefetched into L2). The last two write z over x: valid only with
// the residual in x's dtype. `staged` without a residual.
enum class WideResidual { global, slot, staged };
WideResidual wide_fwd_residual(const InstanceKey& key);

// Rows per row group of a config: rows_per_cta, except for the wide-row
// kernels (one row at a time per cluster). The persistent grid's size is
// clipped to the number of row groups (and so is the partial-row count).
int rows_per_group(Kernel kernel, const Config& config);

// The most dynamic shared memory a wide-row instance (backward or forward)
// may take: 227 KiB (sm_90, sm_100's opt-in limit) less 1 KiB for its static
// arrays.
inline constexpr std::size_t kWideSmemLimit = 227 * 1024 - 1024;

struct KernelSource {
  InstanceKey key;
  std::string kernel_name;  // the extern "C" symbol
  // bwd_dx without a cluster in CTAs under 512 threads: a second entry, the
  // same backward that then finishes dW/dB itself behind a grid barrier
  // (cooperative launches at small M, rt::finish_path). Its own entry, so the
  // finish's registers never count against the plain kernel's occupancy.
  // Empty for the other instances.
  std::string finish_kernel_name;
  std::string source;       // CUDA; #includes only the embedded lntune/ headers
  std::uint64_t hash = 0;   // of the source and every embedded header
};

// Renders the instance's template. Thread-safe; templates are parsed once.
KernelSource render(const InstanceKey& key);

// One self-contained translation unit: `source` with each lntune header it
// includes (transitively) inlined once, in include order. It compiles with
// NVRTC given no headers at all. Throws lntune::Error for an unknown header.
std::string flatten(std::string_view source);

// Hash of every embedded template and header: changes whenever any kernel
// source could change. Stored with tuned results as provenance.
std::uint64_t templates_hash();

std::string hex(std::uint64_t h);  // 16 lowercase hex digits
std::uint64_t fnv1a(std::string_view data, std::uint64_t seed = 0xcbf29ce484222325ULL);

}  // namespace lntune::gen
