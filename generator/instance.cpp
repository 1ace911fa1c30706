#include "generator/instance.hpp"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <set>
#include <stdexcept>
#include <sstream>

#include "generator/engine/template.hpp"
#include "templates/embedded.hpp"

namespace lntune::gen {
namespace {

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

[[noreturn]] void invalid(const InstanceKey& key, const std::string& why) {
  throw Error("lntune: invalid kernel instance " + key.name() + ": " + why);
}

const char* device_type(DType d) {
  switch (d) {
    case DType::f32: return "float";
    case DType::f16: return "lntune::half_t";
    case DType::bf16: return "lntune::bf16_t";
  }
  return "?";
}

const char* template_name(const InstanceKey& key) {
  switch (key.traits.kernel) {
    case Kernel::fwd:
      if (is_wide_fwd(key)) return "fwd_wide.cu.j2";
      return stages_in_smem(key) ? "fwd_smem.cu.j2" : key.cluster_size > 1 ? "fwd_cluster.cu.j2" : "fwd.cu.j2";
    case Kernel::bwd_dx: return is_wide_bwd(key) ? "bwd_dx_wide.cu.j2" : "bwd_dx.cu.j2";
    case Kernel::bwd_dwdb: return "bwd_dwdb.cu.j2";
  }
  return "?";
}

const tmpl::Environment& environment() {
  static const tmpl::Environment env = [] {
    tmpl::Environment e;
    for (const auto& f : templates::files())
      if (f.name.size() > 3 && f.name.substr(f.name.size() - 3) == ".j2") e.add(std::string(f.name), f.text);
    return e;
  }();
  return env;
}

// Bytes of the row (x, or z with a residual) and of dy, per element.
std::size_t row_size(const Traits& t) { return dtype_size(t.residual.value_or(t.x_dtype)); }
std::size_t dy_size(const Traits& t) { return dtype_size(t.out_dtype()); }

// As WideShape::kSmemBytes: the stages (x slab, dy slab where staged, dz
// slab, in z's dtype, where staged), the weight slab, an 8-byte mbarrier per
// stage.
std::int64_t wide_bwd_smem_bytes(const InstanceKey& key, bool stage_dy, bool stage_dz = false) {
  const Traits& t = key.traits;
  const auto slab = static_cast<std::size_t>(key.block_size);
  const auto stages = static_cast<std::size_t>(key.rows_per_cta);
  const std::size_t weight = t.has_weight ? slab * dtype_size(t.w_dtype) : 0;
  const std::size_t per = row_size(t) + (stage_dy ? dy_size(t) : 0) + (stage_dz ? row_size(t) : 0);
  return static_cast<std::int64_t>(stages * slab * per + weight + 8 * stages);
}

// As FwdWideLayout: per stage x's slab (128-byte aligned) and the residual's
// where it is staged with x, the stage 128-byte aligned; the residual's slot
// (128-byte aligned) for WideResidual::slot; an 8-byte mbarrier per slot.
std::int64_t wide_fwd_smem_bytes(const InstanceKey& key, WideResidual how) {
  const Traits& t = key.traits;
  const auto round128 = [](std::int64_t v) { return (v + 127) / 128 * 128; };
  const std::int64_t slab = key.block_size;
  const std::int64_t x = round128(slab * static_cast<std::int64_t>(dtype_size(t.x_dtype)));
  const std::int64_t r = t.residual ? slab * static_cast<std::int64_t>(dtype_size(*t.residual)) : 0;
  const std::int64_t stages = key.rows_per_cta;
  if (!t.residual || how == WideResidual::global) return stages * x + 8 * stages;
  if (how == WideResidual::slot) return stages * x + round128(r) + 8 * (stages + 1);
  return stages * round128(x + r) + 8 * stages;
}

// The rules both wide-row kernels share (`which`: "backward" or "forward"):
// a cluster of 2 to 16 CTAs owning a row whose slabs every thread holds an
// access of, 2 to 8 rows staged.
void validate_wide_shape(const InstanceKey& key, const std::string& which) {
  const Traits& t = key.traits;
  // Any count of CTAs: a row of 100000 columns takes 13 slabs of 8192 (the
  // last partial), where no power of two of CTAs leaves every CTA columns.
  if (key.cluster_size < 2 || key.cluster_size > 16)
    invalid(key, "the wide-row " + which + " needs cluster_size 2 to 16");
  if (key.rows_per_cta < 2 || key.rows_per_cta > 8)
    invalid(key, "the wide-row " + which + " stages 2 to 8 rows per CTA (rows_per_cta)");
  if (!key.single_tile) invalid(key, "the wide-row " + which + " needs N <= block_size * cluster_size");
  if (key.vec < 1 || key.vec > max_vec(t.x_dtype) || !is_pow2(key.vec))
    invalid(key, "vec must be a power of two of at most 16 bytes");
  if (key.block_size < 32 * key.num_warps * key.vec)
    invalid(key, "block_size must be at least 32 * num_warps * vec (every thread holds an access)");
}

// The wide-row backward's rules (is_wide_bwd).
void validate_wide(const InstanceKey& key) {
  const Traits& t = key.traits;
  validate_wide_shape(key, "backward");
  // Any multiple of the CTA's accesses (gen::wide_bwd_fine_split: 12288
  // columns, 13 CTAs, at N = 150000), where the kernel's threads each take
  // the same whole count of accesses.
  if (key.block_size % (32 * key.num_warps * key.vec) != 0)
    invalid(key, "the wide-row backward's block_size must be a multiple of 32 * num_warps * vec (" +
                     std::to_string(32 * key.num_warps * key.vec) + ": every thread the same accesses)");
  if (static_cast<std::size_t>(key.vec) * row_size(t) < 16 || static_cast<std::size_t>(key.vec) * dy_size(t) < 16)
    invalid(key, "the wide-row backward needs 16-byte accesses of x (z) and dy (its bulk copies need 16-byte aligned "
                 "rows): pointers, strides and N must allow vec = " + std::to_string(max_vec(t.x_dtype)));
  const int max_items = key.num_warps >= 32 ? 16 : 32;
  if (key.block_size / (32 * key.num_warps) > max_items)
    invalid(key, "block_size / threads exceeds " + std::to_string(max_items) +
                     " columns per thread (the dW/dB accumulators live in registers)");
  if (dynamic_smem_bytes(key, 90) > static_cast<std::int64_t>(kWideSmemLimit))
    invalid(key, "the wide-row backward's stages of x and weight slab need " + std::to_string(dynamic_smem_bytes(key, 90)) +
                     " bytes of shared memory, more than " + std::to_string(kWideSmemLimit));
}

// The wide-row forward's rules (is_wide_fwd).
void validate_wide_fwd(const InstanceKey& key) {
  const Traits& t = key.traits;
  validate_wide_shape(key, "forward");
  if (key.num_warps < 2 || key.num_warps > 16)
    invalid(key, "the wide-row forward takes 2 to 16 warps (at 32, the 64 registers a thread has spill)");
  if (static_cast<std::size_t>(key.vec) * dtype_size(t.x_dtype) < 16 ||
      (t.residual && static_cast<std::size_t>(key.vec) * dtype_size(*t.residual) < 16))
    invalid(key, "the wide-row forward needs 16-byte accesses of x (and of the residual; its bulk copies need "
                 "16-byte aligned rows): pointers, strides and N must allow vec = " + std::to_string(max_vec(t.x_dtype)));
  // At most 32 columns a thread: with an fp32 weight and bias, 64 of the 128
  // registers a thread has at 16 warps.
  if (key.block_size / (32 * key.num_warps) > 32)
    invalid(key, "block_size / threads exceeds 32 columns per thread (the weight and bias live in registers)");
  if (wide_fwd_residual(key) != WideResidual::staged && t.residual != t.x_dtype)
    invalid(key, "the wide-row forward's stages of x and the residual need " +
                     std::to_string(wide_fwd_smem_bytes(key, WideResidual::staged)) +
                     " bytes of shared memory, more than " + std::to_string(kWideSmemLimit) +
                     " (with the residual in x's dtype, z would be written over x and the residual staged apart)");
  if (dynamic_smem_bytes(key, 90) > static_cast<std::int64_t>(kWideSmemLimit))
    invalid(key, "the wide-row forward's stages need " + std::to_string(dynamic_smem_bytes(key, 90)) +
                     " bytes of shared memory, more than " + std::to_string(kWideSmemLimit));
}

}  // namespace

bool is_wide_fwd(Kernel kernel, const Config& config) {
  return kernel == Kernel::fwd && config.cluster_size > 1 && config.rows_per_cta > 1;
}

bool is_wide_fwd(const InstanceKey& key) {
  return key.traits.kernel == Kernel::fwd && key.cluster_size > 1 && key.rows_per_cta > 1;
}

bool is_wide_bwd(Kernel kernel, const Config& config) {
  return kernel == Kernel::bwd_dx && config.cluster_size > 1 && config.rows_per_cta > 1;
}

bool is_wide_bwd(const InstanceKey& key) {
  return key.traits.kernel == Kernel::bwd_dx && key.cluster_size > 1 && key.rows_per_cta > 1;
}

bool has_finish_entry(const InstanceKey& key) {
  return key.traits.kernel == Kernel::bwd_dx && key.cluster_size == 1 && 32 * key.num_warps < 512;
}

int rows_per_group(Kernel kernel, const Config& config) {
  return is_wide_bwd(kernel, config) || is_wide_fwd(kernel, config) ? 1 : config.rows_per_cta;
}

WideResidual wide_fwd_residual(const InstanceKey& key) {
  for (WideResidual how : {WideResidual::staged, WideResidual::slot})
    if (!key.traits.residual || wide_fwd_smem_bytes(key, how) <= static_cast<std::int64_t>(kWideSmemLimit)) return how;
  return WideResidual::global;
}

bool wide_stages_dy(const InstanceKey& key) {
  return wide_bwd_smem_bytes(key, true) <= static_cast<std::int64_t>(kWideSmemLimit);
}

bool wide_stages_dz(const InstanceKey& key) {
  // (Where x, dy and dz fit, x and dy do: wide_stages_dy.)
  return key.traits.residual && wide_bwd_smem_bytes(key, true, true) <= static_cast<std::int64_t>(kWideSmemLimit);
}

int max_items_per_thread(Kernel k, int num_warps) {
  const int items = k == Kernel::bwd_dx ? 16 : 32;
  return num_warps > 16 ? items / 2 : items;  // (17-31 warps: rows of other than a power of two of threads)
}

int max_vec(DType d) { return static_cast<int>(16 / dtype_size(d)); }

bool is_odd_tile(const Config& config) { return config.cluster_size == 1 && config.block_size > 0 && !is_pow2(config.block_size); }

bool forward_in_smem(const Config& config, std::int64_t n) {
  if (config.num_warps < 1 || config.rows_per_cta != 1 || config.cluster_size < 1) return false;
  if (n > static_cast<std::int64_t>(config.block_size) * config.cluster_size) return false;
  return config.block_size / config.threads() > max_items_per_thread(Kernel::fwd, config.num_warps);
}

bool stages_in_smem(const InstanceKey& key) {
  return key.traits.kernel == Kernel::fwd && !is_wide_fwd(key) && key.rows_per_cta == 1 && key.single_tile && key.num_warps >= 1 &&
         key.block_size / (32 * key.num_warps) > max_items_per_thread(Kernel::fwd, key.num_warps);
}

namespace {
// Two stages of rows_per_cta rows of x (z with a residual), of dy and, with a
// residual, of dz (z's dtype), in bytes.
std::int64_t bwd_stage_raw_bytes(const InstanceKey& key) {
  const Traits& t = key.traits;
  const std::int64_t row = static_cast<std::int64_t>(row_size(t));
  return 2 * static_cast<std::int64_t>(key.rows_per_cta) * key.block_size *
         (row + static_cast<std::int64_t>(dtype_size(t.out_dtype())) + (t.residual ? row : 0));
}
}  // namespace

bool stages_bwd_rows(const InstanceKey& key, int cc) {
  const Traits& t = key.traits;
  if (t.kernel != Kernel::bwd_dx || is_wide_bwd(key) || !key.single_tile) return false;
  // (Before sm_90: no residual, no cluster, up to kMaxBwdStageBytes.)
  if (cc < 90 && (t.residual || key.cluster_size != 1)) return false;
  const std::int64_t xs = static_cast<std::int64_t>(row_size(t));
  const std::int64_t ys = static_cast<std::int64_t>(dtype_size(t.out_dtype()));
  const std::int64_t most = cc >= 90 && 32 * key.num_warps >= 512 ? kMaxBwdStageBytesAlone : kMaxBwdStageBytes;
  return key.vec * xs >= 4 && key.vec * ys >= 4 && bwd_stage_raw_bytes(key) <= most;
}

std::int64_t bwd_stage_bytes(const InstanceKey& key, int cc) {
  if (!stages_bwd_rows(key, cc)) return 0;
  const std::int64_t bytes = bwd_stage_raw_bytes(key);
  const std::int64_t sums = key.rows_per_cta > 1 ? 4 * std::int64_t{key.block_size} : 0;
  // The finishing entry's tree (bwd_dx.cuh, bwd_finish_tree_bytes): 32 bytes
  // a thread, at least 8 KB.
  const std::int64_t threads = 32 * std::int64_t{key.num_warps};
  const std::int64_t tree = threads < 512 ? std::max<std::int64_t>(8192, 32 * threads) : 8192;
  const bool fits_static = bytes + sums + tree <= 47 * 1024;
  return fits_static ? 0 : bytes;
}

std::int64_t dynamic_smem_bytes(const InstanceKey& key, int cc) {
  if (is_wide_bwd(key)) return wide_bwd_smem_bytes(key, wide_stages_dy(key), wide_stages_dz(key));
  if (key.traits.kernel == Kernel::bwd_dx) return bwd_stage_bytes(key, cc);
  if (is_wide_fwd(key)) return wide_fwd_smem_bytes(key, wide_fwd_residual(key));
  if (!stages_in_smem(key)) return 0;
  const Traits& t = key.traits;
  const std::int64_t x = static_cast<std::int64_t>(key.block_size) * static_cast<std::int64_t>(dtype_size(t.x_dtype));
  if (!t.residual) return x;
  return (x + 127) / 128 * 128 + static_cast<std::int64_t>(key.block_size) * static_cast<std::int64_t>(dtype_size(*t.residual));
}

InstanceKey make_instance(const Traits& traits, const Config& config, std::int64_t n, int vec) {
  InstanceKey key;
  key.traits = traits.canonical();
  key.block_size = config.block_size;
  key.num_warps = config.num_warps;
  key.rows_per_cta = config.rows_per_cta;
  key.cluster_size = config.cluster_size;
  if (traits.kernel == Kernel::bwd_dwdb) {
    key.vec = 1;
    key.single_tile = true;
  } else {
    const int group = rows_per_group(traits.kernel, config);
    const int tpr = group > 0 ? config.threads() / group : 0;
    int v = vec;
    // (A single tile in one CTA: the widest vec whose accesses divide it,
    // for tiles of other than a power of two.)
    const bool tile = (traits.kernel == Kernel::fwd || traits.kernel == Kernel::bwd_dx) && config.cluster_size == 1;
    while (v > 1 && tpr > 0 &&
           (static_cast<std::int64_t>(tpr) * v > config.block_size || (tile && config.block_size % (tpr * v) != 0)))
      v /= 2;
    key.vec = v;
    key.single_tile = n <= static_cast<std::int64_t>(config.block_size) * config.cluster_size;
  }
  validate(key);
  // Clusters of any count of CTAs (the wide-row kernels; the slab in shared
  // memory over other than a power of two, gen::smem_clusters) leave no CTA
  // without columns.
  const bool any_count = is_wide_bwd(key) || is_wide_fwd(key) || (stages_in_smem(key) && !is_pow2(key.cluster_size));
  if (any_count && static_cast<std::int64_t>(key.cluster_size - 1) * key.block_size >= n) {
    const std::string what = is_wide_fwd(key)   ? "the wide-row forward"
                             : is_wide_bwd(key) ? "the wide-row backward"
                                                : "a slab in shared memory over other than a power of two of CTAs";
    invalid(key, what + " needs N > (cluster_size - 1) * block_size (every CTA owns columns)");
  }
  return key;
}

int bwd_min_ctas(const InstanceKey& key, bool finish) {
  const int threads = 32 * key.num_warps;
  const int base = threads < 512 ? 512 / threads : 0;
  // The finishing entry runs at most two CTAs a SM where it matters: past
  // 256 partial rows only such grids take it (rt::finish_path), and 256
  // CTAs are two a SM on 128 SMs or more (fewer SMs: the launcher's
  // cooperative capacity, from the occupancy, sends larger grids to
  // bwd_dwdb). Two CTAs' worth lets CTAs under 256 threads hold up to 255
  // registers: bf16 N = 1024, 4 warps, 2 rows took 162, not 128, and its
  // row loop compiled to 349 SASS a pass, not 382 (no spills either way).
  // Never more than the CTA's own bound: at 257-511 threads (a CTA an SM)
  // two CTAs' worth halved the registers and spilled (session 51: the M =
  // 4096 backward of 3584 columns in 14 warps, 73 registers, 67 -> 26% of
  // copy end to end; KernelHeaders.TrainingBackwardFinishCompilesWithout
  // Spills compiles such rows now).
  if (finish) return std::min(base, 2);
  if (!has_segmented_rows(key)) return base;
  const int items = key.block_size / (threads / key.rows_per_cta);
  const int segmented = (items <= 8 ? 896 : 512) / threads;
  return std::max(base, segmented > 1 ? segmented : 0);
}

bool has_segmented_rows(Kernel kernel, const Config& config) {
  // (The wide kernels' rows_per_cta counts staged rows, not rows side by side.)
  if (is_wide_bwd(kernel, config) || is_wide_fwd(kernel, config)) return false;
  return !is_pow2(config.num_warps) || !is_pow2(config.rows_per_cta);
}
bool has_segmented_rows(const InstanceKey& key) {
  Config c{key.block_size, key.num_warps, key.rows_per_cta, 0};
  c.cluster_size = key.cluster_size;
  return has_segmented_rows(key.traits.kernel, c);
}

namespace {
// Rows of other than a power of two of threads (common.cuh's segments): the
// single tile in one CTA of fwd (in registers) or bwd_dx, whose rows are
// whole segments of 8 or more lanes and whose tile is a whole number of the
// row's accesses. (At most 32 segments always: a row of 8 * odd threads
// takes 4 rows to fill warps, so at most 32 * 8 threads, 32 segments.)
void validate_segmented(const InstanceKey& key) {
  const Traits& t = key.traits;
  if ((t.kernel != Kernel::fwd && t.kernel != Kernel::bwd_dx) || !key.single_tile || key.cluster_size != 1 ||
      stages_in_smem(key))
    invalid(key, "num_warps or rows_per_cta of other than a power of two: only a single tile in one CTA of fwd (in "
                 "registers) or bwd_dx");
  const int threads = 32 * key.num_warps;
  if (threads % key.rows_per_cta != 0)
    invalid(key, "rows_per_cta (" + std::to_string(key.rows_per_cta) + ") must divide the CTA's " +
                     std::to_string(threads) + " threads");
  const int tpr = threads / key.rows_per_cta;
  if (tpr % 8 != 0)
    invalid(key, "a row's threads (32 * num_warps / rows_per_cta = " + std::to_string(tpr) +
                     ") must be a multiple of 8 when not a power of two");
  if (key.vec < 1 || key.block_size % (tpr * key.vec) != 0)
    invalid(key, "block_size (" + std::to_string(key.block_size) + ") must be a multiple of threads_per_row * vec (" +
                     std::to_string(tpr * key.vec) + "; threads_per_row = 32 * num_warps / rows_per_cta) for rows of "
                     "other than a power of two of threads");
}
}  // namespace

void validate(const InstanceKey& key) {
  const Traits& t = key.traits;
  if (key.num_warps < 1 || key.num_warps > 32) invalid(key, "num_warps must be in [1, 32]");
  if (key.rows_per_cta < 1) invalid(key, "rows_per_cta must be at least 1");
  const bool segmented = has_segmented_rows(key);
  // (The wide-row backward takes any count: its slab is a multiple of the
  // CTA's accesses, validate_wide.)
  if (!segmented && !is_pow2(key.num_warps) && !is_wide_bwd(key))
    invalid(key, "num_warps must be a power of two (other counts: a single tile in one CTA of fwd or bwd_dx, the "
                 "wide-row backward's slab)");
  if (segmented) validate_segmented(key);
  // Tiles of other than a power of two: the wide-row backward's slab (a
  // multiple of a CTA's accesses, validate_wide), and the forward's single
  // tile in one CTA (in registers, or a slab in shared memory): the row
  // rounded up to a multiple of its threads' accesses (5120 columns in 8
  // warps of 4-element accesses), fewer masked accesses and registers than
  // next_pow2(N) (search_space; bench/results/s42, call 13); make_instance
  // takes the widest vec that divides it.
  if (!is_pow2(key.block_size) && !is_wide_bwd(key)) {
    if ((t.kernel != Kernel::fwd && t.kernel != Kernel::bwd_dx) || !key.single_tile || key.cluster_size != 1)
      invalid(key, "block_size must be a power of two (other sizes: a single tile in one CTA, the wide-row "
                   "backward's slab)");
    const int accesses = 32 * key.num_warps / std::max(1, key.rows_per_cta) * key.vec;
    if (key.block_size % accesses != 0)
      invalid(key, "a single tile of other than a power of two must be a multiple of threads_per_row * vec (" +
                       std::to_string(accesses) + ")");
  }
  if (t.zero_centered && !t.has_weight) invalid(key, "zero-centred gamma needs a weight");
  if (t.kernel == Kernel::bwd_dwdb) {
    if (!t.has_weight && !t.has_bias) invalid(key, "bwd_dwdb needs a weight or a bias");
    if (key.rows_per_cta != 1) invalid(key, "bwd_dwdb takes rows_per_cta = 1");
    if (key.cluster_size != 1) invalid(key, "bwd_dwdb takes cluster_size = 1");
    if (key.block_size < 32 || key.block_size > 32 * key.num_warps)
      invalid(key, "bwd_dwdb needs 32 <= block_size <= 32 * num_warps (a thread per column at least)");
    return;
  }
  if (is_wide_bwd(key)) return validate_wide(key);
  if (is_wide_fwd(key)) return validate_wide_fwd(key);
  if ((!segmented && !is_pow2(key.rows_per_cta)) || key.rows_per_cta > 32 * key.num_warps)
    invalid(key, "rows_per_cta must be a power of two no larger than the CTA's threads (other counts: a single "
                 "tile in one CTA of fwd or bwd_dx)");
  if (key.rows_per_cta > 1 && !key.single_tile)
    invalid(key, "rows_per_cta > 1 needs a row that fits one tile (N <= block_size)");
  if (stages_in_smem(key)) {
    // A slab in shared memory (fwd_smem.cuh): up to 16 CTAs per cluster
    // (16: the non-portable cluster size, sm_90), no register bound.
    if (key.cluster_size < 1 || key.cluster_size > 16)
      invalid(key, "cluster_size must be 1 to 16 (slab in shared memory)");
    // (make_instance: other counts than a power of two where every CTA owns
    // columns, the gap clusters of gen::smem_clusters.)
    if (key.vec < 1 || key.vec > max_vec(t.x_dtype) || !is_pow2(key.vec))
      invalid(key, "vec must be a power of two of at most 16 bytes");
    const std::int64_t bytes = dynamic_smem_bytes(key, 90);
    if (bytes > kMaxDynamicSmem)
      invalid(key, "the slab needs " + std::to_string(bytes) + " bytes of shared memory; a CTA has at most " +
                       std::to_string(kMaxDynamicSmem) + " (use a larger cluster_size)");
    return;
  }
  if (key.cluster_size < 1 || key.cluster_size > 8 || !is_pow2(key.cluster_size))
    invalid(key, "cluster_size must be 1, 2, 4 or 8");
  if (key.cluster_size > 1 && (key.rows_per_cta != 1 || !key.single_tile))
    invalid(key, "cluster_size > 1 needs rows_per_cta = 1 and N <= block_size * cluster_size");
  const int tpr = 32 * key.num_warps / key.rows_per_cta;
  if (key.vec < 1 || key.vec > max_vec(t.x_dtype) || !is_pow2(key.vec))
    invalid(key, "vec must be a power of two of at most 16 bytes");
  if (key.block_size < tpr * key.vec)
    invalid(key, "block_size must be at least threads_per_row * vec (every thread holds an access)");
  const int max_items = max_items_per_thread(t.kernel, key.num_warps);
  if (key.block_size / tpr > max_items)
    invalid(key, "block_size / threads_per_row exceeds " + std::to_string(max_items) +
                     " elements per thread (registers)");
}

KernelSource render(const InstanceKey& key) {
  validate(key);
  const Traits& t = key.traits;
  KernelSource out;
  out.key = key;
  out.kernel_name = "lntune_" + key.name();
  if (has_finish_entry(key)) out.finish_kernel_name = out.kernel_name + "_finish";

  tmpl::Dict d;
  d["instance"] = key.name();
  d["kernel_name"] = out.kernel_name;
  d["finish_kernel_name"] = out.finish_kernel_name;
  d["x_type"] = device_type(t.x_dtype);
  d["w_type"] = device_type(t.w_dtype);
  d["x_name"] = std::string(to_string(t.x_dtype));
  d["w_name"] = std::string(to_string(t.w_dtype));
  d["has_weight"] = t.has_weight;
  d["has_bias"] = t.has_bias;
  d["block_size"] = key.block_size;
  d["num_warps"] = key.num_warps;
  d["rows_per_cta"] = key.rows_per_cta;
  d["vec"] = key.vec;
  d["single_tile"] = key.single_tile;
  d["cluster"] = key.cluster_size;
  d["norm_kind"] = t.norm == Norm::rms ? "kRmsNorm" : "kLayerNorm";
  d["norm_title"] = t.norm == Norm::rms ? "RMSNorm" : "LayerNorm";
  d["r_type"] = t.residual ? device_type(*t.residual) : "void";
  d["zero_centered"] = t.zero_centered;
  d["y_type"] = device_type(t.out_dtype());
  d["smem_bytes"] = dynamic_smem_bytes(key, 90);
  d["smem_bytes_before_sm90"] = dynamic_smem_bytes(key, 80);
  d["min_ctas"] = t.kernel == Kernel::bwd_dx ? bwd_min_ctas(key, false) : 0;
  d["finish_min_ctas"] = t.kernel == Kernel::bwd_dx ? bwd_min_ctas(key, true) : 0;
  d["stage_dy"] = is_wide_bwd(key) && wide_stages_dy(key);
  d["stage_dz"] = is_wide_bwd(key) && wide_stages_dz(key);
  const WideResidual how = is_wide_fwd(key) ? wide_fwd_residual(key) : WideResidual::staged;
  d["residual_staging"] = how == WideResidual::staged ? "kResidualStaged"
                          : how == WideResidual::slot ? "kResidualSlot"
                                                      : "kResidualGlobal";
  out.source = environment().render(template_name(key), d);
  out.hash = fnv1a(out.source, templates_hash());
  return out;
}

std::string flatten(std::string_view source) {
  std::set<std::string, std::less<>> seen;
  std::string out;
  out.reserve(source.size() * 8);
  // Depth-first: a header's text replaces its first #include; later ones go.
  const auto expand = [&](const auto& self, std::string_view text, int depth) -> void {
    if (depth > 16) throw Error("lntune: flatten: lntune headers nest more than 16 deep");
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      end = end == std::string_view::npos ? text.size() : end + 1;
      const std::string_view line = text.substr(pos, end - pos);
      pos = end;
      constexpr std::string_view kInclude = "#include \"lntune/";
      if (line.rfind("#pragma once", 0) == 0) continue;
      if (line.rfind(kInclude, 0) != 0) {
        out += line;
        continue;
      }
      const std::size_t close = line.find('"', kInclude.size());
      if (close == std::string_view::npos) throw Error("lntune: flatten: malformed line " + std::string(line));
      const std::string name(line.substr(10, close - 10));
      if (!seen.insert(name).second) continue;
      std::string_view header;
      try {
        header = templates::get(name);
      } catch (const std::out_of_range&) {
        throw Error("lntune: flatten: no lntune header named '" + name + "'");
      }
      out += "// ---------------- " + name + "\n";
      self(self, header, depth + 1);
      if (!out.empty() && out.back() != '\n') out += '\n';
      out += "// ---------------- end of " + name + "\n";
    }
  };
  expand(expand, source, 0);
  return out;
}

std::uint64_t templates_hash() {
  static const std::uint64_t h = [] {
    std::uint64_t acc = 0xcbf29ce484222325ULL;
    for (const auto& f : templates::files()) {
      if (std::any_of(std::begin(templates::kTunerOnlyHeaders), std::end(templates::kTunerOnlyHeaders),
                      [&](std::string_view t) { return f.name == t; }))
        continue;
      acc = fnv1a(f.name, acc);
      acc = fnv1a(f.text, acc);
    }
    return acc;
  }();
  return h;
}

std::uint64_t fnv1a(std::string_view data, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex(std::uint64_t h) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[static_cast<std::size_t>(i)] = digits[h & 15];
  return s;
}

}  // namespace lntune::gen
