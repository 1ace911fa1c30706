#include "generator/space.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>

#include "generator/instance.hpp"

namespace lntune::gen {
namespace {

constexpr int kWarpChoices[] = {1, 2, 4, 8, 16, 32};

std::int64_t row_groups(const SpaceQuery& q, int rows_per_cta) {
  return std::max<std::int64_t>(1, (q.m + rows_per_cta - 1) / rows_per_cta);
}

int clip_groups(const SpaceQuery& q, int rows_per_cta, std::int64_t g) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min(g, row_groups(q, rows_per_cta))));
}

// The persistent backward's grid: `wanted` CTAs (or clusters), but at least
// 8 rows per CTA, so that the fp32 partial rows (one per CTA) stay a small
// part of the traffic; clipped to the row groups. That minimum never leaves
// fewer CTAs than SMs (or row groups, when fewer): below about 1000 rows it
// made each CTA walk its 8 rows one after another, a DRAM round trip each,
// on a few SMs. On an H100, the default's dx and dW/dB, this rule against
// the 8-rows minimum alone in one call (`LNTUNE_SWEEP_M=M
// LNTUNE_SWEEP_CONFIG=default lntune_sweep bwd DTYPE N`, bench/results/
// h100_s27, call 4): bf16 M = 32 N = 4096 11.3 against 19.6 us, N = 8192
// 13.8 against 24.1; M = 8 N = 4096 11.1 against 19.3; fp32 M = 32 N = 4096
// 10.1 against 18.1; M >= 1056 unchanged (8 rows a CTA fill the SMs there).
int persistent_groups(const SpaceQuery& q, int rows_per_cta, std::int64_t wanted) {
  const std::int64_t groups = row_groups(q, rows_per_cta);
  const std::int64_t most =
      std::max({std::int64_t{1}, groups * rows_per_cta / 8, std::min<std::int64_t>(groups, q.sm_count)});
  return clip_groups(q, rows_per_cta, std::min(wanted, most));
}

// CTAs of `threads` threads that make about 512 threads a SM (1 to 8): the
// persistent register backward's occupancy, as measured (default_config,
// fused_row_bwd_default).
std::int64_t ctas_for_512_threads(std::int64_t threads) {
  return std::clamp<std::int64_t>(512 / std::max<std::int64_t>(1, threads), 1, 8);
}

// Columns per CTA when a cluster of `cluster` CTAs splits a row of n:
// next_pow2(ceil(n / cluster)); 0 when that would leave a CTA no columns.
std::int64_t cluster_slab(std::int64_t n, int cluster) {
  const std::int64_t slab = next_pow2((n + cluster - 1) / cluster);
  return (cluster - 1) * slab >= n ? 0 : slab;
}

// The CTAs that slabs of `slab` columns need for a row of n: ceil(n / slab)
// (the last slab partial).
int slab_count(std::int64_t n, std::int64_t slab) { return static_cast<int>((n + slab - 1) / slab); }

// A row of n split over `cluster` CTAs in slabs of a multiple of grain
// columns (the last partial): ceil(n / cluster) rounded up to the grain.
std::int64_t grain_slab(std::int64_t n, int cluster, std::int64_t grain) { return round_up((n + cluster - 1) / cluster, grain); }

// The gap cluster of `slab`-column slabs for a row of n: slab_count where
// that is 3 to 15 CTAs and not a power of two (no power of two of CTAs
// leaves every CTA columns there: a row of 100000 columns takes 13 slabs of
// 8192, the last holding 1696; without these clusters the backward fell back
// to tiles there, bf16 20.5% of copy on an H200, bench/results/s40, call 3);
// else 0.
int gap_cluster(std::int64_t n, std::int64_t slab) {
  const int c = slab_count(n, slab);
  return c > 2 && c < 16 && (c & (c - 1)) != 0 ? c : 0;
}

// The wide kernels' cluster sizes for a row of n: 2, 4, 8 and 16, and the
// gap clusters of 8192- and 16384-column slabs.
std::vector<int> wide_clusters(std::int64_t n) {
  std::vector<int> out{2, 4, 8, 16};
  for (std::int64_t slab : {8192, 16384})
    if (const int c = gap_cluster(n, slab)) out.push_back(c);
  return out;
}

// The forward's clusters for a row of n with its slabs in shared memory
// (fwd_smem.cuh): 1, 2, 4, 8 and 16, and the gap clusters of 16384- and
// 32768-column slabs (e.g. 5 of 32768 at N = 150000, where no power of two
// leaves every CTA columns in slabs of at most 64 KiB of 16-bit x, and the
// wide forward's 10 of 16384 run 7 at once, one a GPC).
std::vector<int> smem_clusters(std::int64_t n) {
  std::vector<int> out{1, 2, 4, 8, 16};
  for (std::int64_t slab : {16384, 32768})
    if (const int c = gap_cluster(n, slab)) out.push_back(c);
  return out;
}

// The wide backward's split of a row of n over more CTAs than its gap
// cluster of 16384-column slabs where that is 9-15 (an H200 runs 7 clusters
// of 9-16 CTAs at once at one CTA a SM, one a GPC: 70 SMs at N = 150000,
// where 13 CTAs would take 91): the most CTAs, up to 16, whose slabs, a
// multiple of a 16-warp CTA's accesses (512 * vec columns: 12288 for 16-bit
// rows, 10240-14336 for fp32) and at most 16384, leave every CTA columns
// (add_wide_bwd takes the warp counts whose accesses divide the slab).
// E.g. bf16 N = 150000: 13 slabs of 12288 (10 of 16384 before); fp32: 15
// of 10240. None where no count beats the gap cluster (bf16 200000).
struct WideSplit {
  int cluster;        // CTAs a row
  std::int64_t slab;  // columns a CTA (the last partial)
  int min_warps = 8;  // the fewest warps add_wide_bwd gives its CTAs
  int odd_warps = 0;  // a count of warps other than a power of two it also gives them (0: none)
};
std::optional<WideSplit> wide_bwd_fine_split(std::int64_t n, int vec) {
  const int gap = gap_cluster(n, 16384);
  if (gap < 9) return std::nullopt;
  const std::int64_t grain = 512 * static_cast<std::int64_t>(vec);
  for (int c = 16; c > gap; --c) {
    const std::int64_t slab = grain_slab(n, c, grain);
    if (slab <= 16384 && (c - 1) * slab < n) return WideSplit{c, slab};
  }
  return std::nullopt;
}

// Rows just above 8192 columns, where the power-of-two slabs leave the last
// CTA mostly empty (8192 + 1024 columns at N = 9216): equal slabs, 16-bit
// rows of 8193-12288 columns in two of 6144, fp32 rows of 8193-11264 in
// three of a multiple of 512 columns (3072 at 9216, 3584 at 10240), the
// latter in 4 warps too (add_wide_bwd). bench/results/s42, calls 6 and 11.
std::optional<WideSplit> wide_bwd_even_split(std::int64_t n, std::size_t esize) {
  if (n <= 8192) return std::nullopt;
  if (esize == 2 && n <= 12288) return WideSplit{2, 6144};
  if (esize == 4 && n <= 11264) return WideSplit{3, grain_slab(n, 3, 512), 4};
  return std::nullopt;
}

// 16-bit rows of 8193-16383 columns, a multiple of 1024: two equal slabs
// whose CTAs take 16 columns a thread in other than a power of two of warps
// (9216: two of 4608 in 9 warps, where the power-of-two slabs leave the
// second CTA an eighth full and wide_bwd_even_split's 6144-column slabs a
// half; session 46, bench/results/s46 call 7: LayerNorm bf16 90.1% of copy
// at 4 stages against 80.9 for the default).
std::optional<WideSplit> wide_bwd_odd_split(std::int64_t n, std::size_t esize) {
  if (esize != 2 || n <= 8192 || n >= 16384 || n % 1024 != 0) return std::nullopt;
  const int warps = static_cast<int>(n / 2 / 512);
  if ((warps & (warps - 1)) == 0) return std::nullopt;
  return WideSplit{2, n / 2, warps, warps};
}

// A persistent grid of clusters of `cluster` CTAs, at one CTA per SM, that
// all run at once: one per SM group, one fewer for clusters of 8 or more
// (whole clusters must fit a GPC; an H200 runs 15 of 8 and 7 of 16 at
// once, bench/results/s35), clipped to the rows. The launcher then fits the
// grid to the driver's count for the kernel (rt::fit_coresident: an H200
// runs 30 clusters of 4, not 33).
int coresident_clusters(const SpaceQuery& q, int cluster) {
  const int fit = std::max(1, q.sm_count / cluster);
  return clip_groups(q, 1, cluster >= 8 && fit > 1 ? fit - 1 : fit);
}

// Shared memory of the wide-row backward for `stages` staged rows of x and
// dy (`esize` bytes an element of each) and a weight slab of `wsize` bytes
// an element (fp32 unless given); of x's stages and the weight slab where
// that does not fit kWideSmemLimit and `x_only` allows it (the instance then
// reads dy twice from global memory: gen::wide_stages_dy).
std::size_t wide_stage_bytes(std::int64_t slab, std::size_t esize, int stages, bool x_only = true,
                             std::size_t wsize = 4) {
  const auto s = static_cast<std::size_t>(stages);
  const auto cols = static_cast<std::size_t>(slab);
  const std::size_t both = cols * (2 * esize * s + wsize) + 8 * s;
  return both <= kWideSmemLimit || !x_only ? both : cols * (esize * s + wsize) + 8 * s;
}

// Whether two CTAs of `smem` bytes of shared memory each fit a SM (228 KB a
// SM on sm_90, 1 KB reserved a CTA).
constexpr std::int64_t kSmemPerSm = 228 * 1024, kReservedPerCta = 1024;
constexpr bool two_ctas_fit(std::int64_t smem) { return 2 * (smem + kReservedPerCta) <= kSmemPerSm; }

// Whether two CTAs of wide backward config `c` fit a SM with `dynamic` bytes
// of dynamic shared memory: that beside the kernel's static buffers (warp
// sums, the cluster's parts, statistics), and CTAs of at most 8 warps (the
// kernel takes up to 128 registers a thread: two CTAs of 16 warps do not fit
// the register file, an H200 ran one a SM; bench/results/s38, call 2).
bool wide_bwd_twice(std::int64_t dynamic, const Config& c) {
  const std::int64_t fixed = 16 * c.num_warps + 32 * c.cluster_size + 64;
  // Up to 8 warps, and the odd counts of wide_bwd_odd_split up to 12 (about
  // 72 registers a thread: 9 warps ran two CTAs a SM, bench/results/s46,
  // call 7); 16 warps' registers fill the SM.
  return c.num_warps <= 12 && two_ctas_fit(dynamic + fixed);
}

// The same without the call's traits: x and dy staged and a weight slab in
// the row dtype (16-bit rows usually come with a 16-bit weight; a wider one
// makes the instance larger, and the launcher's fit to the clusters that run
// at once then keeps one CTA a SM). E.g. 16-bit rows in 8192-column slabs at
// 2 or 3 stages (112 KB at 3), not 4.
bool wide_bwd_two_per_sm(const SpaceQuery& q, const Config& c) {
  const std::size_t esize = dtype_size(q.dtype);
  return wide_bwd_twice(
      static_cast<std::int64_t>(wide_stage_bytes(c.block_size, esize, c.rows_per_cta, false, esize)), c);
}

// Persistent kernels (bwd_dx; fwd over clusters) take a grid size too.
void add_group_sizes(const SpaceQuery& q, Config c, std::vector<Config>& out) {
  const bool persistent = q.kernel == Kernel::bwd_dx || c.cluster_size > 1;
  if (!persistent) {
    out.push_back(c);
    return;
  }
  int last = -1;
  for (int mult : {1, 2, 4, 8}) {
    if (q.kernel == Kernel::fwd && mult > 4) break;
    const std::int64_t ctas = static_cast<std::int64_t>(mult) * q.sm_count;
    c.group_size_m = clip_groups(q, c.rows_per_cta, std::max<std::int64_t>(1, ctas / c.cluster_size));
    if (c.group_size_m != last) out.push_back(c);
    last = c.group_size_m;
  }
}

// bwd_dwdb row splits for `per_sm` CTAs per SM over q.m partial rows, at
// least 8 rows per split.
int dwdb_split_count(const SpaceQuery& q, int cols, int per_sm) {
  const std::int64_t blocks = (q.n + cols - 1) / cols;
  const std::int64_t want = (static_cast<std::int64_t>(per_sm) * q.sm_count + blocks - 1) / blocks;
  const std::int64_t most = std::max<std::int64_t>(1, std::min(max_dwdb_splits(q.n), q.m / 8));
  return static_cast<int>(std::clamp<std::int64_t>(want, 1, most));
}

// The wide-row backward (templates/kernels/bwd_dx_wide.cuh; gen::is_wide_bwd):
// sm_90+, N >= 4096 (below 8192 columns it measured faster for fp32 rows:
// see wide_bwd_default). Clusters C in {2, 4, 8, 16} (and wide_clusters'
// gap clusters) with slabs of
// next_pow2(ceil(N / C)) columns (every CTA owning some); 8 to 32 warps with
// vec to 32 columns per thread (16 at 32 warps); rows_per_cta = rows staged
// per CTA in {2, 3, 4}, while the stages and weight slab fit
// kWideSmemLimit, sized with the row dtype for x and dy and an fp32 weight
// (the stages hold x alone where x and dy do not fit: gen::wide_stages_dy)
// (the weight dtype is not part of the query; other traits, e.g. an fp32
// residual with 16-bit rows, may fail make_instance's exact check: such a
// candidate is recorded as invalid). The grid: as many clusters as fit the
// SMs at one CTA per SM (the shared memory allows no more), and one or two
// fewer (whole clusters must fit a GPC, whose SM counts vary by chip), so
// that the clusters are co-resident: a persistent grid with a second wave
// would double its time. Verified and measured on an H100 (2026-11-23); the
// default picks one of these (wide_bwd_default).
void add_wide_bwd(const SpaceQuery& q, std::vector<Config>& out) {
  if (q.kernel != Kernel::bwd_dx || q.cc < 90 || q.n < 4096) return;
  const int vec = max_vec(q.dtype);
  const std::size_t esize = dtype_size(q.dtype);
  // The clusters and their slabs: a power of two of columns (cluster_slab),
  // the finer split of wide_bwd_fine_split and the even one of
  // wide_bwd_even_split.
  std::vector<WideSplit> splits;
  for (int cluster : wide_clusters(q.n)) splits.push_back(WideSplit{cluster, cluster_slab(q.n, cluster)});
  if (const std::optional<WideSplit> fine = wide_bwd_fine_split(q.n, vec)) splits.push_back(*fine);
  if (const std::optional<WideSplit> even = wide_bwd_even_split(q.n, esize)) splits.push_back(*even);
  if (const std::optional<WideSplit> odd = wide_bwd_odd_split(q.n, esize)) splits.push_back(*odd);
  for (const WideSplit& split : splits) {
    const int cluster = split.cluster;
    const std::int64_t slab = split.slab;
    if (slab == 0) continue;
    for (int w : {4, 8, 16, 32, split.odd_warps}) {
      if (w == 0 || w < split.min_warps) continue;
      const std::int64_t items = slab / (32 * w);
      // Every thread the same whole count of accesses (a power-of-two slab
      // of at least one access a thread always divides).
      if (items < vec || items > (w >= 32 ? 16 : 32) || slab % (32 * w * vec) != 0) continue;
      for (int stages : {2, 3, 4}) {
        if (wide_stage_bytes(slab, esize, stages) > kWideSmemLimit) continue;
        // fp32 rows with a residual in slabs of up to 4096 columns at 2
        // stages (no lookahead) spill 4 bytes (KernelHeaders.
        // WideSpaceCompilesWithoutSpills); 3 and 4 stages measured faster
        // there anyway (bench/results/h200x2_2026-11-24, call 7).
        if (q.residual && esize == 4 && slab <= 4096 && stages == 2) continue;
        // 16-bit rows with a residual in 16384-column slabs, 16 warps, 4
        // stages, in clusters of 9-15 (the lane sums over a partial group
        // of 16) spill 4 bytes (N = 150000); the defaults there take 32
        // warps at 3 stages.
        if (q.residual && esize == 2 && slab == 16384 && w == 16 && stages == 4 && cluster > 8 && cluster < 16)
          continue;
        Config c{static_cast<int>(slab), w, stages, 0, cluster};
        int last = -1;
        const int fit = std::max(1, q.sm_count / cluster);
        for (int g : {fit, fit - 1, fit - 2}) {
          if (g < 1 || (g < fit && cluster < 8)) continue;  // small clusters pack well: no spares
          c.group_size_m = clip_groups(q, 1, g);
          if (c.group_size_m != last) out.push_back(c);
          last = c.group_size_m;
        }
        // Two CTAs a SM where twice the stages fit beside a weight slab in
        // the row dtype: twice the grid, which the launcher fits to the
        // clusters that run at once (rt: max_active_clusters; one CTA a SM
        // again where the call's weight or residual makes the slab larger).
        if (wide_bwd_two_per_sm(q, c)) {
          c.group_size_m = clip_groups(q, 1, 2 * fit);
          if (c.group_size_m != last) out.push_back(c);
        }
      }
    }
  }
}

// The forward with each CTA's slab of a row in shared memory (fwd_smem.cuh,
// one read of x), for rows longer than a CTA holds in registers (sm_90+):
// clusters of C in {1, 2, 4, 8, 16} CTAs, each with block_size =
// next_pow2(ceil(N / C)) columns (no CTA left empty) of 16 KB to 227 KB of x,
// 4 to 16 warps (more than max_items elements per thread: the slab does not
// fit registers, see gen::forward_in_smem). group_size_m: 0, a cluster per
// row; or one wave of persistent clusters at the occupancy that x's slab
// allows (a residual's slab, when there is one, lowers it; a slab too large
// with it is rejected by make_instance and recorded as a compile error).
// One persistent wave of a shared-memory forward config's clusters: as many
// CTAs per SM as x's slab allows (228 KB a SM, 1 KB reserved a CTA, at most
// 2048 threads), over the cluster; 0 where that is under one cluster or not
// fewer than the rows (a cluster per row then).
int smem_forward_wave(const SpaceQuery& q, const Config& c) {
  const std::int64_t bytes = std::int64_t{c.block_size} * static_cast<std::int64_t>(dtype_size(q.dtype));
  const std::int64_t per_sm = std::min<std::int64_t>(kSmemPerSm / (bytes + kReservedPerCta), 2048 / c.threads());
  const std::int64_t wave = q.sm_count * per_sm / c.cluster_size;
  return wave >= 1 && wave < q.m ? static_cast<int>(wave) : 0;
}

void add_smem_forward(const SpaceQuery& q, std::vector<Config>& out) {
  const auto esize = static_cast<std::int64_t>(dtype_size(q.dtype));
  for (int cluster : smem_clusters(q.n)) {
    const std::int64_t block = cluster_slab(q.n, cluster);
    if (block == 0) continue;
    const std::int64_t bytes = block * esize;
    if (bytes < 16 * 1024 || bytes > kMaxDynamicSmem) continue;
    for (int w : {4, 8, 16}) {
      Config c{static_cast<int>(block), w, 1, 0};
      c.cluster_size = cluster;
      if (!forward_in_smem(c, q.n)) continue;
      out.push_back(c);
      if (const int wave = smem_forward_wave(q, c)) {
        c.group_size_m = wave;
        out.push_back(c);
      }
    }
  }
}

// The wide-row forward (templates/kernels/fwd_wide.cuh; gen::is_wide_fwd):
// sm_90+, N > 16384. Clusters C in {2, 4, 8, 16} (and wide_clusters' gap
// clusters) with slabs of
// next_pow2(ceil(N / C)) columns (every CTA owning some), of at least 8 KB
// of x; 4 to 16 warps (at 32 the registers spill) with vec to 32 columns per
// thread (the weight and bias of the slab live in registers); rows_per_cta = rows staged per CTA in
// {2, 3, 4}, while they fit (sized with the row dtype: a residual's slab may
// not fit, which make_instance rejects). The grid: the clusters that fit the
// SMs at one CTA per SM (and, where shared memory and threads allow, two),
// and one fewer for clusters of 8 or more (whole clusters must fit a GPC),
// as the wide backward's.
void add_wide_fwd(const SpaceQuery& q, std::vector<Config>& out) {
  if (q.kernel != Kernel::fwd || q.cc < 90 || q.n <= 16384) return;
  const int vec = max_vec(q.dtype);
  const auto esize = static_cast<std::int64_t>(dtype_size(q.dtype));
  for (int cluster : wide_clusters(q.n)) {
    const std::int64_t slab = cluster_slab(q.n, cluster);
    if (slab == 0 || slab * esize < 8 * 1024) continue;
    for (int w : {4, 8, 16}) {
      const std::int64_t items = slab / (32 * w);
      if (items < vec || items > 32) continue;
      for (int stages : {2, 3, 4}) {
        const std::int64_t bytes = stages * (slab * esize + 8);
        if (bytes > static_cast<std::int64_t>(kWideSmemLimit)) continue;
        Config c{static_cast<int>(slab), w, stages, 0, cluster};
        const bool two = two_ctas_fit(bytes) && 2 * 32 * w <= 2048;
        int last = -1;
        for (int per_sm : {1, 2}) {
          if (per_sm == 2 && !two) continue;
          const int fit = std::max(1, q.sm_count * per_sm / cluster);
          for (int g : {fit, fit - 1}) {
            if (g < 1 || (g < fit && cluster < 8)) continue;
            c.group_size_m = clip_groups(q, 1, g);
            if (c.group_size_m != last) out.push_back(c);
            last = c.group_size_m;
          }
        }
      }
    }
  }
}

// The wide-row forward's config for a row split over clusters of `cluster`
// CTAs in `warps` warps with `stages` rows staged, on the clusters that run
// at once; none where a slab would hold no columns or a thread more than 32
// (the slab's weight and bias live in registers) or less than one access.
std::optional<Config> wide_fwd_config(const SpaceQuery& q, int cluster, int warps, int stages) {
  const std::int64_t slab = cluster_slab(q.n, cluster);
  const std::int64_t items = slab / (32 * warps);
  if (slab == 0 || items < max_vec(q.dtype) || items > 32) return std::nullopt;
  Config c{static_cast<int>(slab), warps, stages, 0, cluster};
  c.group_size_m = coresident_clusters(q, cluster);
  return c;
}

// The wide forward over the gap cluster of `slab`-column slabs (16 warps
// for 16384 columns, 8 for 8192), 3 stages, else 2 (fp32 16384-column
// slabs: 2, else 3, as wide_fwd_default's clusters of 16: beside an fp32
// residual 3 stages read it from L2); none where the slab count is a power
// of two.
std::optional<Config> gap_fwd_config(const SpaceQuery& q, const ConfigFilter& accept, std::int64_t slab) {
  const int gap = gap_cluster(q.n, slab);
  if (q.kernel != Kernel::fwd || q.cc < 90 || gap == 0) return std::nullopt;
  const bool two_first = slab == 16384 && dtype_size(q.dtype) == 4;
  for (int stages : {two_first ? 2 : 3, two_first ? 3 : 2}) {
    const std::optional<Config> c = wide_fwd_config(q, gap, slab == 16384 ? 16 : 8, stages);
    if (c && (!accept || accept(*c))) return c;
  }
  return std::nullopt;
}

// The forward of a row of more than 16384 columns that neither the rules
// above nor the slabs in shared memory take (sm_90+): the wide forward over
// as many slabs as the row needs, the last partial (gap_fwd_config: 16384
// columns, else 8192 as an fp32 residual beside x needs). Not measured as a
// rule: without it these rows (variants with a residual, rows whose slab
// count is not a power of two) fell back to tiles, x read twice
// (Default.LongRowsReadXOnce); the wide forward in such clusters measured
// 73-92% of copy where the rules take it (bench/results/s40, calls 4-6).
std::optional<Config> gap_fwd_default(const SpaceQuery& q, const ConfigFilter& accept) {
  if (const std::optional<Config> c = gap_fwd_config(q, accept, 16384)) return c;
  return gap_fwd_config(q, accept, 8192);
}

// The default forward for wide rows on sm_90+ where the wide-row forward
// (fwd_wide.cuh) measured faster than the forward staging one row per CTA
// (fwd_smem.cuh), on an H100 at x = 512 MiB, % of the device-to-device copy
// in the same process (`LNTUNE_SWEEP_WIDE=1 [LNTUNE_SWEEP_OP=rmsnorm]
// [LNTUNE_SWEEP_RESIDUAL=1] lntune_sweep fwd DTYPE 262144 65536 32768`,
// bench/results/h100_2026-11-24e, calls 4 and 6):
//   * rows of more than 128K columns: clusters of 16, 16 warps, 2 stages for
//     fp32 rows, 3 for 16-bit ones: fp32 N = 262144 LayerNorm 95.5% (the old
//     default 70.3%), RMSNorm 97.0% (74.6%); bf16 RMSNorm 97.5% (85.6%),
//     LayerNorm + add 94-96% (78.9%); fp32 + an fp32 residual (x's 2 stages
//     and a slot for the residual, gen::WideResidual::slot;
//     bench/results/h100_2026-11-25, call 2): LayerNorm 95.3% (66.3%),
//     RMSNorm 96.8% (71.7%);
//   * 32K to 128K columns: 8192-column slabs (clusters of 8), 8 warps, 4
//     stages for 16-bit rows without a residual, else 3: fp32 N = 65536
//     LayerNorm 96.8% (91.5%); bf16 RMSNorm 96.2% (91.4%), LayerNorm + add
//     97.3% (90.8%);
//   * fp32 rows of 16K to 32K columns: 16384-column slabs in clusters of 2,
//     16 warps, 3 stages, a cluster per 2 SMs (N = 32768: 95.2%, 92.2% the
//     old default); with an fp32 residual (whose slabs do not fit beside),
//     4096-column slabs in clusters of 8, 4 warps (96.9%, 91.8%).
//   * 16-bit LayerNorm rows without a residual of more than 128K columns
//     (the row kept in registers between the two sums, full slabs without
//     bounds checks; bench/results/h100_2026-11-25, call 1): bf16 N = 262144
//     95.6% (the one-row-per-CTA forward 88.9%), fp16 96.2% (83.3%).
// Only with the residual in x's dtype (as measured). Not for 16-bit
// LayerNorm rows without a residual of 32K-128K columns: there the wide
// forward measured slower (N = 65536: 88.7% at best against 94.9%), nor for
// 16-bit rows of 32K columns or fewer (the old defaults 97.8-99.0%). Grid:
// one cluster per SM group, one fewer for clusters of 8 or more (as
// add_wide_fwd).
std::optional<Config> wide_fwd_default(const SpaceQuery& q, const ConfigFilter& accept) {
  if (q.kernel != Kernel::fwd || q.cc < 90 || q.n <= 16384) return std::nullopt;
  const bool half = dtype_size(q.dtype) == 2;
  if (half && (q.n <= 32768 || (q.norm == Norm::layer && !q.residual && q.n <= 131072))) return std::nullopt;
  struct Pick {
    int cluster, warps, stages;
  };
  // The measured config, then the same with 2 stages where its stages do not
  // fit (a wider residual beside x).
  std::vector<Pick> picks;
  const auto then_two = [&picks](int cluster, int warps, int stages) {
    picks.push_back(Pick{cluster, warps, stages});
    if (stages != 2) picks.push_back(Pick{cluster, warps, 2});
  };
  if (q.n > 131072) {
    // fp32 with an fp32 residual: x's 2 stages and one slot for the
    // residual (95.3% of copy; 3 stages of x with the residual read through
    // L2, 66.4%; bench/results/h100_2026-11-25, call 2).
    then_two(16, 16, half ? 3 : 2);
  } else if (q.n > 32768) {
    then_two(8, 8, half && !q.residual ? 4 : 3);
  } else {
    then_two(2, 16, 3);
    picks.push_back(Pick{8, 4, 3});  // an fp32 residual beside 16384-column slabs
  }
  for (const Pick& k : picks) {
    const std::optional<Config> wide = wide_fwd_config(q, k.cluster, k.warps, k.stages);
    if (!wide) continue;
    const Config& c = *wide;
    if (!accept) return c;
    // Measured with the residual in x's dtype only (16-bit x beside an fp32
    // residual keeps the one-row-per-CTA forward), and staged with x but at
    // 256K columns (where no staging of both fits).
    const std::optional<InstanceKey> key = accept(c);
    if (key && (!key->traits.residual || (*key->traits.residual == key->traits.x_dtype &&
                                          (q.n > 131072 || wide_fwd_residual(*key) == WideResidual::staged))))
      return c;
  }
  // fp32 rows of more than 64K columns without a residual where those
  // clusters would leave a CTA empty: the gap cluster of 16384-column slabs,
  // before the slabs in shared memory (N = 100000 in 7, 2 stages: 91.8% of
  // copy against 55.3 for the slabs in shared memory; an H200,
  // bench/results/s40, call 5).
  if (!half && !q.residual && q.n > 65536) return gap_fwd_config(q, accept, 16384);
  return std::nullopt;
}

// The default for rows longer than kSmemForwardMinN on sm_90+: the forward
// with the row's slabs in shared memory (one read of x), 64 KiB of x per CTA
// at most (so that a residual's slab, even fp32 beside 16-bit x, still fits),
// 64 elements per thread, clusters of as few CTAs as hold the row (up to 16),
// a cluster per row. Measured on an H100 (bf16, x of 512 MiB, % of the
// device-to-device copy in the same process): N = 32768 98%, 65536 95%,
// 262144 89%, where the register kernel's tiles (x read twice) gave 81%, 64%
// and 62% (`LNTUNE_SWEEP_EVERY=1 lntune_sweep fwd bf16 32768 65536 262144`).
// fp32 rows up to 65536 columns first try slabs of 32768 columns (128 KiB,
// one CTA per SM, 16 warps) in one persistent wave of clusters, the best of
// the space on an H100 (N = 65536: 92% of copy, against 84% for 64 KiB slabs
// a cluster per row; N = 20000: 90% against 87%). 128 KiB a cluster per row
// last, where no cluster splits the row into 64 KiB slabs without an empty
// CTA (e.g. fp32, N = 40001). Rows of 8193 to 16384 columns: some only
// (below); 16-bit rows without a residual measured bf16 N = 16384 99.3% of
// copy this way against 93.9% for the register kernel, N = 12288 98.7%
// (`LNTUNE_SWEEP_EVERY=1 lntune_sweep fwd bf16 12288 16384`,
// bench/results/h100_2026-11-24d, call 10).
std::optional<Config> smem_forward_default(const SpaceQuery& q, const ConfigFilter& accept) {
  if (q.kernel != Kernel::fwd || q.n <= kSmemForwardMinN) return std::nullopt;
  const auto esize = static_cast<std::int64_t>(dtype_size(q.dtype));
  // Rows of 8193-16384 columns: 16-bit rows without a residual, and with one
  // (a residual in x's dtype) 16-bit LayerNorm + add and fp32 RMSNorm + add:
  // the whole row in one CTA's shared memory, 8 warps, a CTA per row. On an
  // H100 at x = 512 MiB, N = 16384: LayerNorm + add bf16 100.1% of copy
  // against 94.3% for the register default, RMSNorm + add fp32 99.7%
  // against 93.6% (`LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1
  // [LNTUNE_SWEEP_OP=rmsnorm] lntune_sweep fwd DTYPE 16384`,
  // bench/results/h200x2_2026-11-24, call 9). The others keep their register
  // defaults: fp32 rows without a residual; 16-bit RMSNorm + add (98.7%,
  // session 24); fp32 LayerNorm + add (97.3% in bench_norms.py, call 11;
  // 90.9% this way, call 10).
  const bool fused_short = q.residual && q.n <= 16384;
  const bool smem_short = fused_short ? (q.norm == Norm::layer ? esize == 2 : esize == 4) : esize == 2;
  if (q.n <= 16384 && !smem_short) return std::nullopt;
  struct Pass {
    std::int64_t bytes;  // of x per CTA, at most
    bool wave;           // one persistent wave of clusters, not a cluster per row
  };
  const bool fp32_wave = esize == 4 && q.n <= 65536 && !fused_short;
  const std::vector<Pass> passes = fp32_wave ? std::vector<Pass>{{128 * 1024, true}, {64 * 1024, false}, {128 * 1024, false}}
                                             : std::vector<Pass>{{64 * 1024, false}, {128 * 1024, false}};
  for (const Pass& pass : passes)
    for (int cluster : {1, 2, 4, 8, 16}) {
      const std::int64_t block = cluster_slab(q.n, cluster);
      if (block == 0 || block * esize > pass.bytes) continue;
      Config c{static_cast<int>(block), static_cast<int>(std::clamp<std::int64_t>(block / (32 * 64), 4, 16)), 1, 0};
      c.cluster_size = cluster;
      if (pass.wave && q.sm_count / cluster < q.m) c.group_size_m = q.sm_count / cluster;
      if (!forward_in_smem(c, q.n)) continue;
      if (!accept) return c;
      const std::optional<InstanceKey> key = accept(c);
      // (fused_short: measured with the residual in x's dtype only.)
      if (key && (!fused_short || key->traits.residual == key->traits.x_dtype)) return c;
    }
  return std::nullopt;
}

// The default backward for rows longer than 8192 columns on sm_90+: the
// wide-row kernel, column slices of 8192 columns per CTA (8 warps) in
// clusters of 2, 8 or 16, else slices of up to 16384 columns (up to 16
// warps) in clusters of 2, 8, 16 or 4; 3 rows staged, 2 where 3 do not fit;
// a persistent grid of the clusters that fit the SMs, one fewer for clusters
// of 8 or more (whole clusters must fit a GPC). Measured on an H100 (bf16,
// N = 65536, M = 4096, % of the copy in the same process): 97%, where the
// clustered register kernel gave 55% (`LNTUNE_SWEEP_WIDE=1 lntune_sweep bwd
// bf16 65536`). Clusters of 4 last: measured slow (bf16, N = 32768: 82% of
// copy with 8192-column slices in clusters of 4, 92% with 16384-column
// slices in clusters of 2; perhaps 33 clusters of 4, one CTA per SM on 132
// SMs, do not all fit the GPCs at once). The slabs are sized for x and dy
// in the row dtype and an fp32 weight; `accept` turns down what a variant's
// wider rows do not fit. Rows of more than 128K columns where no stages of
// x and dy fit (fp32): the same passes again with x alone staged
// (gen::wide_stages_dy). Not below: there (e.g. fp32, N = 20480) the
// register kernels' default stays, as measured before that variant existed.
// Whether a wide backward default fits: without the call's traits, its
// stages (x and dy, or x alone) and an fp32 weight slab in kWideSmemLimit;
// with them, the instance the traits make is valid and stages dy where
// x_only is not asked for.
bool wide_bwd_fits(const SpaceQuery& q, const Config& c, bool x_only, const ConfigFilter& accept) {
  if (!accept) return wide_stage_bytes(c.block_size, dtype_size(q.dtype), c.rows_per_cta, x_only) <= kWideSmemLimit;
  const std::optional<InstanceKey> key = accept(c);
  return key && (x_only || wide_stages_dy(*key));
}

std::optional<Config> wide_bwd_default(const SpaceQuery& q, const ConfigFilter& accept) {
  if (q.kernel != Kernel::bwd_dx || q.n < 4096) return std::nullopt;
  if (q.n <= 8192) {
    // fp32 rows of 4097-8192 columns (4096 with a fused residual add) over
    // many rows: split in two over a cluster, 4 stages of 4096-column (2048)
    // slices in 32 (16) warps. On an H100 at x = 512 MiB, the best of the
    // space, which had no wide configs below 8193 columns before: LayerNorm
    // N = 8192 99.1% of copy against 90.3% for the register default; with
    // the residual add 96.7% against 75.6% (84.1% the best register
    // config); N = 4096 with it 93.6% against 88.6% (without, the register
    // default's 96.1% stayed the best); `LNTUNE_SWEEP_WIDE=1
    // [LNTUNE_SWEEP_RESIDUAL=1] lntune_sweep bwd fp32 8192 4096`,
    // bench/results/h200x2_2026-11-24, call 7. 16-bit rows there measured
    // 84-89% with it, below the register kernels: not for them.
    // Without the residual, 8 warps (16 columns a thread) since the wide
    // backward's dy loads went out together (df1aa88): on an H200 at x =
    // 512 MiB, LayerNorm N = 8192 99.1% of copy against 80.3% with 32 warps
    // (`LNTUNE_SWEEP_EVERY=1 lntune_sweep bwd fp32 8192`, bench/results/s34,
    // call 1: the kernel bound by instructions issued, as the forward).
    if (q.dtype != DType::f32 || q.m <= 8192 || (q.n <= 4096 && !q.residual)) return std::nullopt;
    const std::int64_t slab = cluster_slab(q.n, 2);
    Config c{static_cast<int>(slab), q.residual ? (slab >= 4096 ? 32 : 16) : 8, 4, 0, 2};
    c.group_size_m = clip_groups(q, 1, std::max(1, q.sm_count / 2));
    if (wide_bwd_fits(q, c, false, accept)) return c;
    return std::nullopt;
  }
  struct Pass {
    std::int64_t min_slab, max_slab;
    std::vector<int> clusters;
  };
  const std::size_t esize = dtype_size(q.dtype);
  for (bool x_only : {false, true}) {
    if (x_only && q.n <= 131072) break;
    // Each pass last: its slab's gap cluster (wide_clusters). 8192-column
    // slabs: fp32 N = 40000 in 5 CTAs, 8 warps, 3 stages, 97.0% of copy
    // against 42.5 for the cluster-split register kernel, 50000 in 7 87.6
    // against 45.7 (an H200, every config in one process, bench/results/s40,
    // call 8). With a residual, of up to 65536 columns (not measured: they
    // fell back to tiles or the cluster-split kernel), at the very end: only
    // where no other config takes the row. 16384-column slabs: from 65537
    // columns (below, the 8192-column ones take the row first).
    const int gap_8k = gap_cluster(q.n, 8192);
    const bool gap_8k_last = q.residual && q.n <= 65536;
    const int gap_16k = q.n > 65536 ? gap_cluster(q.n, 16384) : 0;
    for (const Pass& pass : {Pass{8192, 8192, {2, 8, 16, gap_8k_last ? 0 : gap_8k}},
                             Pass{1, 16384, {2, 8, 16, 4, gap_16k, gap_8k_last ? gap_8k : 0}}})
      for (int cluster : pass.clusters) {
        if (cluster == 0) continue;
        const std::int64_t slab = cluster_slab(q.n, cluster);
        if (slab == 0 || slab < pass.min_slab || slab > pass.max_slab) continue;
        // 16 columns per thread (up to 16 warps); with a fused residual add,
        // whose dz pass B reads from global memory, 16-column slices take 32
        // warps (H100, bf16 RMSNorm + add, N = 32768, 16384-column slices in
        // clusters of 2: 85.1% of copy with 32 warps, 79.7% with 16;
        // `LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1
        // lntune_sweep bwd bf16 32768`). Staging x alone (dy read twice
        // through L2), 32 warps too: fp32 N = 262144, 16384-column slices in
        // clusters of 16, 2 stages, 68.6-69.0% of copy against 64.2-64.3%
        // with 16 warps (3 stages do not fit beside the weight slab; with the
        // weight read from L2 instead they measured 51-56%;
        // `LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 lntune_sweep bwd fp32
        // 262144`, bench/results/h100_2026-11-24d, calls 1-3).
        // Rows with a residual in 8192-column slabs in clusters of 8 (N =
        // 32K-64K): 16 warps (where pass B loads every access's dz before
        // storing dx), and 2 stages for fp32 rows (`LNTUNE_SWEEP_WIDE=1
        // LNTUNE_SWEEP_RESIDUAL=1 lntune_sweep bwd DTYPE 65536`,
        // bench/results/h100_2026-11-25, call 14: fp32 98.5% of copy, 8 warps
        // and 3 stages 78.0-78.3% in call 9; bf16 92.6%, 8 warps 88.0%).
        // fp32 rows with a residual in 8192-column slabs in clusters of 2
        // (N = 16384) take 2 stages too: LayerNorm + add 98.6% of copy,
        // RMSNorm + add 99.1%, against 91.0 and 91.9% with 3
        // (`LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 [LNTUNE_SWEEP_OP=
        // rmsnorm] lntune_sweep bwd fp32 16384`, bench/results/
        // h100_2026-11-25b, call 6).
        const bool fused_8k = q.residual && slab == 8192 && cluster == 8;
        const bool fp32_fused_8k = q.residual && esize == 4 && slab == 8192;
        // 16-bit rows with a residual in two 8192-column slabs (N = 16384):
        // 32 warps, 4 stages (H100: bf16 LayerNorm + add 97.0% of copy, RMSNorm +
        // add 97.1%, against 89.7 and 91.7% with 8 warps and 3 stages;
        // `LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 [LNTUNE_SWEEP_OP=
        // rmsnorm] lntune_sweep bwd bf16 16384`, bench/results/
        // h200x2_2026-11-24, call 9).
        // Where the memory outruns the SMs, 16 warps (an H200: LayerNorm + add
        // 82.4% of copy against 77.8 with 32, RMSNorm + add 83.2 against
        // 82.7; bench/results/s35, call 5).
        const bool fused_16k = q.residual && esize == 2 && slab == 8192 && cluster == 2;
        int warps = static_cast<int>(std::clamp<std::int64_t>(slab / (32 * 32), 4, 16));
        if ((q.residual || x_only) && slab >= 16384) warps = 32;
        if (fused_8k) warps = 16;
        if (fused_16k) warps = fast_memory(q) ? 16 : 32;
        const int fit = std::max(1, q.sm_count / cluster);
        const std::vector<int> stage_order = fused_16k                  ? std::vector<int>{4, 3, 2}
                                             : fp32_fused_8k          ? std::vector<int>{2, 3}
                                                                      : std::vector<int>{3, 2};
        for (int stages : stage_order) {
          Config c{static_cast<int>(slab), warps, stages, 0, cluster};
          // Clusters of 16 with 3 stages of 16384-column slabs (16-bit rows of
          // 256K columns): two clusters fewer than fit measured faster (bf16:
          // 90.1-94.6% of copy against 84.1-88.5% with one fewer;
          // bench/results/h100_2026-11-25, calls 2-4).
          // So did fp32 rows with a residual of 256K columns (16384-column
          // slabs in clusters of 16, 2 stages): LayerNorm + add 69.4% of
          // copy against 68.0%, RMSNorm + add 72.2 against 69.7 (`LNTUNE_SWEEP_WIDE=1
          // LNTUNE_SWEEP_RESIDUAL=1 [LNTUNE_SWEEP_OP=rmsnorm] lntune_sweep bwd
          // fp32 262144`, bench/results/h100_2026-11-25b, call 10).
          // Not where the memory outruns the SMs: there all 7 clusters of 16 that
          // fit measured faster than 6 in every variant (bf16 RMSNorm 77.2% of
          // copy against 70.1, LayerNorm + add 75.5 against 67.7, RMSNorm + add
          // 78.8 against 70.2; fp32 RMSNorm + add 77.2 against 73.3; an H200,
          // `LNTUNE_SWEEP_EVERY=1 ... lntune_sweep bwd DTYPE 262144`,
          // bench/results/s35, call 5).
          const bool two_spare =
              cluster == 16 && slab == 16384 && fit > 2 && (stages == 3 || (q.residual && esize == 4)) && !fast_memory(q);
          c.group_size_m = two_spare ? clip_groups(q, 1, fit - 2) : coresident_clusters(q, cluster);
          // Without the call's traits, sized for an fp32 weight; with them,
          // the instance's own shared memory decides (a 16-bit weight slab
          // leaves room for 3 stages of 16-bit rows of 256K columns: bf16
          // 94.6% of copy against 77.9% with 2; bench/results/h100_2026-11-25,
          // call 2).
          if (wide_bwd_fits(q, c, x_only, accept)) return c;
        }
      }
  }
  return std::nullopt;
}

// The register backward of a fused residual add (dz read, dx and the
// residual's gradient written: more bytes per element than the plain
// backward, in more registers), RMSNorm's and fp32 LayerNorm's: one 16-byte access per thread and row
// input (8 elements of a 16-bit row, 4 of an fp32 one), CTAs of 64 to 1024
// threads (short rows share one; rows needing more are tiled in 1024-thread
// tiles), persistent at 2 CTAs per SM from 256 threads, 1 at 1024 and
// 512 threads' worth below 256 (but at least 8 rows per CTA). Measured on
// an H100 in the bandwidth regime (RMSNorm + add, % of copy, the rule's
// config against the plain rule's; `LNTUNE_SWEEP_EVERY=1
// LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 lntune_sweep bwd DTYPE
// 1024 4096 8192`): fp32 N = 1024 100.6 against 74.9, 4096 90.6 against
// 79.5, 8192 86.6 against 76.0; bf16 N = 1024 95.0 against 90.7, 4096 94.1
// against 87.0, 8192 92.6 against 90.6; LayerNorm + add, fp32 (`lntune_sweep`
// without LNTUNE_SWEEP_OP): N = 1024 97.1 against 73.9, 4096 88.6, 8192 75.6
// against 75.2.
Config fused_bwd_default(const SpaceQuery& q) {
  const std::int64_t items = 16 / static_cast<std::int64_t>(dtype_size(q.dtype));
  const std::int64_t single = next_pow2(q.n);
  const std::int64_t tpr = std::max<std::int64_t>(1, single / items);
  Config c{static_cast<int>(single), 32, 1, 0};
  std::int64_t threads = 1024;
  if (tpr > 1024) {
    c.block_size = static_cast<int>(1024 * items);  // tiles
  } else {
    threads = std::max<std::int64_t>(64, tpr);
    c.num_warps = static_cast<int>(threads / 32);
    c.rows_per_cta = static_cast<int>(threads / tpr);
  }
  const std::int64_t per_sm = threads >= 1024 ? 1 : threads >= 256 ? 2 : 512 / threads;
  c.group_size_m = persistent_groups(q, c.rows_per_cta, q.sm_count * per_sm);
  return c;
}

// 16-bit LayerNorm rows of 6145 to 8192 columns over many rows (sm_90+):
// split in two over a cluster, 4096-column slices in 8 warps. On an H100 at
// x = 512 MiB (`lntune_sweep bwd bf16 7168 8192; lntune_sweep bwd fp16
// 8192`), the best of the space: bf16 N = 8192 91.1% of copy against 85.5%
// for a whole row in 16 warps, N = 7168 86.7 against 82.0, fp16 N = 8192
// 91.3 against 83.4; at N = 6144 the whole row stayed the best (81.8%).
// (With a fused residual add the H100 measured it best too, bf16 N = 8192
// 95.1% against 92.6% for the whole row, bench/results/h100_2026-11-25b,
// call 3; the H200 not, 72.8% against 84.8%, bench/results/s34, call 5:
// fused_row_bwd_default takes the whole row.) Not for RMSNorm: bf16
// N = 8192 85.4% of copy this way, 93.8% for the whole row in 16 warps
// (`LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_OP=rmsnorm lntune_sweep bwd bf16
// 8192`, bench/results/h200x2_2026-11-24, call 6). The caller sets the grid. Since the register
// backward stages each next row in shared memory (bwd_dx.cuh, staged_bwd),
// the whole row in 16 warps is faster where its instance stages the rows:
// the plain rule keeps it (default_config, backward_stages_rows).
bool half_layer_norm_split_in_two(const SpaceQuery& q) {
  return q.kernel == Kernel::bwd_dx && q.norm == Norm::layer && q.cc >= 90 && dtype_size(q.dtype) == 2 &&
         q.m > 8192 && next_pow2(q.n) == 8192 && q.n > 6144;
}
constexpr Config kHalfSplitInTwo{4096, 8, 1, 0, 2};

// The register backward of a fused residual add (the residual in x's
// dtype) over more than 8192 rows: 32 bytes of each row input a thread, a
// row a CTA, 512 threads' worth of CTAs per SM.
//   16 bits, rows of 256 to 8192 columns, where the kernel loads dz with x
//   and dy (bwd_dx.cuh, early_dz; since session 45 stages it with them,
//   staged_bwd: the same configs, 98-100% of copy): 16 columns a thread, CTAs of at least 64
//   threads, for both norms (RMSNorm rows of up to 256 columns and of
//   4097-8192: 8 columns a thread in 1024 threads, one CTA per SM).
//   fp32, only where the memory outruns the SMs (fast_memory; an H100 keeps
//   fused_bwd_default and the wide kernel), rows of 256 to 4096 columns: 8
//   columns a thread, CTAs of at least 256 threads; RMSNorm rows of
//   4097-8192 columns: the row in 16 warps (16 columns a thread). On an H200
//   at x = 512 MiB (`LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1
//   [LNTUNE_SWEEP_OP=rmsnorm] lntune_sweep bwd fp32 N`, bench/results/s35,
//   calls 1-2; as the default, call 3), % of copy against the rule before:
//   LayerNorm + add N = 256 98.3 (88.8), 512 98.1 (88.4), 1024 98.0 (88.1),
//   2048 98.0 (the same), 4096 97.7 (70.5, the wide kernel); RMSNorm + add
//   1024 98.9 (93.1), 4096 98.6 (73.4), 8192 96.9 (87.9). LayerNorm + add
//   of 4097-8192 columns kept the wide kernel (87.4, the space's best 87.9)
//   until the fused rows were staged in shared memory (bwd_dx.cuh,
//   staged_bwd: 192 KB of z, dy and dz in 16 warps): then the row in 16
//   warps, 98.8% against 86.0 (bench/results/s45, call 2).
// The 16-bit rule, on an H200 at
// x = 512 MiB (`LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1
// [LNTUNE_SWEEP_OP=rmsnorm] lntune_sweep bwd bf16 N`, bench/results/s34,
// call 5) these were the space's best, % of copy
// against the rule before (LayerNorm: 16 columns a thread in 512 threads,
// one CTA per SM, rows of 6145-8192 columns split in two; RMSNorm: 8 columns
// a thread in 1024 threads): LayerNorm + add N = 1024 91.9 (76.2), 4096
// 88.7 (74.7), 8192 84.8 (72.8); RMSNorm + add 1024 91.9 (77.0), 4096 90.6
// (84.8). As the default (call 6, two rounds, % of copy): LayerNorm + add
// bf16 N = 1024 76.5 -> 91.7, 2048 75.0 -> 90.2, 4096 73.6 -> 89.1, 8192
// 72.3 -> 84.2, fp16 1024 75.8 -> 91.6, 8192 72.3 -> 83.8, 256 and 512 level
// (90.2 -> 91.2, 92.9 -> 92.9); RMSNorm + add bf16 512 76.6 -> 92.8, 1024
// 77.1 -> 92.7, 2048 79.7 -> 91.2, 4096 83.7 -> 90.5, but 256 96.1 -> 92.8
// and 8192 81.8 -> 77.7: RMSNorm keeps 8 columns a thread in 1024 threads
// (one CTA per SM) there. The H100 had measured the rule before as its best
// or near it (bench/results/h100_2026-11-25b, calls 2 and 3: LayerNorm + add
// 92.4-98.7%, RMSNorm + add 96.6-101.7%), these configs 92.6-96.7% there.
// The residual stream a fused rule was measured with: in x's dtype (every
// fused rule but part of the wide backward's table), or fp32 beside 16-bit
// rows (z and dz fp32; x, dy and dx 16-bit).
enum class Stream { row_dtype, fp32_beside_16bit };

// Whether the call `accept` describes takes config `c` with its residual as
// `stream` (a rule measured with one stream leaves the others to the rules
// after it), and, where `also` is given, an instance it holds for. Without a
// filter (no call known), the residual is taken in x's dtype.
bool takes_residual(const Config& c, const ConfigFilter& accept, Stream stream = Stream::row_dtype,
                    bool (*also)(const InstanceKey&) = nullptr) {
  if (!accept) return stream == Stream::row_dtype;
  const std::optional<InstanceKey> key = accept(c);
  if (!key || (also && !also(*key))) return false;
  const Traits& t = key->traits;
  return stream == Stream::row_dtype ? t.residual == t.x_dtype
                                     : t.residual == DType::f32 && dtype_size(t.x_dtype) == 2;
}

std::optional<Config> fused_row_bwd_default(const SpaceQuery& q, const ConfigFilter& accept) {
  const std::int64_t single = next_pow2(q.n);
  const bool half = dtype_size(q.dtype) == 2;
  // fp32 rows of 4097-8192 columns from 16 rows an SM (the training sizes;
  // the launcher's plan bucket from 2112 rows on 132 SMs) too, where the
  // rules after this one tile the row in 4096-column tiles: every config in
  // one process on an H200 at M = 4096 (dx and dW/dB, L2 flushed;
  // bench/results/s46, call 6), % of copy against that default: LayerNorm +
  // add N = 8192 94.7 against 58.8 (the best, 95.0, split over a cluster of
  // 2), RMSNorm + add 96.9 against 66.9.
  const bool fp32_train_8k = !half && single == 8192 && q.m >= 16 * std::int64_t{q.sm_count};
  if (q.kernel != Kernel::bwd_dx || !q.residual || (q.m <= 8192 && !fp32_train_8k) || single < 256 || single > 8192)
    return std::nullopt;
  if (!half && (!fast_memory(q) || q.cc < 90)) return std::nullopt;
  const bool rms_wide_cta = half && q.norm == Norm::rms && (single == 256 || single == 8192);
  const std::int64_t columns = rms_wide_cta ? 8 : half || single == 8192 ? 16 : 8;
  const std::int64_t tpr = single / columns;
  const std::int64_t threads = rms_wide_cta ? 1024 : std::max<std::int64_t>(half ? 64 : 256, tpr);
  Config c{static_cast<int>(single), static_cast<int>(threads / 32), static_cast<int>(threads / tpr), 0};
  c.group_size_m = persistent_groups(q, c.rows_per_cta, q.sm_count * ctas_for_512_threads(threads));
  if (takes_residual(c, accept)) return c;
  return std::nullopt;
}

// Whether the register backward of config `c` stages its rows in shared
// memory for the call `accept` describes (gen::stages_bwd_rows of its
// instance on the query's GPU: not with accesses under 4 bytes, odd 16-bit
// N). Without a filter (no call known), as staging.
bool backward_stages_rows(const SpaceQuery& q, const Config& c, const ConfigFilter& accept) {
  if (!accept) return true;
  const std::optional<InstanceKey> key = accept(c);
  return key && stages_bwd_rows(*key, q.cc);
}

// The forward with the row's slab in shared memory over clusters of
// `cluster` CTAs of `warps` warps (16 unless given), one persistent wave of
// them (smem_forward_wave; the launcher fits it to the clusters that run at
// once), where it is a shared-memory config and `valid` takes it.
template <class Valid>
std::optional<Config> smem_wave_fwd_config(const SpaceQuery& q, int cluster, const Valid& valid, int warps = 16) {
  Config c{static_cast<int>(cluster_slab(q.n, cluster)), warps, 1, 0, cluster};
  c.group_size_m = smem_forward_wave(q, c);
  if (c.block_size > 0 && forward_in_smem(c, q.n) && valid(c)) return c;
  return std::nullopt;
}

// What fast_memory_default's rules ask of a row: its element size, 16 bits
// or not, and plain LayerNorm or RMSNorm (no residual).
struct RowKind {
  std::size_t esize;
  bool half, plain_layer, plain_rms;
};
// Training sizes: 16-48 rows a SM (M = 2112-6336 on 132 SMs), where a
// persistent backward CTA walks few row groups.
bool training_rows(const SpaceQuery& q) {
  return q.m >= 16 * static_cast<std::int64_t>(q.sm_count) && q.m <= 48 * static_cast<std::int64_t>(q.sm_count);
}

// lo < M / SMs <= hi (the rules' bands of rows a SM).
bool rows_a_sm_within(const SpaceQuery& q, std::int64_t lo, std::int64_t hi) {
  const std::int64_t sms = q.sm_count;
  return q.m > lo * sms && q.m <= hi * sms;
}

RowKind row_kind(const SpaceQuery& q) {
  const std::size_t esize = dtype_size(q.dtype);
  return RowKind{esize, esize == 2, q.norm == Norm::layer && !q.residual, q.norm == Norm::rms && !q.residual};
}

// fast_memory_default's forward and backward (bwd_dx) rules, after it.
std::optional<Config> fast_memory_fwd_default(const SpaceQuery& q, const ConfigFilter& accept);
std::optional<Config> fast_memory_fwd_latency_default(const SpaceQuery& q, const ConfigFilter& accept);
std::optional<Config> fast_memory_bwd_default(const SpaceQuery& q, const ConfigFilter& accept);

// The defaults of a GPU whose memory outruns its SMs (fast_memory: an H200,
// 4.8 TB/s over the 132 SMs of an H100 at the same clock). There the rules
// measured on an H100 leave the kernels bound by the instructions each SM
// issues (bench/NOTES.md, session 34) or by the latency of each row's chain,
// and other configs of the same space were the fastest. Every rule below is
// the space's best, or within a point of it, in `LNTUNE_SWEEP_EVERY=1
// [LNTUNE_SWEEP_RESIDUAL=1] [LNTUNE_SWEEP_OP=rmsnorm] lntune_sweep fwd|bwd
// DTYPE N` on an H200 at x = 512 MiB (bench/results/s35, calls 1, 2 and
// 5; as defaults, calls 3 and 6), % of copy against the H100 rule's config:
//   * 16-bit LayerNorm forward, no residual:
//     - 12289-16384 columns over more than 8192 rows: the whole row in
//       registers, 512 threads (bf16 N = 16384 96.9 against 89.1 for the
//       row in one CTA's shared memory, fp16 97.1 against 89.4);
//     - 16K-32K: the wide forward, 16384-column slabs in clusters of 2, 16
//       warps, 3 stages (bf16 32768 91.4 against 87.7);
//     - 32K-64K: the row's slabs in shared memory, clusters of 2, 16 warps,
//       one persistent wave (65536 bf16 86.9 against 82.2, fp16 87.1
//       against 81.5 for a cluster per row);
//     - 64K-128K: the wide forward in clusters of 8, 16 warps, 4 stages
//       (131072 bf16 89.9 against 78.7);
//     - more: clusters of 16, 4 stages (262144 bf16 75.0 against 71.6).
//   * 16-bit LayerNorm backward, no residual, the wide kernel, x and dy
//     staged: 16K-32K columns 16384-column slices in clusters of 2, 16
//     warps, 2 stages (bf16 32768 77.3 against 71.9; since session 38 only
//     where 8192-column slabs would leave a CTA empty, the rule of two CTAs
//     a SM below taking the rest of 8193-65536 columns); 64K-128K
//     16384-column slices in clusters of 8, 16 warps, 2
//     stages (bf16 131072 82.0 against 62.7); more, clusters of 16 in the
//     7 that fit at once, 2 stages (bf16 262144 73.0 against 64.1; fp16
//     68.9, 72.9 with 3 stages, against 67.7); fp16 at 3 stages since
//     session 39 (73.1 against 68.7 at 2; bf16 66.1 at 3 against 73.0 at 2:
//     bench/results/s39, call 7), bf16 too since session 41, with the lane
//     sums in every cluster of more than 8 (262144 73.0 -> 76.0, 230000
//     58.2 -> 66.7, 200000 58.2 -> 61.9; bench/results/s41, call 4).
//   * fp32 LayerNorm and RMSNorm backward of more than 128K columns, no
//     residual, x alone staged: 16 warps, not 32 (262144: LayerNorm 66.8
//     against 61.9, RMSNorm 68.0 against 61.8, call 5); since session 47's
//     whole stores 32 again at sixteen 16384-column slabs (77.6 against
//     73.2, bench/results/s47, call 4).
//   * 16-bit RMSNorm forward, no residual, as LayerNorm's where measured
//     (call 5): 32K-64K columns (65536 bf16 90.4 against 82.3 for clusters
//     of 8 in 8 warps) and more than 128K (262144 92.9 against 88.9 with 3
//     stages); since session 40 also 64K-128K, and 65536 in clusters of 4
//     (bench/results/s40, calls 2-3).
//   * fp32 RMSNorm + add forward, 12289-16384 columns: the whole row in
//     registers, 512 threads (N = 16384, M = 8192: 96.3 against 87.1 for the
//     row in one CTA's shared memory, call 5). At any M: a threshold at
//     M = 8192 would split the launcher's plan bucket of 2112-8447 rows
//     (cache::m_bucket on 132 SMs), whose plan the first call's M decides;
//     fewer rows were not measured.
// Elsewhere, with the rules of their own kernels: wide_bwd_default (all 7
// clusters of 16 that fit, not 6; the fused 16-bit backward of 16384
// columns in 16 warps; calls 5 and 11) and fused_row_bwd_default (the fused
// fp32 backward, 8 columns a thread; calls 1-3).
std::optional<Config> fast_memory_default(const SpaceQuery& q, const ConfigFilter& accept) {
  if (!fast_memory(q) || q.cc < 90) return std::nullopt;
  if (q.kernel == Kernel::fwd) return fast_memory_fwd_default(q, accept);
  if (q.kernel == Kernel::bwd_dx) return fast_memory_bwd_default(q, accept);
  return std::nullopt;
}

// fast_memory_fwd_default's rules where a row's chain of latencies is the
// time, not its bytes: at most two rows an SM (the decode regime), the
// training sizes' 16-48 rows an SM, and the 16-bit LayerNorm rules by rows
// an SM (sessions 51-52). First among the forward rules.
std::optional<Config> fast_memory_fwd_latency_default(const SpaceQuery& q, const ConfigFilter& accept) {
  const RowKind kind = row_kind(q);
  const bool half = kind.half, plain_layer = kind.plain_layer, plain_rms = kind.plain_rms;
  const auto valid = [&](const Config& c) { return !accept || accept(c).has_value(); };
  // The decode regime: a row a CTA, at most a row an SM, where the time is
  // one row's chain of latencies, not bytes. Every config in one process on
  // an H200 (bench/results/s51, call 4), bf16 LayerNorm, us at M = 1 / 8 /
  // 64 against the default before:
  //   * 8192-16384 columns, the whole row in 32 warps (16384: 16 elements a
  //     thread, not 64 in 8 warps): 16384 6.2 / 6.1 / 6.7 against 9.7 / 9.5
  //     / 10.0; 12288 6.0 / 6.0 / 6.2 against 8.5 / 8.5 / 8.6; 8192 5.2 /
  //     5.1 / 5.2 against 5.5 / 5.3 / 5.5; fp32 at M = 1 16384 7.4 against
  //     9.1, 8192 5.9 against 6.6; add + RMSNorm bf16 16384 6.2 against 7.1
  //     (plain RMSNorm's default was already this config). At M = 256 (two
  //     rows an SM) 16 warps led: 8.5 against 10.6 (32 warps 10.3).
  //   * 32768 and 65536 columns, at most 8 rows: the row over a cluster of
  //     4096-column slabs (8 / 16 CTAs of 4 warps, 2 stages), one cluster a
  //     row: 32768 6.4 / 6.6 against 8.0 / 8.0, 65536 6.7 / 7.1 against 8.0
  //     / 8.0 (at M = 64 the gains were under 5%).
  //   * The same rule for 16-bit add + LayerNorm, and for plain RMSNorm of
  //     either width up to a row an SM (session 52, call 1, every config in
  //     one process, bf16 at M = 1 / 64, us against the default before):
  //     add + LayerNorm 8192 5.5 / 6.3 against 6.0 / 6.5, 12288 6.7 / 7.2
  //     against 8.0 / 8.5, 16384 7.0 / 7.6 against 7.7 / 8.3; RMSNorm 8192
  //     4.7 / 5.4 against 5.1 / 5.6, 12288 5.6 / 6.0 against 7.5 / 7.9.
  //     A/B (call 2, round 1 / round 2, us): add + LayerNorm M = 1 8192
  //     6.1 / 6.1 -> 5.7 / 5.8, 12288 8.1 / 8.2 -> 6.9 / 6.9, 16384 7.6 /
  //     7.8 -> 6.9 / 7.1, fp16 12288 M = 64 8.7 / 8.8 -> 6.9 / 7.2, M =
  //     200 (16 warps) 10.5 / 10.5 -> 9.3 / 9.4; RMSNorm M = 1 8192 5.1 /
  //     5.0 -> 4.6 / 4.7, 12288 7.3 / 7.1 -> 5.2 / 5.3, fp16 12288 M = 64
  //     7.4 / 7.5 -> 5.5 / 5.5, fp32 16384 M = 1 8.1 / 8.1 -> 6.5 / 6.3,
  //     fp32 8192 M = 64 6.2 / 6.1 -> 5.8 / 6.0. RMSNorm of 16384 columns
  //     at M = 200 lost in 16 warps (7.1 / 7.1 -> 7.7 / 7.6): RMSNorm keeps
  //     its rules past a row an SM.
  const bool row_an_sm = rows_a_sm_within(q, 0, 1);
  if ((plain_layer || (plain_rms && row_an_sm) || (half && q.residual)) && q.n >= 8192 && q.n <= 16384 &&
      rows_a_sm_within(q, 0, 2)) {
    const Config c{static_cast<int>(next_pow2(q.n)), row_an_sm ? 32 : 16, 1, 0};
    if (q.residual ? takes_residual(c, accept) : valid(c)) return c;
  }
  // Past two rows an SM, to 32 (call 6, every config in one process, bf16
  // LayerNorm at M = 300, 528, 1056, 2112, 4224, us against the default
  // before): 16384 columns in 16 warps (32 elements a thread, not 64 in 8):
  // 11.4 / 13.4 / 21.8 / 37.8 / 71.6 against 11.8 / 15.4 / 23.7 / 40.8 /
  // 76.9; 12288 columns in 12 warps (32 a thread, the tile exact, not a
  // 16384-column tile or 48 a thread in shared memory): 8.2 / 11.4 (16
  // warps; 12: not among the three best) / 17.2 / 28.9 / 52.5 against 10.4
  // / 13.0 / 19.8 / 31.4 / 57.2; 8192 columns in 8 warps from four rows an
  // SM (the rule for M > 8192 below): 8.4 / 12.6 / 20.4 / 35.4 against 9.5
  // / 13.0 / 21.1 / 37.8 (at M = 300 the default's 16 warps led, 6.9
  // against 7.3), and on to M = 8192, where that rule takes over.
  // A/B (call 7, round 1 / round 2): M = 4096 bf16 16384 73.5 / 73.6 ->
  // 69.5 / 69.1, 12288 55.6 / 55.8 -> 51.0 / 50.9, 8192 36.6 / 36.6 ->
  // 34.6 / 34.4, M = 8192 8192 71.1 / 71.1 -> 66.5 / 66.6; M = 8192 at
  // 16384 (64 rows an SM) level. 12288 columns in 12 warps led at x = 512
  // MiB too, 98.8% of copy against 93.3 (call 7): that rule for every M
  // past two rows an SM (A/B, call 8).
  // Every config in one process at x = 512 MiB (session 51, call 13, one
  // round): the 16-bit fused forward of 12288 columns (the residual in
  // x's dtype) on the exact tile in 16 warps (24 elements a thread), add +
  // LayerNorm 98.5% of copy against 90.8 for the 16384-column tile in 8
  // warps, add + RMSNorm 98.7 against 96.8 for 8192-column tiles in 32
  // warps (the best, 98.9, the 16384-column tile in 16). From 16 rows an
  // SM. A/B (session 52, call 1, round 1 / round 2, % of copy): add +
  // LayerNorm bf16 91.4 / 91.2 -> 98.0 / 97.9, fp16 91.7 / 91.4 -> 97.9 /
  // 98.5, M = 4096 89.2 / 89.4 -> 95.3 / 94.9; add + RMSNorm 96.0 / 96.3
  // -> 98.1 / 98.1, M = 4096 91.3 / 90.8 -> 95.5 / 95.9.
  // The residual as an fp32 stream beside 16-bit rows (session 52, call 1,
  // one round): add + LayerNorm bf16 12288 on the 16384-column tile in 32
  // warps (12 elements a thread, not 8192-column tiles in 16 warps through
  // shared memory), 96.6% of copy against 90.9. A/B (call 2, round 1 /
  // round 2): x = 512 MiB 90.8 / 90.4 -> 96.4 / 96.5, M = 4096 85.7 /
  // 86.2 -> 91.5 / 90.4, fp16 M = 2112 82.2 / 81.7 -> 86.2 / 85.9.
  // 16-bit add + RMSNorm of 8193-12287 columns on the same tile, partly
  // masked (session 57's cold tune at M = 4096: the tile of 12288 in 16
  // warps won every key of 8704-11264 columns, 1.09-1.22x over the
  // 8192-column tiles in 32 warps of the default before). A/B (session 58,
  // call 6, round 1 / round 2, % of copy): M = 4096 bf16 8704 78.0 / 78.2
  // -> 96.3 / 96.6, 9216 77.4 / 77.8 -> 97.0 / 96.6, 10240 86.7 / 83.7 ->
  // 97.2 / 97.2, 11264 89.5 / 89.5 -> 97.2 / 97.0; x = 512 MiB 8704 81.9 /
  // 82.2 -> 99.1 / 99.5, 10240 90.0 / 90.5 -> 98.6 / 98.7, 11264 94.8 /
  // 94.8 -> 98.4 / 98.6. (Add + LayerNorm there: not measured.)
  const bool rms_12k = q.norm == Norm::rms && q.n > 8192 && q.n < 12288;
  if (half && q.residual && (q.n == 12288 || rms_12k) && q.m >= 16 * std::int64_t{q.sm_count}) {
    const Config c{12288, 16, 1, 0};
    if (takes_residual(c, accept)) return c;
    const Config f{16384, 32, 1, 0};
    if (q.norm == Norm::layer && takes_residual(f, accept, Stream::fp32_beside_16bit)) return f;
  }
  // Rows of 1024 columns over 16-32 rows an SM: 32 threads a row
  // (32 elements a thread), four rows a CTA of 4 warps, not a row a CTA of
  // 2 warps. LayerNorm at M = 4096 (session 51, call 13, one round) 7.9 us
  // against 8.7 (50.1% of copy against 45.2; 8 warps of 8 rows 7.9 too).
  // A/B (session 52, call 1, round 1 / round 2): M = 4096 8.6 / 8.7 -> 7.8
  // / 7.8 us (fp16 8.6 / 8.6 -> 7.8 / 7.9), 3000 7.4 / 7.5 -> 7.1 / 7.4,
  // 2112 level; at M = 6336 (48 rows an SM) it lost, 10.3 / 10.4 -> 10.7 /
  // 10.9, hence to 32 rows an SM (call 2: M = 4224 8.7 / 8.8 -> 7.8 /
  // 7.9). Add + LayerNorm at M = 4096 (call 4, one round): 11.2 us against
  // 12.4 (2, 4 and 8 rows a CTA level). A/B for the other forms (call 5,
  // round 1 / round 2, us): add + LayerNorm M = 4096 12.2 / 12.1 -> 11.3 /
  // 11.3 (fp16 12.3 / 12.0 -> 11.0 / 10.8), 4224 12.3 / 12.4 -> 11.3 /
  // 11.4, 2112 level; add + RMSNorm 11.8 / 11.9 -> 11.2 / 11.1; RMSNorm
  // 8.2 / 8.3 -> 7.6 / 7.5; add + LayerNorm beside an fp32 stream 19.5 /
  // 19.6 -> 17.7 / 18.0. Add + RMSNorm beside an fp32 stream lost (15.3 /
  // 15.2 -> 17.9 / 18.0): not that one.
  // fp32 LayerNorm at M = 4096 (call 6, one round): 11.4 us against 12.1.
  // A/B (call 7): fp32 LayerNorm M = 4096 12.4 / 12.2 -> 11.3 / 11.4 us,
  // 4224 12.3 / 12.3 -> 11.6 / 11.4, RMSNorm M = 4096 11.7 / 11.7 -> 11.2
  // / 11.3; at M = 2112 (16 rows an SM) fp32 lost (LayerNorm 8.4 / 8.4 ->
  // 9.0 / 9.2, RMSNorm 8.2 / 8.1 -> 8.6 / 8.5) where 16-bit rows were
  // level: every form from past 16 rows an SM.
  // Since session 59 also 768-1023 columns, on the 1024-column tile
  // (session 57's tune at M = 4096: 32 threads a row won at 768, LayerNorm
  // 4 warps of 4 rows 1.11-1.13x over the default's 2 warps a row, RMSNorm
  // and add + RMSNorm 1.15-1.18x). As the default (A/B, % of copy, round 1
  // / round 2; bench/results/s59, call 1): M = 4096 bf16 768 38.0 / 37.7 ->
  // 43.4 / 42.5, 896 41.3 / 41.4 -> 45.1 / 45.5, 1000 43.9 / 44.1 -> 48.0 /
  // 48.1, fp16
  // 768 37.8 / 37.4 -> 43.3 / 42.7, fp32 768 57.8 / 57.7 -> 61.2 / 61.4,
  // 1000 62.0 / 62.3 -> 67.9 / 66.1, RMSNorm bf16 768 38.4 / 38.6 -> 44.2 /
  // 44.5, 1000 45.6 / 45.3 -> 48.0 / 47.8, add + RMSNorm 768 57.1 / 58.1 ->
  // 63.1 / 63.5; M = 4224 768 37.6 / 38.4 -> 43.0 / 44.7; M = 2200 768
  // 24.9 / 24.9 -> 27.5 / 26.1.
  if ((half || plain_layer || plain_rms) && q.n >= 768 && q.n <= 1024 && rows_a_sm_within(q, 16, 32)) {
    const Config c{1024, 4, 4, 0};
    if (!q.residual ? valid(c)
                    : takes_residual(c, accept) ||
                          (q.norm == Norm::layer && takes_residual(c, accept, Stream::fp32_beside_16bit)))
      return c;
  }
  // 16-bit LayerNorm and RMSNorm of 3072 columns at training rows, in 4
  // warps, not 8: LayerNorm on the 4096-column tile (its rule at large M),
  // RMSNorm on the exact one (24 elements a thread). M = 4096 (session 52,
  // calls 1 and 6, one round): LayerNorm 15.9 us against 16.8, RMSNorm 14.8
  // against 15.4. A/B (calls 2 and 7, round 1 / round 2, us): LayerNorm
  // M = 2112 11.1 / 11.0 -> 10.7 / 10.8, 4096 16.6 / 16.6 -> 15.7 / 15.6
  // (fp16 16.5 / 16.5 -> 15.6 / 15.5), 6336 23.7 / 23.8 -> 21.9 / 21.7;
  // RMSNorm M = 4096 15.4 / 15.3 -> 14.9 / 14.9 (fp16 15.4 / 15.3 -> 14.8 /
  // 14.9), 6336 21.4 / 21.5 -> 20.5 / 20.6, 2112 level.
  if (half && (plain_layer || plain_rms) && q.n == 3072 && training_rows(q)) {
    const Config c = plain_layer ? Config{4096, 4, 1, 0} : Config{3072, 4, 1, 0};
    if (valid(c)) return c;
  }
  if (half && plain_layer) {
    std::optional<Config> c;
    if ((q.n == 12288 || q.n == 16384) && !rows_a_sm_within(q, 0, 2)) {
      // The exact tile, 32 elements a thread (12 and 16 warps), at every M
      // past two rows an SM (calls 6-8 above). 16384 stopped at 32 rows an
      // SM until session 52 (call 1, one round: M = 6000 99.2 us against
      // 105.9 in 8 warps, 93.7% of copy against 87.7; from M = 8193 the rule
      // of more than 8192 rows, session 35, took 16 warps already). A/B
      // (call 2, round 1 / round 2, % of copy): M = 4225 85.3 / 85.4 ->
      // 92.4 / 92.4, 6000 87.8 / 87.4 -> 94.3 / 94.1 (fp16 6336 88.5 / 88.2
      // -> 94.1 / 94.2), 8192 88.8 / 88.9 -> 95.3 / 95.5.
      c = Config{static_cast<int>(q.n), static_cast<int>(q.n / 1024), 1, 0};
    } else if (q.n > 6144 && q.n <= 8192 && q.m >= 4 * std::int64_t{q.sm_count} && q.m <= 8192) {
      // (6145-8191 since session 59: session 57's tune at M = 4096 had
      // 6656 and 7680 on this tile in 8 warps 1.08-1.11x over 16, 7168 on
      // its exact tile in 7 1.13x. As the default, A/B, % of copy, two
      // rounds, bench/results/s59, call 1: M = 4096 bf16 6656 76.1 / 76.6 ->
      // 84.0 / 84.7, 7168 78.6 / 79.4 -> 87.1 / 87.7, 7680 81.8 / 83.8 ->
      // 89.1 / 89.6, 8000 84.9 / 84.9 -> 90.8 / 91.3, fp16 7168 80.4 / 79.4
      // -> 88.2 / 88.3; M = 8192 6656 78.6 / 79.1 -> 91.9 / 89.9, 7168 82.0 /
      // 82.1 -> 91.8 / 94.0; M = 2200 7168 71.8 / 72.8 -> 76.4 / 75.8.)
      c = Config{8192, 8, 1, 0};
    } else if ((q.n == 32768 || q.n == 65536) && q.m <= 8) {
      c = Config{4096, 4, 2, static_cast<int>(q.m), static_cast<int>(q.n / 4096)};  // a cluster a row
    } else if (q.n > 8192 && q.n <= 9216 && rows_a_sm_within(q, 16, 32)) {
      // 8193-9216 on the 9216 tile in 9 warps, where the 10240 tile in 8
      // (since session 60; its cold tune at M = 4096: 9216 1.04-1.05x; A/B,
      // % of copy, two rounds averaged, bench/results/s60 call 5: M = 4096
      // bf16 8448 85.2 -> 88.3, 8704 85.2 -> 89.6, 9216 86.7 -> 90.7, fp16
      // 8704 87.5 -> 90.4, 9216 87.3 -> 89.9; M = 2200 8704 75.4 -> 80.5;
      // M = 8192, outside, level).
      c = Config{9216, 9, 1, 0};
    } else if (q.n > 14336 && q.n < 16384 && rows_a_sm_within(q, 16, 32)) {
      // 14337-16383 on the 16384 tile in 16 warps, not 8 (since session 60;
      // session 58's tune at M = 4096: 14848-15872 1.04-1.06x; session 60's
      // A/B, % of copy, M = 4096 bf16 14848 84.1 -> 89.1, 15360 84.5 -> 89.8,
      // 15872 84.8 -> 91.5, fp16 15360 86.4 -> 90.7; M = 2200 15360 80.3 ->
      // 85.4).
      c = Config{16384, 16, 1, 0};
    }
    if (c && valid(*c)) return c;
  }
  // 16-bit RMSNorm of 12289-14848 columns at 16-32 rows an SM on the
  // 4096-column tile in 16 warps, where the whole row in 32 (since session
  // 60). Session 58's tune at M = 4096 had 13312-14336 1.05-1.09x, session
  // 60's 12800 1.06-1.07x. A/B, % of copy, two rounds averaged
  // (bench/results/s60, calls 1 and 4): M = 4096 bf16 12544 85.2 -> 94.5,
  // 12800 86.8 -> 93.4, 13312 88.4 -> 94.0, 13824 88.5 -> 94.6, 14336 89.5
  // -> 93.3, 14848 91.1 -> 94.1, fp16 12800 85.5 -> 95.3, 13824 89.0 ->
  // 93.9; M = 2200 12800 82.5 -> 89.3, 13824 84.7 -> 90.0; 15360, outside,
  // unchanged.
  if (half && plain_rms && q.n > 12288 && q.n <= 14848 && rows_a_sm_within(q, 16, 32)) {
    const Config c{4096, 16, 1, 0};
    if (valid(c)) return c;
  }
  // fp32 LayerNorm of 4097-6143 columns at 16-32 rows an SM on a tile of N
  // rounded up to 1024 in 8 warps, where the 8192-column tile in 16 (since
  // session 60; session 58's tune at M = 4096: 4608 1.07x, 5120 1.05x, 5632
  // 1.03x; session 60's A/B, % of copy, M = 4096 4608 90.9 -> 97.2, 5120
  // 92.7 -> 96.2, 5632 96.1 -> 96.1; M = 2200 4608 82.8 -> 90.1, 5632 87.8
  // -> 93.4).
  if (kind.esize == 4 && plain_layer && q.n > 4096 && q.n < 6144 && rows_a_sm_within(q, 16, 32)) {
    const Config c{static_cast<int>(round_up(q.n, std::int64_t{1024})), 8, 1, 0};
    if (valid(c)) return c;
  }
  // 16-bit add + RMSNorm of 16385-20480 columns at 16-32 rows an SM on a
  // tile of N rounded up to 4096 in 16 warps (the row in shared memory),
  // where the 32768-column slab (since session 60; session 58's tune at M =
  // 4096: 18432 on 20480 1.09x; session 60's A/B, % of copy, M = 4096 16896
  // 83.0 -> 95.6, 18432 86.8 -> 95.7, 20480 88.9 -> 95.1; M = 2200 18432
  // 83.4 -> 91.0).
  if (half && q.residual && q.norm == Norm::rms && q.n > 16384 && q.n <= 20480 && rows_a_sm_within(q, 16, 32)) {
    const Config c{static_cast<int>(round_up(q.n, std::int64_t{4096})), 16, 1, 0};
    if (takes_residual(c, accept)) return c;
  }
  return std::nullopt;
}

// fast_memory_default's forward rules: those by rows an SM first, then
// those of the bandwidth regime and of rows past 16384 columns.
std::optional<Config> fast_memory_fwd_default(const SpaceQuery& q, const ConfigFilter& accept) {
  if (std::optional<Config> c = fast_memory_fwd_latency_default(q, accept)) return c;
  const auto [esize, half, plain_layer, plain_rms] = row_kind(q);
  const auto valid = [&](const Config& c) { return !accept || accept(c).has_value(); };
  // Rows of 8193-12288 columns keep the H100's rules (no measured gain: bf16
  // N = 12288 88.9 / 88.3% of copy with them, 88.7 / 88.8 this way, call 3),
  // but for the rules by rows an SM (fast_memory_fwd_latency_default).
  constexpr std::int64_t kRegisterRowFrom = 12288;
  // Rows of 12289-16384 columns in registers: fp32 RMSNorm + add in 16
  // warps (session 35, above), and since session 46 LayerNorm + add in 16
  // warps too (16-bit rows had 8, fp32 rows 32) and 16-bit RMSNorm in 32
  // (it had 8); the fused forms with the residual in x's dtype. Every config in one process
  // on an H200 at x = 512 MiB (bench/results/s46, call 12), % of copy
  // against the default before: LayerNorm + add bf16 N = 16384 97.7 against
  // 96.1, fp32 96.2 against 93.8; RMSNorm bf16 98.2 against 96.9.
  if (q.n > kRegisterRowFrom && q.n <= 16384 &&
      (q.residual ? q.norm == Norm::layer || esize == 4 : plain_rms && half)) {
    const Config c{16384, q.residual ? 16 : 32, 1, 0};
    if (q.residual ? takes_residual(c, accept) : valid(c)) return c;
  }
  // 16-bit RMSNorm + add of 4096 columns (the residual in x's dtype) past
  // 256 rows a SM: 32 elements a thread (4 warps), not 16 (8 warps). Every
  // config in one process on an H200 at x = 512 MiB (M = 65536, 496 rows a
  // SM; bench/results/s50, call 2, one round): 98.9% of copy against 97.7
  // (session 48's Python table: 96.6).
  if (half && q.residual && q.norm == Norm::rms && q.n == 4096 && q.m > 256 * static_cast<std::int64_t>(q.sm_count)) {
    const Config c{4096, 4, 1, 0};
    if (takes_residual(c, accept)) return c;
  }
  // The fused forms' rows of 4096 and 8192 columns past 64 rows an SM
  // (the residual in x's dtype): 32 elements a thread, two rows a CTA, for
  // 16-bit add + LayerNorm (4096: 8 warps, it had one row in 8; 8192: 16
  // warps, it had one row in 16) and fp32 add + RMSNorm 8192 (16 warps, it
  // had one row in 16). Every config in one process on an H200 at x = 512
  // MiB (bench/results/s53, call 7, one round), % of copy against the
  // default: add + LayerNorm bf16 4096 98.5 against 97.5, fp16 98.3 (the
  // same tile in 16 warps, 4 rows) against 97.3; bf16 8192 98.2 against
  // 96.8 (fp16 level, 97.1 against 97.0); add + RMSNorm fp32 8192 97.6
  // against 96.7. As the default (call 8, A/B, us, round 1 / round 2): x =
  // 512 MiB add + LayerNorm bf16 4096 517.1 / 516.7 -> 511.8 / 511.8, fp16
  // 518.1 / 517.4 -> 515.0 / 514.8, bf16 8192 516.4 / 517.1 -> 511.4 /
  // 511.5 (fp16 level), add + RMSNorm fp32 8192 521.2 / 521.4 -> 516.3 /
  // 516.0; M = 10000 bf16 8192 159.5 / 159.2 -> 157.8 / 158.4, fp32 add +
  // RMSNorm 318.5 / 317.8 -> 316.3 / 316.6, bf16 4096 level.
  // Since a CTA's rows store their statistics together (fwd.cuh,
  // put_cta_stats), fp32 rows of 8192 columns, both norms, take 32 warps
  // (8 elements a thread), and 16-bit add + RMSNorm past 64 rows an SM the
  // whole row in 32 warps, one row a CTA, at 8192 and 16384 columns (it had
  // 8192-column tiles of 32 warps at 16384, one row in 16 warps at 8192).
  // Every config in one process on an H200 at x = 512 MiB (bench/results/
  // s55, call 7, one round), % of copy against the default: add + LayerNorm
  // fp32 8192 97.8 against 96.9, add + RMSNorm fp32 8192 98.3 against 96.8,
  // bf16 8192 98.8 against 97.7, 16384 98.5 against 97.4. As the defaults
  // (calls 8-9, A/B, us, round 1 / round 2): add + LayerNorm fp32 8192
  // 520.0 / 519.8 -> 515.5 / 515.1, add + RMSNorm fp32 8192 522.4 / 522.1
  // -> 514.5 / 514.1, bf16 8192 515.8 / 514.8 -> 509.9 / 509.9, 16384
  // 515.5 / 515.8 -> 509.0 / 509.1, fp16 8192 516.3 / 515.4 -> 509.6 /
  // 510.8, 16384 515.9 / 516.1 -> 509.9 / 509.3; M = 20000 add + RMSNorm
  // bf16 8192 315.7 / 316.0 -> 313.1 / 313.1, add + LayerNorm fp32 635.1 /
  // 634.9 -> 630.5 / 630.3; beside an fp32 stream level (not taken).
  // (fp32 add + RMSNorm 8192 had session 53's 16 warps until session 55's
  // 32.) One rule: the three are apart by dtype, norm and N.
  if (q.residual && q.m > 64 * static_cast<std::int64_t>(q.sm_count)) {
    std::optional<Config> c;
    if (esize == 4 && q.n == 8192) {
      c = Config{8192, 32, 2, 0};
    } else if (half && q.norm == Norm::rms && (q.n == 8192 || q.n == 16384)) {
      c = Config{static_cast<int>(q.n), 32, 1, 0};
    } else if (half && q.norm == Norm::layer && (q.n == 4096 || q.n == 8192)) {
      c = Config{static_cast<int>(q.n), static_cast<int>(q.n / 512), 2, 0};
    }
    if (c && takes_residual(*c, accept)) return c;
  }
  // 16-bit LayerNorm rows of 512 columns, no residual, from the rows where
  // the default stops depending on M (default_m_bound: 67584 on 132 SMs):
  // 16 threads a row (32 elements a thread) in 512-thread CTAs, 32 rows a
  // CTA, not the H100's 32 threads a row (16 elements). Every config in
  // one process on an H200 at x = 512 MiB (bench/results/s48, calls 7-8), %
  // of copy: bf16 97.8 against 96.6, fp16 98.6 against 97.8 (every config
  // of 16 threads a row 97.0-98.6). Not RMSNorm (85.9 against 97.5: its
  // best, 98.5, is 128 threads of 4 rows), not N = 256 (the rule's config
  // is already the best there), not M = 4096 (6.3 us against 5.9).
  if (half && plain_layer && q.n == 512 && q.m >= default_m_bound(q.sm_count)) {
    const Config c{512, 16, 32, 0};
    if (valid(c)) return c;
  }
  // Rows of 256 columns from default_m_bound rows on, since a CTA's rows
  // store their statistics together (fwd.cuh, put_cta_stats): fewer rows a
  // CTA than the H100's 512-thread CTAs. 16-bit LayerNorm: 16 threads a row
  // in 8 warps (16 rows); fp32 LayerNorm: 32 threads a row in 16 warps (16
  // rows); 16-bit add + LayerNorm (the residual in x's dtype): 16 threads a
  // row in 4 warps (8 rows). Every config in one process on an H200 at x =
  // 512 MiB (bench/results/s55, call 5, one round), % of copy against the
  // default: bf16 98.9 against 96.8, fp16 99.1 against 97.5 (its best, 4
  // warps of 8 rows, 99.3), fp32 100.7 against 98.8, add + LayerNorm bf16
  // 99.7 against 98.5. As the default (call 6, A/B, us, round 1 / round 2):
  // bf16 262.4 / 262.5 -> 257.1 / 258.0, fp16 262.1 / 261.5 -> 256.9 /
  // 257.4, fp32 257.7 / 258.4 -> 254.3 / 254.7, add + LayerNorm bf16 516.0 /
  // 515.8 -> 509.0 / 509.4, fp16 515.7 / 515.5 -> 509.1 / 509.6; M = 100000
  // bf16 28.2 / 27.8 -> 26.9 / 27.1 (fp32 51.1 / 51.5 -> 49.9 / 51.7); in the
  // Python harness bf16 96.2 -> 98.3, fp16 96.7 -> 98.2 (calls 3 and 6).
  if (q.n == 256 && q.norm == Norm::layer && q.m >= default_m_bound(q.sm_count)) {
    if (plain_layer) {
      const Config c = half ? Config{256, 8, 16, 0} : Config{256, 16, 16, 0};
      if (valid(c)) return c;
    } else if (half) {  // with a residual (not plain LayerNorm)
      const Config c{256, 4, 8, 0};
      if (takes_residual(c, accept)) return c;
    }
  }
  // 16-bit rows of 1025-4095 columns that are not a power of two, without a
  // residual, over many rows: 32 elements a thread (the tile the next power
  // of two, the last accesses masked), one row a CTA (64 threads up to 2047
  // columns, 128 up to 4095). Every config in one process on an H200 at x =
  // 512 MiB, bf16 LayerNorm, % of copy against the default before (16
  // elements a thread up to 2048 columns, two rows a CTA of 256 threads
  // above; bench/results/s42, call 3): N = 1152 91.7 against 79.6, 1280
  // 95.8 against 85.1, 1536 99.6 against 90.5, 1792 99.0 against 95.0,
  // 2304 91.6 against 81.8, 2560 94.9 against 86.2, 2816 98.4 against 90.9,
  // 3072 99.7 against 94.0, 3328 99.6 against 95.8, 3840 98.9 against 99.4
  // (so up to 3839 columns). As the default (A/B, call 4, round 1 / round
  // 2): bf16 1152 79.5 / 80.3 -> 92.1 / 92.2, 1536 91.2 / 91.6 -> 99.6 /
  // 99.5, 2304 81.6 / 82.2 -> 91.9 / 92.0, 2560 86.1 / 86.7 -> 95.3 / 95.2,
  // 3072 94.1 / 95.2 -> 99.7 / 99.6; fp16 1536 91.6 / 92.0 -> 99.1 / 99.8,
  // 2560 86.6 / 87.1 -> 95.4 / 95.9; RMSNorm bf16 1536 98.6 / 98.1 -> 99.6
  // / 100.2, 2560 90.3 / 90.1 -> 94.7 / 94.8; at M = 16384 (kernel time, L2
  // flushed) bf16 1536 83.6 / 83.9 -> 89.9 / 89.3, 2560 82.1 / 79.9 -> 87.7
  // / 90.1, 3072 88.7 / 88.6 -> 93.7 / 94.6.
  // 513-1023 columns the same, two rows a CTA of 64 threads: bf16 N = 640
  // 97.3 against 78.8 (call 6); as the default (call 7): bf16 640 78.9 /
  // 79.5 -> 97.2 / 98.0, 768 89.5 / 90.0 -> 97.7 / 97.9, 896 95.7 / 96.3
  // -> 97.5 / 98.3, fp16 640 81.7 / 81.4 -> 97.3 / 97.4, RMSNorm bf16 640
  // 93.1 / 93.2 -> 98.3 / 98.5.
  const std::int64_t single = next_pow2(q.n);
  // 16-bit rows of 1152 (and LayerNorm 1280) columns without a residual, over at least
  // 16 rows an SM: the tile of exactly N columns in rows of 48 threads two a
  // CTA of 3 warps (1152: 24 elements a thread) and of 80 threads four a
  // CTA of 5 warps (1280: 16), where the rule below took 2048 columns in 2
  // warps (44% and 37% of the accesses masked). Every config in one process
  // on an H200 at x = 512 MiB (bench/results/s44, call 2), bf16 LayerNorm:
  // 1152 99.2% of copy against 92.0, 1280 98.8 against 96.1; RMSNorm 1152
  // 99.7 against 98.2.
  // As defaults (A/B, call 3): bf16 1152 91.8 / 91.7 -> 99.1 / 98.9, 1280
  // 95.9 / 95.9 -> 98.4 / 98.5, fp16 1152 92.3 / 92.3 -> 99.1 / 98.8, 1280
  // 96.4 / 96.4 -> 98.3 / 98.5, RMSNorm 1152 98.1 / 98.3 -> 99.5 / 99.2; but
  // RMSNorm 1280 lost (100.1 / 100.3 -> 97.6 / 97.4): LayerNorm alone there.
  // LayerNorm 1280 at 16-32 rows an SM since session 59: the 2048-column
  // tile in 2 warps, as the rule below had it (session 58's cold tune at
  // M = 4096: 1.11-1.12x over 5 warps of 4 rows; A/B, % of copy, round 1 /
  // round 2, bench/results/s59, call 5: M = 4096 bf16 45.6 / 45.8 -> 52.1 /
  // 51.5, fp16 46.0 / 45.2 -> 51.8 / 51.2, M = 4224 46.0 / 45.7 -> 51.9 /
  // 52.9, M = 2200 level, 36.2 / 36.9 -> 36.4 / 36.3).
  if (half && !q.residual && q.m >= 16 * static_cast<std::int64_t>(q.sm_count) &&
      (q.n == 1152 || (q.n == 1280 && plain_layer))) {
    const Config c = q.n == 1152                 ? Config{1152, 3, 2, 0}
                     : rows_a_sm_within(q, 16, 32) ? Config{2048, 2, 1, 0}
                                                   : Config{1280, 5, 4, 0};
    if (valid(c)) return c;
  }
  // 16-bit rows without a residual whose length is not a power of two, over
  // at least 16 rows an SM (the launcher's plan bucket from 2112 rows on an
  // H200, cache::m_bucket): the whole row in one tile of other than a power
  // of two (N rounded up to a multiple of the CTA's accesses), one row a
  // CTA, in registers up to 32 elements a thread, else a slab in shared
  // memory. Every config in one process on an H200 at x = 512 MiB, % of
  // copy against the default before (bench/results/s43, call 1):
  //   * LayerNorm: 2049-2560 columns in 2560-column tiles of 4 warps (bf16
  //     2304 99.5 against 91.5, 2560 99.5 / 94.6); 4097-6144 in 8 warps,
  //     tiles of a multiple of 1024 (4608 in 5120 98.3 / 81.6, 5120 100.1 /
  //     85.9, 6144 99.5 / 93.8; 7168's 28 elements a thread ran 89.4 against
  //     98.5 for its rule, call 2); 8193-12288 and 16385-22528 in 8 warps,
  //     tiles of a multiple of 2048 in shared memory (16-byte copies; 9216
  //     in 10240 98.0 / 86.2, where 9216 columns of 8-byte copies ran 90.4;
  //     10240 97.5 / 85.6, 12288 93.2 / 89.2, 18432 91.3 / 84.5; 22528
  //     88.1 / 85.3, call 3).
  //   * RMSNorm, 24 elements a thread (three 16-byte accesses): 2049-3071
  //     columns in 3072-column tiles of 4 warps (bf16 2304 100.4 / 92.1);
  //     4097-6144 in 6144 of 8 warps (4608 100.0 / 98.7, 5632 99.0 / 92.9);
  //     8193-12288 in 12288 of 16 warps (9216 100.1 / 95.8, 12288 98.5 /
  //     96.5). Also (call 3) 1025-1535 in 1536 of 4 warps, 12 elements a
  //     thread (1280 100.6 / 96.0), 6145-8191 in the 8192-column tile of
  //     8 warps (6656 96.1 / 91.6, 7168 97.8 / 92.6, 7680 99.2 / 95.4), and
  //     16385-20480 in 20480 of 16 warps in shared memory (18432 97.8 /
  //     96.0, 20480 97.3 / 95.3); LayerNorm 2561-3071 in 3072 of 4 warps
  //     (2816 100.5 / 98.6, where session 42's 32 elements a thread mask a
  //     quarter). 4097-6143 columns took session 42's 4096-column tiles
  //     before (the row read twice, the second time from L2: 4608 75.0 ->
  //     98.5, 5120 79.2 -> 97.2 against 8 warps' whole row; bench/results/
  //     s42, calls 7 and 10).
  //   At M = 16384 and 4096 (kernel time, L2 flushed), bf16: LayerNorm 2304
  //   93.0 / 87.6 and 66.1 / 58.6, 5120 96.9 / 84.3 and 84.8 / 65.7, 9216
  //   97.3 / 85.5 and 86.6 / 78.5; RMSNorm at M = 4096 2304 71.5 / 67.7,
  //   5120 90.5 / 74.6, 9216 93.5 / 88.1 (call 2).
  // As the defaults (A/B, call 2, round 1 / round 2), bf16 LayerNorm 2304
  // 91.7 / 91.7 -> 99.7 / 99.3, 4608 81.4 / 81.6 -> 97.9 / 97.6, 5120 85.9
  // / 86.2 -> 99.9 / 99.4, 9216 86.0 / 86.2 -> 97.9 / 97.5, 12288 89.2 /
  // 89.3 -> 93.1 / 92.9, 18432 84.1 / 84.2 -> 89.7 / 90.2, 20480 85.2 /
  // 85.2 -> 88.6 / 88.4; fp16 5120 86.3 / 86.7 -> 99.7 / 99.8, 9216 87.5 /
  // 88.0 -> 98.2 / 98.6; RMSNorm bf16 2304 92.2 / 91.9 -> 100.1 / 100.3,
  // 5632 92.5 / 93.4 -> 98.9 / 99.7, 6144 88.9 / 88.8 -> 99.0 / 99.1, 9216
  // 96.3 / 96.1 -> 99.7 / 100.0; M = 16384 LayerNorm bf16 4608 79.3 / 79.0
  // -> 94.5 / 94.0, 9216 84.8 / 85.0 -> 97.1 / 97.0.
  // Each range: its first and last N, the tile's grain (N rounded up to a
  // multiple of it) and its warps.
  struct TileRange {
    std::int64_t first, last, grain;
    int warps;
  };
  static constexpr TileRange kLayerTiles[] = {
      {2049, 3071, 512, 4}, {4097, 6144, 1024, 8}, {8193, 12288, 2048, 8}, {16385, 22528, 2048, 8}};
  static constexpr TileRange kRmsTiles[] = {
      {1025, 1535, 512, 4}, {2049, 3071, 1024, 4}, {4097, 8191, 2048, 8}, {8193, 12288, 4096, 16}, {16385, 20480, 4096, 16}};
  const auto tile_in = [&q](const auto& ranges) -> std::optional<Config> {
    for (const TileRange& r : ranges)
      if (q.n >= r.first && q.n <= r.last) return Config{static_cast<int>(round_up(q.n, r.grain)), r.warps, 1, 0};
    return std::nullopt;
  };
  if (half && (plain_layer || plain_rms) && q.m >= 16 * std::int64_t{q.sm_count} && q.n != single) {
    const std::optional<Config> c = plain_layer ? tile_in(kLayerTiles) : tile_in(kRmsTiles);
    if (c && valid(*c)) return c;
  }
  if (half && !q.residual && q.m > 8192 && q.n > 512 && q.n < 3840 && q.n != single) {
    const Config c{static_cast<int>(single), static_cast<int>(std::max<std::int64_t>(2, single / 1024)),
                   static_cast<int>(std::max<std::int64_t>(1, 2048 / single)), 0};
    if (valid(c)) return c;
  }
  // fp32 rows of 128K-256K columns without a residual: 16384-column slabs,
  // as many as the row needs (16 at 262144, 13 at 200000), 16 warps, 3
  // stages (192 KB), where wide_fwd_default's H100 rule takes 2 (LayerNorm
  // N = 262144: 91.3% of copy against 89.6; bench/results/s40, call 2; as
  // the default, call 3).
  if (esize == 4 && !q.residual && q.n > 131072 && q.n <= 16 * 16384) {
    const std::optional<Config> c = wide_fwd_config(q, slab_count(q.n, 16384), 16, 3);
    if (c && valid(*c)) return c;
  }
  // fp32 rows of 16385-65535 columns without a residual whose 8192-column
  // slabs are not a power of two (3, 5, 6 or 7; gen::gap_cluster): 3 to 6
  // such slabs in 8 warps, 4 stages; 7, four 16384-column slabs in 16 warps,
  // 2 stages (an H200 runs 16 clusters of 7 at once, 18 fit the SMs). Every
  // config in one process, LayerNorm, % of copy against the default before
  // (bench/results/s41, call 3): N = 20000 91.9 against 82.9 (16384-column
  // slabs in clusters of 2), 36000 92.6 against 53.3 and 45000 88.7 against
  // 59.9 (the slabs in shared memory, clusters of 2), 57000 87.3 against
  // 72.4 (the same).
  // RMSNorm from 5 slabs: at 3 (N = 20000) its 16384-column slabs in
  // clusters of 2 stay (91.9 against 86.8 this way; 36000 67.2 -> 91.3,
  // 45000 72.2 -> 83.2, 57000 81.2 -> 87.5; A/B, call 4).
  const int gap8k = gap_cluster(q.n, 8192);
  if (esize == 4 && !q.residual && gap8k > 0 && gap8k <= 7 && (q.norm == Norm::layer || gap8k > 4)) {
    const std::optional<Config> c = gap8k == 7 ? wide_fwd_config(q, 4, 16, 2) : wide_fwd_config(q, gap8k, 8, 4);
    if (c && valid(*c)) return c;
  }
  // RMSNorm rows: where measured (32K-128K and more than 128K columns; 64K-
  // 128K since session 40: bf16 N = 131072 93.1% of copy in clusters of 8,
  // 16 warps, 4 stages, as LayerNorm's, against 78.1 for H100's rule, clusters
  // of 4 over 32768-column slabs, one stage; bench/results/s40, call 2).
  const bool rms_measured = plain_rms && q.n > 32768;
  if (!half || !(plain_layer || rms_measured)) return std::nullopt;
  if (q.n > kRegisterRowFrom && q.n <= 16384) {
    if (q.m > 8192) return Config{16384, 16, 1, 0};
    return std::nullopt;
  }
  if (q.n <= 16384) return std::nullopt;
  // LayerNorm rows of 16385-24576 columns (a second 16384-column slab at
  // most half full): the whole row in one CTA's shared memory, 16 warps, a
  // CTA per row: bf16 N = 20000 82.5% of copy against 64.4 for the wide
  // forward in clusters of 2 below (every config in one process,
  // bench/results/s41, call 3).
  if (plain_layer && q.n <= 24576) {
    const Config c{32768, 16, 1, 0};
    if (valid(c)) return c;
  }
  // LayerNorm rows of 65536 columns, four full slices of 16384: clusters
  // of 4, 16 warps, 4 stages (the launcher fits the grid to the 30
  // clusters of 4 an H200 runs at once). Against the slab in shared memory
  // (round 1 / round 2): bf16 87.1 / 86.7 -> 91.4 / 91.5% of copy, fp16
  // 86.9 / 86.6 -> 92.0 / 92.2 (s36 call 3); but where the last slice is
  // part empty, slower: bf16 63488 86.3 / 86.1 -> 76.5 / 76.7, 61448 77.4
  // / 77.1 -> 74.4 / 74.5 (call 4), 57344 85.8 -> 81.2, 50000 76.2 -> 70.8
  // (call 3); RMSNorm bf16 65536 level (90.4 -> 90.2).
  if (plain_layer && q.n == 65536) {
    const std::optional<Config> c = wide_fwd_config(q, 4, 16, 4);
    if (c && valid(*c)) return c;
  }
  // RMSNorm the same, at 3 stages: bf16 92.2% of copy (4 stages 90.8)
  // against 90.2 for the slab in shared memory below (s40 call 2; as the
  // default, call 3).
  if (plain_rms && q.n == 65536) {
    const std::optional<Config> c = wide_fwd_config(q, 4, 16, 3);
    if (c && valid(*c)) return c;
  }
  // LayerNorm rows of 32769-49152 columns: three 16384-column slabs, 16
  // warps, 4 stages: bf16 N = 40000 (the last 44% full) 80.8% of copy
  // against 68.8 for the slabs in shared memory below (every config in one
  // process, bench/results/s40, call 8), 36000 (20% full) 72.5 against 61.6
  // (bench/results/s41, call 3); at 50000, four slabs, the last holding 848
  // columns, 72.7 against 77.5: a nearly empty fourth slab keeps the rule
  // below.
  if (plain_layer && q.n > 32768 && q.n <= 3 * 16384) {
    const std::optional<Config> c = wide_fwd_config(q, 3, 16, 4);
    if (c && valid(*c)) return c;
  }
  if (q.n > 32768 && q.n <= 65536) return smem_wave_fwd_config(q, 2, valid);
  // (LayerNorm rows of more than 128K columns: bf16 took the row's slab in
  // shared memory over clusters of 8, 3 CTAs a SM, from session 36 (80.8
  // against 74.6% of copy for the wide forward then) to 39, when the wide
  // forward's full slabs in clusters of 16 took their statistics in one
  // pass (fwd_wide.cuh, kOnePass): bf16 N = 262144 85.4 against 80.3,
  // fp16 88.1 (bench/results/s39, call 4).)
  // Clusters of 2 over rows of 24577-32767 columns (the second slab part
  // empty) at 4 stages, 3 at 32768: every config in one process, bf16
  // LayerNorm (bench/results/s42, call 3), 4 stages against 3: N = 26000
  // 83.9 against 78.2% of copy, 28672 87.7 against 82.3, 30000 85.1 against
  // 80.6; 32768 91.9 at 3 stages. As the default (A/B, call 4): bf16 26000
  // 77.8 / 78.2 -> 83.5 / 83.5, 28672 82.2 / 82.7 -> 88.1 / 88.1, 30000
  // 80.2 / 80.7 -> 84.7 / 84.7, fp16 28672 83.8 / 83.8 -> 90.0 / 90.0.
  const int cluster = q.n <= 32768 ? 2 : q.n <= 131072 ? 8 : 16;
  const std::optional<Config> c = wide_fwd_config(q, cluster, 16, cluster == 2 && q.n == 32768 ? 3 : 4);
  if (c && valid(*c)) return c;
  const int gap16k = gap_cluster(q.n, 16384);  // the 16384-column slabs a row needs, where not a power of two
  // bf16 LayerNorm rows of 237569-245760 columns (15 slabs of 16384, the
  // last more than half full): the row's slab in shared memory over
  // clusters of 8, one persistent wave (N = 240000: 78.6% of copy against
  // 72.4 for the wide forward in clusters of 16, s36 call 5; 78.8 against
  // 74.7 for the wide forward over 15 CTAs, bench/results/s41, call 6).
  // Not at 229377-237568 (the rule from session 36 to 40): N = 230000 73.9
  // this way against 81.6 over 15 CTAs (call 6, one round each).
  if (plain_layer && q.dtype == DType::bf16 && q.n > 237568)
    if (const std::optional<Config> w = smem_wave_fwd_config(q, 8, valid)) return w;
  // Rows of more than 64K columns whose 16384-column slabs are not a
  // power of two (5 to 13, gen::gap_cluster): the row's slabs in shared
  // memory over that many CTAs, 8 warps, one persistent wave, where the
  // wide forward over the same slabs runs 7 clusters at once (one a GPC:
  // 70 SMs for clusters of 10) and the slabs in shared memory need no
  // registers (CTAs of 8 warps, two or more a SM). Every config in one
  // process, bf16 LayerNorm (bench/results/s41, call 4), % of copy against
  // the wide forward: N = 150000 75.2 against 56.0 (the best, 77.0, 32768-
  // column slabs over 5 CTAs in 16 warps), 200000 77.9 against 71.9; as
  // the default (A/B, call 5): bf16 140000 59.3 -> 78.7, 150000 56.3 ->
  // 74.7, 200000 72.6 -> 78.0, fp16 150000 57.5 -> 76.3, 200000 75.2 ->
  // 79.3, RMSNorm bf16 150000 60.5 -> 83.5, 200000 79.2 -> 85.8. Up to 13
  // CTAs: at 14 and 15 the wide forward's clusters take 98 and 105 SMs,
  // and fp16 N = 230000 (15) lost 84.8 -> 75.9 this way; there bf16
  // LayerNorm takes the wide forward too (74.0% of copy at 230000 in
  // 32768-column slabs over clusters of 8, call 2). From 65537 columns (5
  // to 7 slabs) since every config in one process measured so (bf16
  // LayerNorm, call 5: N = 70000 80.1 against 77.3 for the wide forward
  // over the same slabs, 90000 81.8 against 74.8, 110000 81.4 against
  // 74.4; not yet A/B'd as the default, nor RMSNorm there).
  if (q.n > 65536 && gap16k > 0 && gap16k <= 13)
    if (const std::optional<Config> w = smem_wave_fwd_config(q, gap16k, valid, 8)) return w;
  // Elsewhere where 16384-column slabs leave a CTA of 8 or 16 empty: the
  // CTAs they need on the wide forward (wide_clusters' gap clusters: 3
  // from 32769 columns, 14 or 15 from 212993; 7 at N = 100000 before
  // session 41's slabs in shared memory above).
  if (gap16k > 0) {
    const std::optional<Config> g = wide_fwd_config(q, gap16k, 16, 4);
    if (g && valid(*g)) return g;
  }
  return std::nullopt;
}

// fast_memory_default's backward (bwd_dx) rules.
// The backward's grid at training sizes (training_rows;
// fast_memory_bwd_default): rows of up to 1024 columns in two CTAs a SM of
// 4 warps, 2 rows; 2048 in one of 8 warps, 2 rows; 4096 in one of 16 warps.
// ctas_a_sm > 0: that many CTAs a SM instead (the rules past 48 rows a SM).
Config training_bwd_config(const SpaceQuery& q, int ctas_a_sm = 0) {
  const std::int64_t single = next_pow2(q.n);
  Config c = single <= 1024   ? Config{static_cast<int>(single), 4, 2, 0}
             : single == 2048 ? Config{2048, 8, 2, 0}
                              : Config{4096, 16, 2, 0};
  c.group_size_m = (ctas_a_sm > 0 ? ctas_a_sm : single <= 1024 ? 2 : 1) * q.sm_count;
  return c;
}

// The fused 16-bit backward (the residual in x's dtype) on the tile of
// exactly N columns, in rows of other than a power of two of threads, where
// measured (fast_memory_bwd_default has the figures): past 48 rows an SM
// (session 45), one CTA an SM; at training rows (16-48 rows an SM, session
// 59), 8 elements a thread, one or two CTAs an SM. 0 warps: no entry there.
struct FusedSegmented {
  std::int64_t n;
  int warps, rows;                          // past 48 rows an SM
  int train_warps, train_rows, train_per_sm;  // 16-48 rows an SM
};
constexpr FusedSegmented kFusedSegmented[] = {
    {1280, 0, 0, 5, 2, 2},   {2304, 18, 2, 0, 0, 0}, {2560, 20, 2, 10, 1, 2},
    {3072, 12, 2, 0, 0, 0},  {4608, 9, 1, 18, 1, 1}, {5120, 10, 1, 20, 1, 1},
};

// kFusedSegmented's config for N at training rows (`train`) or past 48 rows
// an SM, where the call's residual takes it.
std::optional<Config> fused_segmented_config(const SpaceQuery& q, const ConfigFilter& accept, bool train) {
  for (const FusedSegmented& r : kFusedSegmented) {
    if (r.n != q.n) continue;
    const int warps = train ? r.train_warps : r.warps;
    if (warps == 0) return std::nullopt;
    Config c{static_cast<int>(r.n), warps, train ? r.train_rows : r.rows, 0};
    c.group_size_m = clip_groups(q, c.rows_per_cta, (train ? r.train_per_sm : 1) * static_cast<std::int64_t>(q.sm_count));
    if (takes_residual(c, accept)) return c;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Config> fast_memory_bwd_default(const SpaceQuery& q, const ConfigFilter& accept) {
  const auto [esize, half, plain_layer, plain_rms] = row_kind(q);
  const auto valid = [&](const Config& c) { return !accept || accept(c).has_value(); };
  // The fused backward (a residual in x's dtype or fp32) of 16-bit rows of
  // 257-2048 columns at training sizes (16-48 rows a SM): the plain
  // LayerNorm's configs (training_bwd_config, the rule below), whose grids
  // finish dW/dB in the kernel (finish_by_warps), where fused_bwd_default's 4 CTAs a SM
  // write 528 partial rows for bwd_dwdb. Every config listed in one process
  // at M = 4096 on an H200 (bench/results/s49, call 4), us against that
  // default: add + LayerNorm bf16 N = 512 12.9 / 14.3, 1024 16.3 / 20.0,
  // 2048 24.4 / 26.6; add + RMSNorm 512 12.8 / 13.8, 1024 15.7 / 17.4, 2048
  // 23.2 / 24.5; an fp32 residual beside bf16 1024 20.6 / 23.9 (the best
  // there, 8 warps and 4 rows in one CTA a SM, 20.3). The fp32 stream at
  // every N of the rule since session 50 (A/B against the rules after this
  // one, % of copy, two rounds; bench/results/s50, call 1): add + LayerNorm
  // bf16 512 36.1 / 35.5 -> 42.2 / 42.3, 2048 68.3 / 68.3 -> 75.6 / 75.6,
  // 768 47.5 / 47.4 -> 47.0 / 47.2; add + RMSNorm 512 38.4 / 37.9 -> 42.7 /
  // 42.8, 2048 76.1 / 75.7 -> 77.2 / 77.8.
  // The fused 16-bit backward (a residual in x's dtype) at training rows,
  // since session 59, on the row's own tile, 8 elements a thread: 1280 in 5
  // warps of 2 rows and 2560 in 10 of 1, two CTAs a SM; 4608 in 18 and 5120
  // in 20, one (session 58's cold tune at M = 4096, add + RMSNorm: 1280
  // 1.10-1.13x, 2560 1.07x, 4608 1.07-1.11x, 5120 1.07x over the rules
  // below: the 2048-, 4096- and 8192-column tiles). A/B, dx and dW/dB, % of
  // copy, round 1 / round 2 (bench/results/s59, call 5), bf16 M = 4096: add
  // + RMSNorm 1280 51.0 / 51.1 -> 56.7 / 56.1, 2560 68.7 / 69.3 -> 74.6 /
  // 75.2, 4608 75.1 / 75.4 -> 84.0 / 82.8, 5120 80.8 / 80.9 -> 86.6 / 85.8;
  // add + LayerNorm 1280 46.3 / 46.2 -> 53.4 / 54.3, 2560 63.8 / 64.4 ->
  // 68.2 / 67.9, 4608 72.3 / 73.1 -> 78.7 / 78.0, 5120 78.7 / 77.9 -> 81.5
  // / 81.6; add + RMSNorm M = 2200 1280 36.8 / 36.3 -> 38.1 / 37.9, 4608
  // 65.0 / 64.2 -> 71.5 / 71.3; M = 6000 1280 59.1 / 58.8 -> 66.7 / 66.5,
  // 4608 81.1 / 81.1 -> 88.4 / 87.7.
  if (q.residual && half && training_rows(q))
    if (const std::optional<Config> c = fused_segmented_config(q, accept, true)) return c;
  if (q.residual && half && q.n > 256 && q.n <= 2048 && training_rows(q)) {
    const Config c = training_bwd_config(q);
    if (takes_residual(c, accept) || takes_residual(c, accept, Stream::fp32_beside_16bit)) return c;
  }
  // The same past 48 rows a SM, to 128 (a residual in x's dtype): every
  // config in one process at M = 16384 (124 rows a SM; bench/results/s50,
  // call 8), us against the default of the rules after this one: add +
  // LayerNorm bf16 1024 39.4 against 42.8 (two CTAs a SM of 4 warps, 2
  // rows; four a SM 41.2), 2048 72.4 / 73.8 (two of 8 warps), 4096 132.5 /
  // 135.7 (one of 16 warps, 2 rows); add + RMSNorm 1024 38.6 / 40.0, 4096
  // 128.7 / 131.2 (its 2048 best in 16 warps, 68.8 / 69.4: not taken).
  // As defaults (A/B, % of copy, rounds 1 / 2, call 9): add + LayerNorm
  // bf16 M = 8192 1024 60.0 / 60.5 -> 67.9 / 67.5, 4096 85.0 / 85.0 -> 89.1
  // / 88.8; M = 12288 768 62.9 / 62.6 -> 65.5 / 64.6, 1024 66.6 / 66.3 ->
  // 74.4 / 74.0, 3000 81.4 / 81.2 -> 84.0 / 83.7; M = 16384 1000 67.7 / 67.4
  // -> 78.0 / 77.9, 1024 72.9 / 72.5 -> 80.4 / 79.7, 2048 86.2 / 85.8 ->
  // 87.0 / 87.1, 4096 92.8 / 92.4 -> 94.7 / 94.5, fp16 1024 72.8 / 72.7 ->
  // 79.6 / 79.7; add + RMSNorm bf16 M = 8192 1024 64.3 / 64.2 -> 69.3 /
  // 69.1, M = 16384 1024 77.9 / 77.3 -> 82.5 / 82.1, 4096 95.7 / 94.9 ->
  // 97.5 / 97.5 (2048 at M = 8192 had the same config before: 76.2 / 76.0
  // and 75.2 / 75.4, the runs' spread).
  // Beside an fp32 stream (LayerNorm, call 12, in one process at
  // M = 16384): the training configs themselves, 1024 columns 55.2 / 55.2
  // us against the default's 60.3 / 60.2, 2048 (one CTA a SM) 98.6 / 98.4
  // against 107.5 / 107.1 (two a SM: 104.7 / 104.9). 4096 not measured.
  if (q.residual && half && q.n > 512 && q.n <= 4096 && rows_a_sm_within(q, 48, 128)) {
    const std::int64_t single = next_pow2(q.n);
    const Config row = training_bwd_config(q, single == 2048 ? 2 : 0);
    if ((q.norm == Norm::layer || single != 2048) && takes_residual(row, accept)) return row;
    const Config stream = training_bwd_config(q);
    if (q.norm == Norm::layer && single <= 2048 && takes_residual(stream, accept, Stream::fp32_beside_16bit))
      return stream;
  }
  // 16-bit rows without a residual at the hidden sizes below, over at least
  // 16 rows an SM: the tile of exactly N columns in rows of other than a
  // power of two of threads (add_segmented_tiles), where next_pow2(N)
  // masked up to 44% of each warp's accesses and every warp issued them
  // (bench/results/s43, call 7). Every config in one process on an H200 at
  // x = 512 MiB (bench/results/s44, call 2), % of copy against the default
  // before, LayerNorm bf16: N = 1152 87.1 against 80.7 (RMSNorm 92.6 / 83.4,
  // fp16 87.8 / 80.8), 1280 92.2 / 85.0, 1536 94.4 / 92.2, 2304 85.2 / 80.7
  // (RMSNorm 92.0 / 83.3), 2560 91.2 / 84.9 (RMSNorm 93.4 / 86.7), 3072
  // 93.8 / 92.5; (call 3) 1408 89.7 / 88.4, 2816 91.1 / 88.9, 3584 100.4 /
  // 97.7 (1664, 1792, 1920, 3328 and 3840 level: not in the table). As the
  // defaults (A/B, call 3, round 1 / round 2): 1152 81.2 / 81.0 -> 87.3 /
  // 87.3, 1280 85.1 / 85.1 -> 92.4 / 92.4, 1536 92.4 / 92.2 -> 94.6 / 94.2,
  // 2304 81.1 / 80.9 -> 85.4 / 85.5, 2560 85.4 / 84.9 -> 91.4 / 91.4, 3072
  // 92.7 / 92.6 -> 93.5 / 93.4; RMSNorm 1152 84.1 / 83.6 -> 93.3 / 92.8,
  // 2304 83.9 / 83.6 -> 92.5 / 92.0, 2560 87.7 / 87.4 -> 94.1 / 93.7; fp16
  // 1152 80.3 / 80.6 -> 87.9 / 87.6, 2304 78.3 / 78.8 -> 85.3 / 85.3, 2560
  // 83.1 / 83.5 -> 90.2 / 89.8. The grid: the group count measured best
  // (8 CTAs an SM where three fit). Over 16-48 rows an SM (the training
  // sizes' rule below) their own entries where measured (M = 4096, L2
  // flushed, dx and dW/dB, A/B: 1152 34.0 / 33.7 -> 38.1 / 38.2, 2304 50.3
  // / 49.4 -> 55.0 / 55.9, 2560 54.8 / 55.4 -> 60.4 / 60.3; call 7: RMSNorm
  // 1152 34.9 / 36.2 -> 41.6 / 41.4, 2304 57.3 / 57.3 -> 60.7 / 60.1, fp16
  // 2304 49.8 / 48.0 -> 54.7 / 54.7; every config, call 7: 1280 41.5
  // against 37.1, 1408 43.6 / 40.0, 1536 46.7 / 43.6, 2816 62.2 / 59.9,
  // 3072 63.9 / 62.3, 3584 69.8 / 66.9).
  if (half && !q.residual && q.m >= 16 * static_cast<std::int64_t>(q.sm_count)) {
    struct Rows {
      std::int64_t n;
      int warps, rows, per_sm;           // many rows
      int train_warps, train_rows;       // 16-48 rows an SM
      int train_per_sm = 1;              // CTAs an SM there
    };
    // 1280 at 16-48 rows an SM since session 59: 5 warps of 2 rows, two
    // CTAs a SM, where 10 warps of 4 rows in one (session 58's cold tune at
    // M = 4096: LayerNorm 1.06-1.07x, RMSNorm 1.05x). A/B, dx and dW/dB, %
    // of copy, round 1 / round 2 (bench/results/s59, call 5): M = 4096 bf16
    // 43.4 / 43.2 -> 46.0 / 46.2, fp16 42.8 / 42.6 -> 45.4 / 45.5, RMSNorm
    // 46.2 / 46.4 -> 48.2 / 48.1; M = 2200 27.7 / 27.1 -> 30.1 / 30.0; M =
    // 6000 52.4 / 52.9 -> 55.9 / 56.1.
    static constexpr Rows kSegmented[] = {
        {1152, 9, 2, 8, 9, 4},  {1280, 5, 2, 8, 5, 2, 2}, {1408, 11, 2, 2, 11, 2}, {1536, 6, 1, 4, 6, 2},
        {2304, 9, 1, 8, 18, 2}, {2560, 5, 1, 8, 10, 2},   {2816, 22, 2, 1, 11, 2}, {3072, 12, 1, 2, 12, 2},
        {3584, 14, 2, 1, 14, 2},
    };
    const bool train = training_rows(q);
    // 4097-8191 columns, a multiple of 512: rows of N / 16 threads (16
    // elements a thread, whole warps), one a CTA, a CTA an SM (4608 84.2
    // against 81.0, 5120 87.4 / 84.9, 5632 89.1 / 87.2, 6144 90.5 / 89.3,
    // 6656 92.6 / 91.7, 7168 95.1 / 94.4; M = 4096: 4608 66.2 / 61.5, 5120
    // 69.8 / 65.3; calls 2-3).
    if (q.n > 4096 && q.n < 8192 && q.n % 512 == 0) {
      Config c{static_cast<int>(q.n), static_cast<int>(q.n / 512), 1, 0};
      c.group_size_m = clip_groups(q, 1, q.sm_count);
      if (valid(c)) return c;
    }
    for (const Rows& r : kSegmented) {
      if (r.n != q.n) continue;
      Config c = train ? Config{static_cast<int>(r.n), r.train_warps, r.train_rows, 0}
                       : Config{static_cast<int>(r.n), r.warps, r.rows, 0};
      c.group_size_m = clip_groups(q, c.rows_per_cta, (train ? r.train_per_sm : r.per_sm) * static_cast<std::int64_t>(q.sm_count));
      if (valid(c)) return c;
    }
  }
  // The fused backward (16 bits, the residual in x's dtype) at hidden sizes,
  // over more than 48 rows an SM: the tile of exactly N columns in rows of
  // other than a power of two of threads, its z, dy and dz staged (bwd_dx.cuh,
  // staged_bwd), one CTA an SM. Every config in one process on an H200 at
  // x = 512 MiB, LayerNorm + add bf16 (bench/results/s45, call 3), % of copy
  // against the default before (fused_row_bwd_default): N = 2304 99.2
  // against 95.5, 2560 100.9 / 98.0, 4608 96.6 / 93.0 (1152 level, 96.3 /
  // 96.0: not in the table); (call 4) 3072 103.5 / 100.4, 5120 99.7 / 97.2
  // (1280, 1536 and 6144 level). As the defaults (A/B, call 4, round 1 /
  // round 2): 2304 96.2 / 96.2 -> 99.5 / 99.5, 2560 98.7 / 99.0 -> 101.0 /
  // 101.2, 4608 93.6 / 93.9 -> 96.7 / 96.8; RMSNorm + add 2304 97.1 / 96.9
  // -> 100.0 / 100.2, 2560 99.6 / 99.7 -> 100.7 / 100.8, 4608 88.0 / 88.3
  // -> 95.2 / 95.1; fp16 2304 94.6 / 94.6 -> 99.7 / 99.3, 4608 92.9 / 92.8
  // -> 96.6 / 96.0.
  if (half && q.residual && q.m > 48 * static_cast<std::int64_t>(q.sm_count))
    if (const std::optional<Config> c = fused_segmented_config(q, accept, false)) return c;
  // Training sizes: 16-bit LayerNorm rows of 513-4096 columns over 16-48
  // rows a SM (M = 2112-6336 on 132 SMs): one CTA a SM, whose row slots step
  // apart (bwd_dx.cuh, bwd_slot_barriers), and where the CTA is under 512
  // threads dW/dB finished in the kernel by warps (rt::finish_fits,
  // finish_by_warps). Every config at bf16 M = 4096 (bench/results/s37, call
  // 5; L2 flushed, dx and dW/dB together), the space's best against the
  // default before (2 CTAs a SM, bwd_dwdb after): N = 1024, 8 warps, 4 rows
  // 16.0 us against 16.7 (37.2 / 35.6% of copy); 2048, 8 warps, 2 rows 22.4
  // against 23.9 (53.2 / 49.7); 4096, 16 warps, 2 rows 33.8 against 35.1
  // (70.5 / 67.9). Since session 49 (the finish by warps takes up to 512
  // partial rows in one round, two CTAs a SM), rows of 513-1024 columns in
  // two CTAs a SM of 4 warps, 2 rows: bf16 N = 1024 14.6 / 14.8 us against
  // 15.1 / 15.3 for 8 warps and 4 rows in one (fp16 14.6 / 14.7 against
  // 15.1 / 15.3; every config of interest in one process, two rounds;
  // bench/results/s49, call 2). Rows of 257-512 columns since session 50,
  // in two CTAs a SM of 4 warps, 2 rows (the fused form's best at 512),
  // where the rules below gave 512 CTAs of 2 warps, 2 rows: A/B, % of copy
  // (bench/results/s50, call 1), M = 4096: bf16 320 14.5 / 13.8 -> 15.5 /
  // 15.5, 384 16.2 / 16.4 -> 17.8 / 17.6, 512 21.1 / 21.3 -> 23.8 / 23.7,
  // fp16 512 22.1 / 22.1 -> 23.5 / 23.5; bf16 512 at M = 6336 28.9 / 30.0 ->
  // 31.6 / 31.4, at M = 2112 15.2 / 15.3 -> 15.0 / 14.8 (10.0 -> 10.2 us).
  if (plain_layer && half && q.n > 256 && q.n <= 4096 && training_rows(q)) {
    const Config c = training_bwd_config(q);
    if (valid(c)) return c;
  }
  // fp32 rows of 257-2048 columns without a residual (LayerNorm or
  // RMSNorm), over more than 16 rows a SM: the same configs, where the
  // rules below gave rows of up to 1024 columns one row a CTA of 4 warps,
  // 4 CTAs a SM (512 partial rows for bwd_dwdb) and 2048 one row a CTA of
  // 8 warps, 2 a SM. Every config of interest in one process at M = 4096,
  // us, rounds 1 / 2, this config against that default (bench/results/s50,
  // calls 2-3): LayerNorm N = 512 13.9 / 14.2 against 16.4 / 16.4, 768 16.9
  // / 16.8 against 18.9 / 18.5, 1024 19.6 / 19.5 against 21.3 / 21.2 (M =
  // 6336: 25.2 / 25.2 against 27.1 / 27.1), 2048 30.6 / 30.6 against 31.7 /
  // 31.6; RMSNorm 1024 18.9 / 18.8 against 19.8 / 20.1, 2048 30.1 / 30.0
  // against 30.4 / 30.2. Not at 16 rows a SM (M = 2112, N = 1024: 14.8 /
  // 14.6 against the default's 14.4 / 14.3), nor at 4096 columns (16 warps,
  // 2 rows: 54.4 / 54.4 against the default's 53.7 / 53.9). As the default
  // (A/B, % of copy, two rounds, call 4), M = 4096: LayerNorm 384 30.9 /
  // 30.3 -> 34.7 / 33.9, 512 37.0 / 36.3 -> 41.3 / 40.6, 768 47.6 / 46.9 ->
  // 53.1 / 52.2, 1000 56.0 / 54.5 -> 60.6 / 59.4, 1024 56.1 / 56.0 -> 61.3 /
  // 60.6, 2048 74.3 / 74.9 -> 77.3 / 77.1; RMSNorm 512 42.6 / 42.0 -> 44.1 /
  // 44.2, 1024 60.0 / 59.3 -> 62.2 / 62.6, 2048 78.8 / 78.6 -> 80.2 / 79.7;
  // LayerNorm 1024 at M = 3000 47.9 / 46.8 -> 52.6 / 52.4, 6336 69.0 / 69.2
  // -> 73.2 / 73.9.
  if ((plain_layer || plain_rms) && esize == 4 && q.n > 256 && q.n <= 2048 && rows_a_sm_within(q, 16, 48)) {
    const Config c = training_bwd_config(q);
    if (valid(c)) return c;
  }
  // 16-bit RMSNorm of 4096 columns at 16-48 rows an SM: 16 warps of 2 rows,
  // one CTA a SM, where 8 warps of 1, two (since session 60; session 58's
  // tune at M = 4096: 1.06x, bf16 16 warps, fp16 32; session 60's A/B, % of
  // copy, M = 4096 bf16 72.6 -> 76.1, fp16 73.2 -> 76.4, M = 6000 bf16 81.4
  // -> 84.3).
  if (half && plain_rms && q.n == 4096 && training_rows(q)) {
    Config c{4096, 16, 2, 0};
    c.group_size_m = q.sm_count;
    if (valid(c)) return c;
  }
  // 16-bit RMSNorm of 3073-3583 columns at 16-48 rows an SM on the
  // 4096-column tile in 16 warps, two CTAs a SM, where 8 warps (since
  // session 60; its cold tune at M = 4096: 3200 1.05x, bf16 and fp16; A/B,
  // dx and dW/dB, % of copy, two rounds averaged, call 4: M = 4096 bf16
  // 3200 68.4 -> 70.7, 3328 68.1 -> 72.1, fp16 3200 68.8 -> 71.1; M = 6000
  // 3200 75.6 -> 78.1).
  if (half && plain_rms && q.n > 3072 && q.n < 3584 && training_rows(q)) {
    Config c{4096, 16, 1, 0};
    c.group_size_m = clip_groups(q, 1, 2 * q.sm_count);
    if (valid(c)) return c;
  }
  // 16-bit add + RMSNorm of 8193-9216 columns at 16-48 rows an SM at 2
  // stages: 9216 over the odd split (two 4608-column halves of 9 warps),
  // else the even split (two 6144-column slabs of 8), where two 8192-column
  // slabs (since session 60; session 58's tune at M = 4096: 8704 1.09x,
  // 9216 1.06x; session 60's A/B, % of copy, M = 4096 8704 78.7 -> 85.7,
  // 9216 83.1 -> 87.5, M = 2200 8704 67.3 -> 74.0). Both splits exist for
  // such rows.
  if (half && q.residual && q.norm == Norm::rms && q.n > 8192 && q.n <= 9216 && training_rows(q)) {
    const std::optional<WideSplit> split = q.n == 9216 ? wide_bwd_odd_split(q.n, esize) : wide_bwd_even_split(q.n, esize);
    Config c{static_cast<int>(split->slab), split->min_warps, 2, 0, split->cluster};
    c.group_size_m = clip_groups(q, 1, q.sm_count);
    if (takes_residual(c, accept)) return c;
  }
  // fp32 rows of 2305-3584 columns at training rows (since session 59): 8
  // columns a thread, 2 rows, one CTA a SM, on the row's own tile where it
  // is a multiple of 256 columns up to 3072 (2560: 10 warps), else 4096 in
  // 16 warps (session 58's cold tune at M = 4096, LayerNorm: 2560 1.17x,
  // 3072 1.10x, 3200 1.09x, 3584 1.05x over the default's 8 warps, 1 row).
  // As the default (A/B, dx and dW/dB, % of copy, round 1 / round 2;
  // bench/results/s59, call 2): M = 4096 LayerNorm 2560 71.1 / 70.2 -> 83.9
  // / 83.9, 2816 74.5 / 74.2 -> 84.9 / 83.8, 3072 77.1 / 76.7 -> 85.0 /
  // 86.1, 3200 78.8 / 78.7 -> 85.0 / 84.6, 3584 83.7 / 82.1 -> 87.0 / 87.2,
  // RMSNorm 2560 74.6 / 75.3 -> 85.7 / 86.5, 3072 80.5 / 79.9 -> 85.2 /
  // 86.4; M = 2200 2560 61.0 / 60.5 -> 69.3 / 69.2, 3584 level (72.7 / 72.2
  // -> 72.1 / 73.6); M = 6000 3072 80.6 / 80.6 -> 91.5 / 90.5.
  if ((plain_layer || plain_rms) && esize == 4 && q.n > 2304 && q.n <= 3584 && rows_a_sm_within(q, 16, 48)) {
    const int tile = q.n % 256 == 0 && q.n <= 3072 ? static_cast<int>(q.n) : 4096;
    Config c{tile, tile / 256, 2, 0};
    c.group_size_m = q.sm_count;
    if (valid(c)) return c;
  }
  // Past 48 rows a SM (M = 8192-65536 measured, session 50, call 6; every
  // config of interest in one process a shape, us against the default of
  // the rules below, at 62 / 124 / 248 / 496 rows a SM):
  // - fp32 rows of up to 1024 columns, to 64 rows a SM: the training
  //   config (LayerNorm 1024: 30.4 against 32.2 at 62; 54.2 / 54.6 at 124,
  //   101.5 / 100.8 at 248);
  // - 16-bit LayerNorm of 2049-4096 columns, to 256 rows a SM: one CTA a SM
  //   of 16 warps, 2 rows (4096: 56.5 / 58.4, 102.3 / 105.1, 193.7 / 196.8;
  //   at 496 rows 376.7 / 380.3, not taken);
  // - 16-bit LayerNorm of 1025-2048 columns, to 128 rows a SM: two CTAs a
  //   SM of 8 warps, 2 rows (2048: 34.2 / 36.3, 56.2 / 58.2; at 248 rows
  //   103.9 / 104.0);
  // - 16-bit LayerNorm and RMSNorm of 513-1024 columns, 65-256 rows a SM:
  //   four CTAs a SM of 4 warps, 2 rows, 528 partial rows for bwd_dwdb
  //   (LayerNorm 1024: 33.5 / 34.9 at 124, 56.5 / 58.1 at 248; 768: 28.2 /
  //   29.2, 47.2 / 47.8; RMSNorm 1024: 30.9 / 32.2, 52.9 / 54.8); to 64
  //   rows a SM the training config, two CTAs a SM (at 62 rows: LayerNorm
  //   1024 21.0 against 22.7 for four; the default there, the same config,
  //   20.7).
  // As defaults (A/B, % of copy, rounds 1 / 2, call 7): bf16 M = 8192 2048
  // 64.8 / 64.8 -> 69.7 / 69.6, 4096 80.9 / 81.3 -> 85.4 / 85.3; M = 12288
  // 1024 59.9 / 60.4 -> 63.1 / 63.8, 2048 75.9 / 76.5 -> 79.3 / 79.1;
  // M = 16384 1024 67.3 / 67.8 -> 70.7 / 70.3, 1000 63.0 / 64.4 -> 67.6 /
  // 67.0, 768 60.8 / 61.0 -> 64.5 / 62.3, 2048 81.8 / 82.2 -> 84.5 / 83.3,
  // 4096 90.8 / 91.0 -> 93.9 / 92.7, fp16 1024 67.7 / 67.2 -> 72.6 / 70.1,
  // RMSNorm bf16 1024 74.0 / 74.1 -> 76.5 / 78.5; M = 32768 1024 81.6 /
  // 83.0 -> 85.8 / 84.2, 4096 96.7 / 97.2 -> 97.9 / 98.1; fp32 M = 8448 512
  // 57.0 / 57.2 -> 60.4 / 60.6, 1024 75.6 / 75.3 -> 77.9 / 77.9; M = 8192
  // bf16 1024, M = 65536 and x = 512 MiB level.
  if (!q.residual && rows_a_sm_within(q, 48, 256)) {
    const std::int64_t single = next_pow2(q.n);
    std::optional<Config> c;
    if (esize == 4) {
      if (q.n > 256 && q.n <= 1024 && rows_a_sm_within(q, 48, 64)) c = training_bwd_config(q);
    } else if (half && q.n > 512 && single == 1024) {
      c = training_bwd_config(q, rows_a_sm_within(q, 48, 64) ? 0 : 4);
    } else if (half && single == 2048) {
      if (rows_a_sm_within(q, 48, 128)) c = training_bwd_config(q, 2);
    } else if (half && single == 4096) {
      // (RMSNorm to 128 rows a SM, as 2048: call 12, in one process at
      // M = 16384, 2048 53.5 / 53.7 us against the default's 54.9 / 55.4,
      // 4096 98.8 / 98.9 against 101.3 / 100.9.)
      if (plain_layer || rows_a_sm_within(q, 48, 128)) c = training_bwd_config(q);
    }
    if (c && valid(*c)) return c;
  }
  // fp32 rows of 1025-4095 columns that are not a power of two, without a
  // residual, over many rows: two CTAs a SM of 16 columns a thread (1025-
  // 2047: two rows a CTA of 256 threads; 2049-4095: one of 256), where the
  // rules above take 4 columns a thread in 512 threads (fp32_short_rows) or
  // one CTA a SM. Every config in one process on an H200 at x = 512 MiB,
  // LayerNorm (bench/results/s42, call 6): N = 1152 100.0% of copy against
  // 79.3, 2304 100.4 against 81.2. As the default (A/B, call 7, round 1 /
  // round 2): 1152 79.5 / 79.1 -> 99.1 / 100.0, 1408 88.8 / 88.3 -> 97.7 /
  // 98.4, 1664 96.5 / 95.9 -> 96.5 / 97.0, 2304 81.3 / 81.3 -> 100.9 /
  // 101.3, 2816 87.8 / 87.6 -> 96.8 / 97.6, 3328 90.8 / 91.5 -> 96.4 /
  // 96.5, RMSNorm 2304 82.7 / 82.2 -> 100.8 / 101.3; but 1920 99.3 / 99.4
  // -> 96.6 / 97.2 and 3840 97.3 / 97.0 -> 96.0 / 96.7: rows less than 7/8
  // of the power of two above them only.
  if (esize == 4 && !q.residual && q.m > 8192 && q.n > 1024 && q.n < 4096 && 8 * q.n < 7 * next_pow2(q.n)) {
    Config c = q.n < 2048 ? Config{2048, 8, 2, 0} : Config{4096, 8, 1, 0};
    c.group_size_m = persistent_groups(q, c.rows_per_cta, 2 * static_cast<std::int64_t>(q.sm_count));
    if (valid(c)) return c;
  }
  // fp32 rows of 24577-32768 columns without a residual: four 8192-column
  // slabs, 8 warps, 3 stages (the gap clusters' config below, at a power of
  // two), where wide_bwd_default took eight 4096-column slabs in 4 warps (32
  // columns a thread): N = 30720 95.6% of copy against 69.7 (every config
  // in one process on an H200 at x = 512 MiB, bench/results/s42, call 6;
  // the best, 96.2, eight slabs in 8 warps at 2 stages). As the default
  // (A/B, call 7): 30720 69.8 / 69.4 -> 94.2 / 95.4, 32768 74.3 / 74.0 ->
  // 93.3 / 93.5, 26000 level (90.9 / 90.6 -> 90.2 / 91.1), RMSNorm 30720
  // 71.3 / 71.0 -> 94.9 / 95.3.
  if (esize == 4 && !q.residual && q.n > 24576 && q.n <= 32768) {
    Config c{8192, 8, 3, 0, 4};
    c.group_size_m = coresident_clusters(q, 4);
    if (wide_bwd_fits(q, c, false, accept)) return c;
  }
  // Rows just above 8192 columns without a residual, where the rules below
  // leave a second slab mostly empty (8192 + 1024 columns at N = 9216: bf16
  // 69.4% of copy, fp32 74.2; bench/results/s42, call 6): fp32 rows of
  // 8193-11264 columns over three equal slabs (a multiple of 512 columns)
  // in 4 warps, 3 stages (9216: 3 of 3072, 94.6 against 74.2; 8 warps
  // 91.0); 16-bit rows of 8193-12288 columns over two slabs of 6144 in 8
  // warps, 3 stages (9216: 80.2 against 69.4). Configs timed outside the
  // space (LNTUNE_SWEEP_CONFIG), call 6. As the default (A/B, call 11,
  // round 1 / round 2): LayerNorm bf16 9216 69.7 / 70.0 -> 80.5 / 80.9,
  // 10240 76.3 / 76.7 -> 87.7 / 88.1, 11264 82.8 / 82.9 -> 91.8 / 91.8,
  // 12288 level (88.4 / 88.7 -> 88.5 / 88.6), fp16 10240 79.4 / 79.4 ->
  // 90.8 / 90.8, fp32 9216 74.4 / 74.4 -> 96.9 / 97.1, 10240 82.0 / 82.0
  // -> 94.1 / 94.1, 11264 89.0 / 89.2 -> 92.1 / 92.3; RMSNorm bf16 9216
  // 68.6 / 68.6 -> 82.4 / 82.3, fp32 75.1 / 75.0 -> 96.9 / 97.6; at M =
  // 4096 (dx and dW/dB, L2 flushed) bf16 9216 52.6 / 52.7 -> 59.0 / 59.0,
  // 12288 65.3 / 65.1 -> 66.8 / 67.1, fp32 9216 68.1 / 68.3 -> 90.4 /
  // 90.5, 10240 75.1 / 75.5 -> 88.5 / 88.1; at M = 8 bf16 9216 16.2 ->
  // 15.2 us, fp32 12.6 -> 10.9 us.
  // 16-bit rows of 9216 columns without a residual: two slabs of 4608 in 9
  // warps (wide_bwd_odd_split), 4 stages, two CTAs a SM. Its configs alone,
  // each in its own process, twice (bench/results/s46, call 7): LayerNorm
  // bf16 90.1 / 90.2% of copy, against 80.9 for the default (call 6's
  // sweep); at 3 stages 82.5 / 82.6 (three CTAs a SM), in 18 warps 68.7.
  // (The even split's rule below, with that split at 4 stages first.)
  // 16-bit rows of 10240 and 11264 columns at training rows, since session
  // 59: the odd split too (two exact halves, 5120 columns in 10 warps, 5632
  // in 11), at 2 stages, where the even split took two 6144-column slabs at
  // 3 (session
  // 58's cold tune at M = 4096: 10240 LayerNorm 1.10-1.11x, RMSNorm 1.05x;
  // 11264 RMSNorm 1.02x). A/B, dx and dW/dB, % of copy, round 1 / round 2
  // (bench/results/s59, call 5): M = 4096 LayerNorm bf16 10240 73.5 / 73.4
  // -> 80.3 / 80.5, 11264 80.1 / 80.3 -> 82.5 / 82.0, fp16 10240 73.5 /
  // 73.7 -> 80.6 / 80.5, RMSNorm bf16 10240 81.4 / 80.9 -> 84.0 / 84.1,
  // 11264 84.6 / 84.8 -> 86.1 / 86.2; M = 2200 10240 60.7 / 61.1 -> 67.2 /
  // 66.8; M = 6000 79.0 / 79.6 -> 86.8 / 87.1.
  if (!q.residual) {
    const bool train_odd = (q.n == 10240 || q.n == 11264) && training_rows(q);
    const std::optional<WideSplit> odd = q.n == 9216 || train_odd ? wide_bwd_odd_split(q.n, esize) : std::nullopt;
    // 16-bit rows of 8193-10239 columns (not 9216) at training rows over
    // the even split at 2 stages, not 3 (since session 60; its cold tune at
    // M = 4096: 8704 and 9728 1.05-1.06x, bf16 at 2 stages, fp16 at 4; A/B,
    // dx and dW/dB, % of copy, two rounds averaged, call 4: M = 4096
    // LayerNorm bf16 8704 63.4 -> 67.0, 9728 70.0 -> 73.6, fp16 8704 64.1
    // -> 66.9, 9728 70.7 -> 74.0, RMSNorm bf16 8704 70.4 -> 72.6; M = 2200
    // 8704 52.9 -> 55.8. fp16 8704 at 4 stages in the same process 67.9,
    // at 2 66.4-67.1: not taken for one shape).
    const bool train_even = esize == 2 && q.n > 8192 && q.n < 10240 && training_rows(q);
    for (const auto& [split, stages] :
         {std::pair{odd, train_odd ? 2 : 4}, std::pair{wide_bwd_even_split(q.n, esize), train_even ? 2 : 3}}) {
      if (!split) continue;
      Config c{static_cast<int>(split->slab), split->min_warps, stages, 0, split->cluster};
      const int fit = std::max(1, q.sm_count / split->cluster);
      c.group_size_m = clip_groups(q, 1, wide_bwd_two_per_sm(q, c) ? 2 * fit : fit);
      if (wide_bwd_fits(q, c, false, accept)) return c;
    }
  }
  // fp32 rows of 4097-8191 columns without a residual over many rows: the
  // register kernel's whole row in 16 warps, a CTA per SM, where
  // wide_bwd_default's split in two leaves the second 4096-column slab part
  // empty. Every config in one process on an H200 at x = 512 MiB, LayerNorm
  // (bench/results/s42, calls 2-3): N = 5120 92.9% of copy against 66.5 for
  // the split, 6144 97.8 against 79.0, 6656 98.9 against 85.3, 7168 99.0
  // against 91.5, 7680 98.9 against 97.2; as the default (A/B, call 3):
  // LayerNorm 5120 66.9 / 66.4 -> 92.7 / 92.6, 6144 79.8 / 79.2 -> 98.2 /
  // 98.0, RMSNorm 5120 67.8 / 67.4 -> 97.8 / 97.9; call 4: LayerNorm 6656
  // 85.1 / 84.9 -> 98.3 / 98.4, 7168 91.1 / 90.9 -> 98.5 / 98.7, RMSNorm
  // 7168 92.6 / 92.5 -> 99.5 / 99.1. (8192 columns keep the
  // split: H100 99.1 against 90.3 for this config.)
  // Up to 6144 columns, since session 43, a tile of 6144 (12 elements a
  // thread, no access masked at 6144): N = 4608 100.9% of copy against
  // 88.8 for 8192 columns (every config in one process, bench/results/s43,
  // call 3).
  if (esize == 4 && !q.residual && q.m > 8192 && q.n > 4096 && q.n < 8192) {
    Config c{q.n <= 6144 ? 6144 : 8192, 16, 1, 0};
    c.group_size_m = persistent_groups(q, 1, q.sm_count);
    if (valid(c)) return c;
  }
  // The fused 16-bit backward (the residual in x's dtype) of 32768, 65536
  // and 131072 columns, dz staged beside x and dy (gen::wide_stages_dz,
  // bwd_dx_wide.cuh's STAGE_DZ; before, pass B read dz from L2, prefetched,
  // into registers it shared with the dW/dB accumulators): 32768 in four
  // 8192-column slabs, 65536 in eight, 16 warps, 4 stages (208 KB), the
  // clusters that run at once; 131072 in eight 16384-column slabs, 16 warps,
  // 2 stages (224 KB), one cluster fewer than run at once. Every config in
  // one process on an H200 at x = 512 MiB with dz staged, % of copy against
  // the default before (bench/results/s46, calls 2-3): add + LayerNorm bf16
  // 32768 95.0 against 91.3 (clusters of 4, 8 warps, 2 stages), 65536 94.2
  // against 79.9 (16384-column slabs in clusters of 4, 32 warps, 3 stages,
  // dz through L2), fp16 65536 94.6 against 80.2, add + RMSNorm bf16 65536
  // 97.5 against 82.3, add + LayerNorm bf16 131072 95.8 against 72.1 (the
  // same with all 15 clusters of 8: 89.7). As the defaults (A/B, call 4,
  // round 1 / round 2): add + LayerNorm bf16 32768 79.9 / 79.5 -> 94.2 /
  // 94.6, 65536 80.4 / 80.5 -> 92.8 / 92.6, fp16 81.1 / 80.4 -> 94.8 /
  // 95.4, 131072 62.9 / 63.0 -> 89.1 / 89.3; add + RMSNorm bf16 65536 81.6 /
  // 81.7 -> 97.8 / 97.5, 131072 68.5 / 69.2 -> 91.1 / 91.4; M = 1024
  // add + LayerNorm 65536 67.6 / 68.0 -> 80.4 / 79.8. Since call 5 also
  // 262144 columns, sixteen 16384-column slabs at 2 stages in the 7
  // clusters of 16 that run at once (every config, call 4: add + LayerNorm
  // bf16 88.6 against 76.5, add + RMSNorm 91.1 against 78.6); and RMSNorm +
  // add of 16384 columns in two 8192-column slabs, 8 warps, 3 stages (99.7
  // against 94.6 for the rule of two CTAs a SM below; add + LayerNorm's 16
  // warps at 4 stages stay, 97.6 against 98.6 in call 2's sweep).
  //
  // Beside an fp32 residual stream (z and dz fp32: 12 bytes a column staged
  // against the 16-bit stream's 6), since session 47: 8192-column slabs in
  // 8 warps at 2 stages, dz staged (176 KB, one CTA a SM), as many CTAs as
  // the row has slabs, the clusters that run at once (one fewer for
  // clusters of 8); 262144 columns in sixteen 16384-column slabs at 2 stages
  // (x and dy staged, dz through L2) in 16 warps. Before, these rows took
  // the rules below, measured with the residual in x's dtype (16384-column
  // slabs in 32 warps at 32768 and 262144, which spill 36 bytes). Every
  // config in one process on an H200 at x = 512 MiB, bf16 x and dy, fp32 z
  // and dz (`LNTUNE_SWEEP_RESIDUAL=fp32`; bench/results/s47, calls 1-2), %
  // of copy against the default before: add + LayerNorm 16384 97.4 against
  // 93.3, 32768 95.8 against 75.1, 65536 101.4 against 74.0 (94.9 with all
  // 15 clusters of 8), 131072 96.4 against 80.1, 262144 80.4 against 69.8
  // (32 warps: 70.0); add + RMSNorm 32768 96.0 against 77.7, 262144 79.9
  // against 74.6. As the defaults, with the wide backward's whole stores
  // (common.cuh's store_global) in the same build (A/B against the build
  // before both, call 3, round 1 / round 2): add + LayerNorm 16384 93.4 /
  // 93.4 -> 97.6 / 98.3, 32768 74.0 / 73.9 -> 96.4 / 95.6, 65536 73.4 /
  // 73.7 -> 102.1 / 102.1, 131072 80.2 / 80.4 -> 97.9 / 97.9, 262144 69.2 /
  // 69.4 -> 84.5 / 84.3; add + RMSNorm 65536 75.3 / 75.0 -> 102.5 / 102.5,
  // 262144 74.2 / 74.6 -> 85.4 / 85.2.
  if (half && q.residual) {
    struct WideFused {
      std::int64_t n;
      Stream stream;
      bool rms_only;
      int slab, warps, stages, cluster;
      bool spare;      // one cluster fewer than run at once
      bool dz_staged;  // the instance stages dz (gen::wide_stages_dz)
    };
    constexpr Stream kRow = Stream::row_dtype, kFp32 = Stream::fp32_beside_16bit;
    // For each N, the row-dtype row first: a call with an fp32 stream fails
    // its test and takes the next.
    static constexpr WideFused kWideFused[] = {
        //  n      stream rms    slab  warps stages cluster spare  dz staged
        {16384, kRow, true, 8192, 8, 3, 2, false, true},
        {32768, kRow, false, 8192, 16, 4, 4, false, true},
        {65536, kRow, false, 8192, 16, 4, 8, false, true},
        {131072, kRow, false, 16384, 16, 2, 8, true, true},
        {262144, kRow, false, 16384, 16, 2, 16, false, true},
        {16384, kFp32, false, 8192, 8, 2, 2, false, true},
        {32768, kFp32, false, 8192, 8, 2, 4, false, true},
        {65536, kFp32, false, 8192, 8, 2, 8, true, true},
        {131072, kFp32, false, 8192, 8, 2, 16, false, true},
        {262144, kFp32, false, 16384, 16, 2, 16, false, false}};
    for (const WideFused& r : kWideFused) {
      if (r.n != q.n || (r.rms_only && q.norm != Norm::rms)) continue;
      Config c{r.slab, r.warps, r.stages, 0, r.cluster};
      const int groups = coresident_clusters(q, r.cluster);
      c.group_size_m = r.spare ? clip_groups(q, 1, groups - 1) : groups;
      if (takes_residual(c, accept, r.stream, r.dz_staged ? wide_stages_dz : nullptr)) return c;
    }
  }
  // 16-bit rows of two to sixteen 8192-column slabs (8193-131072 columns,
  // every CTA of the cluster owning some; 16 since session 40, without a
  // residual: RMSNorm bf16 N = 131072 83.1% of copy against 65.2 for the
  // rules below, bench/results/s40, call 2): the wide backward in 8192-column slabs,
  // 8 warps, two CTAs a SM (the launcher fits the grid to the clusters that
  // run at once: an H200 runs 30 clusters of 8 at two CTAs a SM, 15 at one),
  // 3 stages, 2 with a residual (at 3 its registers keep one CTA a SM).
  // Every wide config on an H200 at x = 512 MiB, bf16, the rule's config
  // against the default before (bench/results/s38, call 2): LayerNorm
  // N = 16384 86.0 against 85.0% of copy, 32768 85.7 against 75.7, 65536
  // 85.6 against 73.5; RMSNorm 16384 89.3 against 88.8, 65536 88.5 against
  // 79.9; add + RMSNorm 16384 86.6 against 83.4, 65536 82.2 against 80.5;
  // add + LayerNorm 65536 79.7 against 78.9 (16384: 81.5 against 82.6). As
  // defaults, A/B, two rounds (call 3), the rule against the default before:
  // LayerNorm bf16 12288 65.6 / 65.4 -> 83.3 / 82.7, 16384 85.1 / 85.0 ->
  // 86.1 / 85.9, 32768 76.8 / 76.6 -> 87.1 / 86.9, 65536 73.7 / 73.6 ->
  // 86.2 / 85.6; fp16 16384 86.2 / 87.0 -> 86.6 / 86.0, 65536 75.1 / 75.7
  // -> 86.7 / 86.3; RMSNorm bf16 16384 88.4 / 88.5 -> 89.0 / 88.7, 32768
  // 82.3 / 81.9 -> 89.5 / 89.4, 65536 79.1 / 79.5 -> 88.2 / 88.0; add +
  // LayerNorm bf16 12288 69.3 / 69.8 -> 82.0 / 81.7, 16384 82.1 / 82.7 ->
  // 81.8 / 82.0; add + RMSNorm bf16 16384 83.0 / 83.0 -> 86.8 / 86.1. With a
  // residual, rows of more than 32768 columns keep the rule below (clusters
  // of 4): add + LayerNorm bf16 65536 79.0 / 80.5 against 78.4 / 78.0 this
  // way, add + RMSNorm 80.8 / 82.5 against 82.4 / 82.1.
  // add + LayerNorm of two full slabs (16384 columns) keeps the fused rule
  // below it (16 warps, 4 stages, one CTA a SM): 82.7 / 82.7 against 81.6 /
  // 81.2 this way (call 8; its bias accumulators and the preloaded dz fill
  // the 128 registers two CTAs a SM leave).
  // Where 3 stages do not fit twice with the call's traits (an fp32 weight
  // beside 16-bit rows, as PyTorch's autocast and mixed-precision training
  // keep a LayerNorm's parameters: 3 stages and the weight slab take 128 KB),
  // LayerNorm in clusters of 8 takes 2 stages at two CTAs a SM: bf16
  // N = 65536 79.2% of copy against 76.3 for the one-a-SM rule below; not in
  // clusters of 2 (N = 16384: 81.3 against 87.2; bench/results/s39, call 4).
  const bool add_layer_16k = q.residual && q.norm == Norm::layer && q.n == 16384;
  if (half && q.n > 8192 && q.n <= (q.residual ? 32768 : 131072) && !add_layer_16k) {
    // As many slabs as the row needs, the last partial (since session 40
    // also other than a power of two: 3 at N = 20000, 5 at 40000, 13 at
    // 100000; bench/results/s40, calls 4 and 7); with a residual only a power
    // of two (as measured).
    const int cluster = slab_count(q.n, 8192);
    std::vector<int> stage_counts{q.residual ? 2 : 3};
    if (plain_layer && cluster == 8) stage_counts.push_back(2);
    // With a residual, three slabs too (16385-24576 columns) since session
    // 59, where the rules below took two 16384-column slabs in 32 warps
    // (session 58's cold tune at M = 4096: add + RMSNorm 18432 1.35-1.37x
    // for this config). As the default (A/B, % of copy, round 1 / round 2;
    // bench/results/s59, call 2): M = 4096 add + RMSNorm bf16 18432 63.2 /
    // 63.3 -> 86.1 / 86.1, 20000 67.4 / 67.6 -> 88.0 / 88.1, 24576 79.2 /
    // 79.3 -> 91.8 / 91.4, add + LayerNorm fp16 18432 60.8 / 61.0 -> 83.0 /
    // 83.7; x = 512 MiB add + RMSNorm bf16 18432 67.5 / 67.1 -> 90.4 / 89.9,
    // 24576 81.9 / 81.6 -> 94.3 / 94.3, add + LayerNorm 20000 67.5 / 67.1 ->
    // 88.5 / 87.8.
    // Plain LayerNorm over two full slabs (16384 columns): one cluster per
    // two SMs, not two, one CTA an SM at run time (the kernel still fits
    // two). Its configs alone, in their own processes, alternated
    // (bench/results/s45, call 4): bf16 89.4 / 89.7% of copy with two a SM,
    // 91.6 / 92.3 with one; fp16 89.7 / 89.3 against 91.6 / 92.4. As the
    // default (A/B, call 5): bf16 90.3 / 89.7 -> 91.5 / 91.9, fp16 89.7 /
    // 89.8 -> 92.3 / 91.9, M = 4096 72.2 / 71.8 -> 77.3 / 77.0. Not where
    // the second slab is partly empty (13312: 90.8 / 90.5 -> 78.9 / 79.1,
    // call 5), not RMSNorm (88.9 against 88.0, one process, call 2; level as
    // the default, call 5), nor clusters of 4 (bf16 32768 90.1 against 61).
    const bool one_a_sm = plain_layer && q.n == 2 * 8192;
    // Since session 47 (the wide backward's stores whole, common.cuh's
    // store_global) that one CTA a SM in 16 warps at 4 stages (144 KB):
    // every wide config in one process on an H200 at x = 512 MiB, bf16 94.0%
    // of copy against 92.5 for 8 warps at 3 (93.2 at 4; bench/results/s47,
    // call 4); with the weight in the rows' dtype (as measured), over more
    // than 8192 rows. As the default (A/B, call 5, round 1 / round 2): bf16
    // 93.1 / 92.3 -> 94.1 / 93.8, fp16 93.0 / 93.0 -> 94.7 / 94.1; at
    // M = 4096 82.7 / 82.7 -> 82.3 / 81.8 (there the rule before stays).
    if (one_a_sm && q.m > 8192) {
      Config c{8192, 16, 4, 0, cluster};
      c.group_size_m = clip_groups(q, 1, std::max(1, q.sm_count / cluster));
      if (!accept) return c;
      const std::optional<InstanceKey> key = accept(c);
      if (key && wide_stages_dy(*key) && key->traits.w_dtype == key->traits.x_dtype) return c;  // as measured
    }
    for (const int stages : stage_counts) {
      Config c{8192, 8, stages, 0, cluster};
      c.group_size_m = clip_groups(q, 1, (one_a_sm ? 1 : 2) * std::max(1, q.sm_count / cluster));
      if (!wide_bwd_two_per_sm(q, c)) break;
      if (!accept) return c;
      // With the call's traits, the instance's own shared memory, x and dy
      // staged, and a residual in the row dtype (measured so only: an fp32
      // residual stream keeps the rules below).
      const std::optional<InstanceKey> key = accept(c);
      if (key && wide_stages_dy(*key) && wide_bwd_twice(dynamic_smem_bytes(*key, q.cc), c) &&
          (!q.residual || key->traits.residual == key->traits.x_dtype))
        return c;
    }
  }
  // RMSNorm and the fused add's 16-bit rows of 65536 columns: four full
  // 16384-column slices in clusters of 4 (fitted by the launcher to the 30
  // an H200 runs at once), 3 stages, 16 warps (32 with the residual). Every
  // config against the default (clusters of 8), bf16: RMSNorm 79.2 against
  // 76.3% of copy, add + LayerNorm 79.4 against 76.7 (s36 call 6), add +
  // RMSNorm 81.4 against 77.8 (call 8); A/B (call 7): RMSNorm bf16 / fp16
  // 76.1 / 76.9 -> 79.4 / 80.7, add + LayerNorm bf16 76.7 -> 79.0. Plain
  // LayerNorm measured level (73.3 against 73.9, call 2).
  // (Since session 38, RMSNorm without a residual comes here only where the
  // rule of two CTAs a SM above does not fit, e.g. with an fp32 weight.)
  if (half && q.n == 65536 && (plain_rms || q.residual)) {
    Config c{16384, q.residual ? 32 : 16, 3, 0, 4};
    c.group_size_m = coresident_clusters(q, 4);
    if (wide_bwd_fits(q, c, true, accept)) return c;
  }
  // Rows of 131073-245760 columns without a residual, whose 16384-column
  // slabs are 9 to 15 CTAs (an H200 runs 7 such clusters at once, one a GPC:
  // 70 SMs at 10): the finer slabs of gen::wide_bwd_fine_split (more CTAs,
  // up to 16, slabs of other than a power of two), 16-bit rows in 16 warps
  // at 3 stages, fp32 rows of 12288 columns in 32 warps at 3 (x alone
  // staged), of 10240 or 14336 in 16 at 2. Every wide config in one process
  // on an H200 at x = 512 MiB, LayerNorm, % of copy against the gap cluster
  // of 16384-column slabs (bench/results/s42, calls 1-2): bf16 N = 135000
  // 56.3 against 53.8 (11 of 12288), 140000 57.8 / 56.2 (12), 150000 61.2
  // / 46.9 (13), 160000 64.7 / 52.2 (14), 170000 68.0 / 52.6 (14), 180000
  // 70.8 / 55.6 (15); fp32 140000 84.5 / 58.2 (14 of 10240), 150000 85.7 /
  // 49.1 (15), 160000 87.3 / 53.4 (16), 170000 61.4 / 53.0 (14 of 12288),
  // 180000 66.3 / 58.0 (15), 190000 63.8 / 57.4 (16), 200000 62.5 / 61.9
  // (14 of 14336), 220000 63.5 / 62.2 (16).
  // As the default (A/B, call 3, round 1 / round 2): LayerNorm bf16 150000
  // 47.2 / 47.5 -> 61.7 / 61.2, 180000 56.1 / 56.3 -> 71.6 / 71.2, fp16
  // 150000 47.3 / 47.5 -> 62.6 / 62.5, fp32 150000 49.1 / 48.8 -> 85.4 /
  // 86.1, 170000 53.2 / 52.9 -> 62.1 / 61.7, 200000 62.0 / 61.9 -> 62.8 /
  // 62.8; RMSNorm bf16 150000 48.2 / 48.3 -> 58.3 / 57.8, fp32 150000 47.9
  // / 47.9 -> 87.1 / 87.6.
  if (!q.residual && q.n > 131072) {
    if (const std::optional<WideSplit> fine = wide_bwd_fine_split(q.n, max_vec(q.dtype))) {
      const bool fp32_12k = !half && fine->slab == 12288;
      Config c{static_cast<int>(fine->slab), fp32_12k ? 32 : 16, half || fp32_12k ? 3 : 2, 0, fine->cluster};
      c.group_size_m = coresident_clusters(q, fine->cluster);
      if (wide_bwd_fits(q, c, !half, accept)) return c;
    }
  }
  if ((plain_layer && q.n > 16384 && (half || q.n > 131072)) || (plain_rms && !half && q.n > 131072)) {
    // (Since session 38, 16-bit rows of 8192-column slabs in clusters of 8
    // come here only where the rule of two CTAs a SM above does not fit,
    // e.g. with an fp32 weight.)
    // As many slabs as the row needs, the last partial (since session 40
    // also other than a power of two: 13 at N = 200000); 16-bit rows of
    // 32K-64K columns in exactly eight 8192-column slices.
    const bool slices_8k = half && q.n > 32768 && q.n <= 65536;
    const std::int64_t slab = slices_8k ? 8192 : 16384;
    const int cluster = slab_count(q.n, slab);
    if (cluster > 16 || (slices_8k && cluster != 8)) return std::nullopt;
    const int stages = slices_8k ? 4 : cluster > 8 && half ? 3 : 2;
    // fp32 rows of sixteen 16384-column slabs (x alone staged): 32 warps
    // since session 47 (the wide backward's stores whole, common.cuh's
    // store_global; 16 before, above): every config in one process on an
    // H200 at x = 512 MiB, N = 262144, LayerNorm 77.6% of copy against 73.2
    // with 16, RMSNorm 79.2 against 75.1 (bench/results/s47, call 4); as the
    // default (A/B, call 5, two rounds): LayerNorm 73.4 / 73.4 -> 77.3 /
    // 77.9, RMSNorm 74.1 / 74.3 -> 79.4 / 79.4.
    const bool fp32_x_only_32 = !half && slab == 16384 && cluster == 16;
    Config c{static_cast<int>(slab), slices_8k ? 8 : fp32_x_only_32 ? 32 : 16, stages, 0, cluster};
    c.group_size_m = coresident_clusters(q, cluster);
    if (wide_bwd_fits(q, c, !half, accept)) return c;
    return std::nullopt;
  }
  return std::nullopt;
}
}  // namespace

std::int64_t max_dwdb_splits(std::int64_t n) {
  return std::clamp<std::int64_t>((std::int64_t{1} << 20) / std::max<std::int64_t>(n, 1), 1, 32);
}

std::int64_t next_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// The whole row in one tile of exactly N columns (N a multiple of the
// 16-byte access, not a power of two), in rows of other than a power of two
// of threads (gen::has_segmented_rows): k accesses a thread (at most
// max_items elements, the forward's in registers), T = N / (vec k) threads a
// row, as many rows a CTA as make whole warps and twice and four times that
// (at most 1024 threads, rows_per_cta * N <= 16384). No access is masked:
// next_pow2(N) masks up to half of them, and every warp issues its masked
// slots as if they were not (bf16 1152 in 2048: 1.67x the warp
// instructions of 1024; bench/results/s43, call 7). The forward without a
// residual; the backward with one too (since session 45, its rows staged).
namespace {
void add_segmented_tiles(const SpaceQuery& q, std::vector<Config>& out) {
  if ((q.kernel != Kernel::fwd && q.kernel != Kernel::bwd_dx) || (q.kernel == Kernel::fwd && q.residual) || q.n <= 256 ||
      next_pow2(q.n) == q.n)
    return;
  const int vec = max_vec(q.dtype);
  if (q.n % vec != 0) return;
  const std::int64_t accesses = q.n / vec;
  for (int k = 1; k * vec <= max_items_per_thread(q.kernel, 1); ++k) {
    if (accesses % k != 0) continue;
    const std::int64_t tpr = accesses / k;
    if (next_pow2(tpr) == tpr || tpr % 8 != 0) continue;
    const int first = 32 / std::gcd(static_cast<int>(tpr), 32);  // rows making whole warps
    for (int rows = first; rows <= 4 * first; rows *= 2) {
      const std::int64_t threads = rows * tpr;
      if (threads > 1024 || rows * q.n > 16384) break;
      const int warps = static_cast<int>(threads / 32);
      if (k * vec > max_items_per_thread(q.kernel, warps)) continue;
      add_group_sizes(q, Config{static_cast<int>(q.n), warps, rows, 0}, out);
    }
  }
}
}  // namespace

ConfigFilter instances_for(const Traits& t, std::int64_t n, int vec) {
  return [t, n, vec](const Config& c) -> std::optional<InstanceKey> {
    try {
      return make_instance(t, c, n, vec);
    } catch (const Error&) {
      return std::nullopt;
    }
  };
}

std::vector<Config> search_space(const SpaceQuery& q) {
  if (q.n < 1) throw Error("lntune: search space needs N >= 1, got " + std::to_string(q.n));
  std::vector<Config> out;
  if (q.kernel == Kernel::bwd_dwdb) {
    for (int cols : {32, 64, 128, 256})
      for (int w : kWarpChoices) {
        if (cols > 32 * w || 32 * w / cols > 16) continue;
        int last = -1;
        for (int per_sm : {0, 1, 2, 4}) {
          const int splits = per_sm == 0 ? 1 : dwdb_split_count(q, cols, per_sm);
          if (splits != last) out.push_back(Config{cols, w, 1, splits});
          last = splits;
        }
      }
    return out;
  }
  const std::int64_t single = next_pow2(q.n);
  for (int w : kWarpChoices) {
    const int max_items = max_items_per_thread(q.kernel, w);
    for (int rows = 1; rows <= 32 * w; rows *= 2) {
      const int tpr = 32 * w / rows;
      if (tpr > single || single / tpr > max_items) continue;
      if (static_cast<std::int64_t>(rows) * single > 16384) continue;
      add_group_sizes(q, Config{static_cast<int>(single), w, rows, 0}, out);
    }
  }
  // The forward's whole row in one tile of other than a power of two, N not
  // a power of two, no residual: N rounded up to a multiple of the CTA's
  // accesses (16- or 8-byte), one row a CTA of 4, 8 or 16 warps; a slab in
  // shared memory (sm_90+) where a thread would hold more than max_items.
  // Timed outside the space on an H200 at x = 512 MiB, bf16 LayerNorm
  // (bench/results/s42, call 13), against the default of one process, %
  // of copy: N = 5120 in 8 warps 99.8 against 86.0, 2560 in 4 99.4 against
  // 95.0, 4608 in 4 (shared memory) 92.3 against 81.6, 9216 in 8 (shared
  // memory) 90.4 against 86.1, 12288 in 8 (shared memory) 93.3 against
  // 89.0. The 16-bit defaults of an H200 since session 43 where they led
  // (fast_memory_fwd_default).
  // The backward's (bwd_dx) the same in registers alone (session 43; its
  // kernel has no slab in shared memory), in 16-byte accesses alone: fp32
  // 1152 columns in 4 warps of 1536, 4608 in 16 of 6144, 12 elements a
  // thread, where next_pow2(N) masks a third to a half of each thread's
  // accesses (fp32 4608 in 6144 100.9% of copy against 88.8 on an H200,
  // fast_memory_bwd_default; bench/results/s43, call 3). In 8-byte accesses
  // they lost (16-bit rows: bf16 1152 in 1536 80.0 against 81.2, 4608 in
  // 6144 75.9 against 81.2) or spilled (fp32 RMSNorm 3072 in 16 warps:
  // KernelHeaders.BackwardTilesSpillNoMoreThanThePowerOfTwo).
  if ((q.kernel == Kernel::fwd || q.kernel == Kernel::bwd_dx) && !q.residual && q.n > 1024 && q.n != single) {
    const int vecs = q.kernel == Kernel::fwd ? 2 : 1;  // 16- and 8-byte accesses; the backward's 16 alone
    for (int w : {4, 8, 16}) {
      std::int64_t wider = 0;  // the tile of the wider accesses (a power of two: no tile is one)
      for (int i = 0; i < vecs; ++i) {
        const std::int64_t block = round_up(q.n, std::int64_t{32} * w * (max_vec(q.dtype) >> i));
        const bool in_smem = block / (32 * w) > max_items_per_thread(q.kernel, w);
        if (block == wider || block >= single || (in_smem && (q.cc < 90 || q.kernel != Kernel::fwd))) continue;
        wider = block;
        add_group_sizes(q, Config{static_cast<int>(block), w, 1, 0}, out);
      }
    }
  }
  add_segmented_tiles(q, out);
  if (q.cc >= 90 && q.n > 2048) {
    for (int cluster : {2, 4, 8}) {
      const std::int64_t block = next_pow2((q.n + cluster - 1) / cluster);
      if ((cluster - 1) * block >= q.n) continue;  // a CTA would get no columns
      for (int w : kWarpChoices) {
        const std::int64_t items = block / (32 * w);
        if (w < 4 || items < 1 || items > max_items_per_thread(q.kernel, w)) continue;
        Config c{static_cast<int>(block), w, 1, 0};
        c.cluster_size = cluster;
        add_group_sizes(q, c, out);
      }
    }
  }
  if (q.kernel == Kernel::fwd && q.cc >= 90 && q.n > kSmemForwardMinN) add_smem_forward(q, out);
  add_wide_fwd(q, out);
  add_wide_bwd(q, out);
  if (q.n > 1024) {
    for (int block : {1024, 2048, 4096, 8192}) {
      if (block >= single) continue;
      for (int w : kWarpChoices) {
        const int items = block / (32 * w);
        if (w < 4 || items < 2 || items > std::min(16, max_items_per_thread(q.kernel, w))) continue;
        add_group_sizes(q, Config{block, w, 1, 0}, out);
      }
    }
  }
  return out;
}

std::int64_t default_m_bound(int sm_count) {
  return std::max<std::int64_t>(8193, 512 * static_cast<std::int64_t>(std::max(1, sm_count)));
}

Config default_config(const SpaceQuery& q, const ConfigFilter& accept) {
  if (q.n < 1) throw Error("lntune: default config needs N >= 1, got " + std::to_string(q.n));
  // bwd_dwdb: rows with enough 32-column blocks for half the SMs: 32 columns
  // per CTA, one split. Up to two blocks per SM, 512 threads (64 row groups:
  // the few CTAs need the threads; on an H100 at M = 4096, bf16 N = 2560 and
  // 3072: 8.4 and 8.6 us against 13.9 and 14.3 us with 128 threads, and the
  // tuner's winners up to N = 8192 have 16 warps). Narrower rows: 128
  // columns per CTA of 512 threads (16 row groups), and splits for about a
  // CTA per SM (the best configs at M = 4096, N = 1024..4096 on an H100).
  //
  // Wider rows (more than two 32-column blocks a SM) had 32 columns in 128
  // threads (16 row groups; 512 threads on 32 columns measured 5% slower
  // for the whole fp32 backward at N = 65536), which session 57's cold tune
  // of the default grid on an H200 (bench/results/s57/call1/cold.log) found
  // 1.24x behind the tuner's winner in geometric mean over 147 keys of
  // 8704-262144 columns and 6-132 partial rows, up to 1.9x. Now about two
  // CTAs a SM of 64-256 columns (the winners: 64 at 8704-16384 columns, 128
  // at 32768, 256 at 65536-262144) and row groups for two or three partial
  // rows each, 4 to 32 (132 rows: 32, as b64 w16 at 1.33-1.39x over the old
  // default; 15: 8; 6-7: 4, as b128 w4 and b256 w8 at 1.7-1.9x).
  if (q.kernel == Kernel::bwd_dwdb) {
    const std::int64_t sms = std::max(1, q.sm_count);
    const std::int64_t blocks = (q.n + 31) / 32;
    if (blocks > 2 * sms) {
      const int cols = static_cast<int>(std::clamp<std::int64_t>(next_pow2((q.n + 2 * sms - 1) / (2 * sms)), 64, 256));
      // The largest power of two of row groups up to 2P/3, at least 4, in at
      // most 16 warps (the winners' most: 2048 / cols groups, 32 at 64
      // columns; a group's cols / 4 threads take 4 columns each).
      int groups = 4;
      while (2 * groups <= 2048 / cols && 3 * (2 * groups) <= 2 * q.m) groups *= 2;
      return Config{cols, groups * cols / 128, 1, 1};
    }
    if (blocks >= sms / 2) return Config{32, 16, 1, 1};
    // Rows of 129-256 columns over 528 or more partial rows on a
    // fast-memory GPU: 32 columns a CTA, about one CTA a SM, 8 warps (16
    // from 1056 rows), where 128 columns in 16 warps (since session 60;
    // session 58's tune: 1.10-1.27x; session 60's A/B of the whole backward,
    // M = 4096 N = 256: bf16 13.05 -> 12.7 us, fp32 13.25 -> 12.85 us; M =
    // 16384 and 512 MiB unchanged).
    if (fast_memory(q) && q.n > 128 && q.n <= 256 && q.m >= 528)
      return Config{32, q.m >= 1056 ? 16 : 8, 1, dwdb_split_count(q, 32, 1)};
    return Config{128, 16, 1, dwdb_split_count(q, 128, 1)};
  }
  const bool bwd = q.kernel == Kernel::bwd_dx;
  if (const std::optional<Config> c = fast_memory_default(q, accept)) return *c;
  if (const std::optional<Config> c = fused_row_bwd_default(q, accept)) return *c;
  if (q.cc >= 90) {
    if (!bwd)
      if (const std::optional<Config> c = wide_fwd_default(q, accept)) return *c;
    if (const std::optional<Config> c = bwd ? wide_bwd_default(q, accept) : smem_forward_default(q, accept)) return *c;
    if (!bwd)
      if (const std::optional<Config> c = gap_fwd_default(q, accept)) return *c;
  }
  // (LayerNorm + add in 16 bits otherwise keeps the rule below: there the
  // fused rule's configs measured 77.4 and 87.1% of copy at N = 4096 and
  // 8192, bf16, against 91.0 and 89.5 for the plain rule's;
  // `LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 lntune_sweep bwd bf16 1024
  // 4096 8192`, before dz was loaded early.)
  if (bwd && q.residual && (q.norm == Norm::rms || q.dtype == DType::f32)) return fused_bwd_default(q);
  // A thread holds 16 elements of a row, in CTAs of at least 64 threads
  // (short rows share a CTA; the backward at M <= 8192: two rows per CTA up
  // to 128 threads a row, its row slots sharing one partial row); rows needing more
  // than 512 threads are split over a cluster (sm_90+; the backward, where it
  // measured faster) or tiled.
  constexpr int kItems = 16;
  const std::int64_t single = next_pow2(q.n);
  const std::int64_t tpr_needed = std::max<std::int64_t>(1, single / kItems);
  Config c{static_cast<int>(single), 1, 1, 0};
  // The fp32 backward over many rows (M > 8192), rows of 256 to 2048
  // columns: one 16-byte access per thread and row, 512 threads per CTA
  // (as many rows as fit), two CTAs per SM. On an H100 at x = 512 MiB
  // (`lntune_sweep bwd fp32 256 512 1024 2048`) that was the best of the
  // space at every N: 97.6, 98.1, 98.3 and 100.3% of copy, against 87.9,
  // 86.1, 87.2 and 88.3% for 16 elements per thread (bench/results/
  // h100_2026-11-24c, call 12).
  const bool fp32_short_rows = bwd && q.dtype == DType::f32 && q.m > 8192 && single >= 256 && single <= 2048;
  // 16-bit LayerNorm rows of 6145-8192 columns over many rows: split in two
  // over a cluster only where the whole row in 16 warps would not stage its
  // rows (odd N: accesses under 4 bytes). Staged, the whole row (one CTA of
  // 512 threads per SM) was the best of the space on an H100 at x = 512 MiB
  // (`LNTUNE_SWEEP_EVERY=1 lntune_sweep bwd bf16 8192`, bench/results/s32,
  // call 1): bf16 N = 8192 95.9% of copy, fp16 96.5%, against 90.3% and
  // 90.2% for the split; as the default on an H200 (call 2), main against
  // this: bf16 N = 8192 76.4 -> 96.2%, 7168 69.7 -> 93.9%, fp16 8192
  // 76.4 -> 99.0%.
  if (!q.residual && half_layer_norm_split_in_two(q) &&
      !backward_stages_rows(q, Config{static_cast<int>(single), 16, 1, 0}, accept)) {
    c = kHalfSplitInTwo;
  } else if (tpr_needed <= 512) {
    // The backward at training sizes (M <= 8192: few rows per CTA, so the
    // partial rows weigh): two rows per CTA for rows of up to 128 threads
    // (N <= 2048), the same threads per SM in half the CTAs, so half the
    // partial rows. Rows of 256 threads run one per CTA: on an H100 at
    // M = 4096 the best bwd_dx at N = 2560 and 4096 was one row per CTA of
    // 256 threads, two CTAs per SM (bf16: 42.4 and 54.1 us with dW/dB,
    // against 44.0 and 54.9 us for two rows per CTA of 512 threads; fp32
    // N = 4096: 81.1 against 86.7 us; `lntune_sweep train`).
    const bool pair = bwd && q.m <= 8192 && tpr_needed <= 128;
    // The 16-bit forward of rows of 256 or 512 columns: 512-thread CTAs (as
    // many rows as fill them). On an H100 at x = 512 MiB that was the space's
    // best (`lntune_sweep fwd bf16 256 512`, bench/results/h100_2026-11-24d,
    // calls 10 and 13): bf16 N = 256 99.1-99.3% of copy against 97.2% for 64
    // threads, 512 99.6 against 98.7; fp16 98.9-99.1 against 97.0, 99.3-99.4
    // against 98.4; RMSNorm bf16 100.1 and 100.0 (100.8 the best at 512).
    // Not at N = 200 (94.1% with 512 threads, 97.6% the best: 128 threads).
    const bool wide_cta = !bwd && !q.residual && q.dtype != DType::f32 && q.n == single && single >= 256 &&
                          single <= 512;
    // The 16-bit LayerNorm forward of rows of 2049-8192 columns over many
    // rows (M > 8192, no residual): 32 elements a thread in CTAs of 256
    // threads (two rows of up to 4096 columns a CTA). Where the memory
    // outruns the SM, the kernel is bound by instructions issued, a row's two
    // reductions a fixed cost per thread: on an H200 at x = 512 MiB
    // (`LNTUNE_SWEEP_EVERY=1 lntune_sweep fwd bf16 4096 8192`, bench/results/
    // s34, call 2) these were the space's best, bf16 N = 4096 98.9% of copy
    // against 96.8% for 16 elements a thread, 8192 98.9% against 92.7%; as
    // the default (call 3) bf16 N = 3000 83.0 -> 92.5%, 6000 77.4 -> 92.6%,
    // fp16 8192 93.1 -> 98.5%. Not at fewer rows: one row (decode) took
    // 1 us longer (5.2 -> 6.2 us at N = 4096, 5.6 -> 6.7 at 8192), and
    // M = 4096 went either way (N = 4096 83 -> 80%, 8192 86 -> 91%).
    const bool long_half_fwd = !bwd && !q.residual && q.norm == Norm::layer && q.dtype != DType::f32 &&
                               q.m > 8192 && single >= 4096 && single <= 8192;
    const std::int64_t tpr = long_half_fwd ? single / 32 : tpr_needed;
    const std::int64_t threads =
        long_half_fwd ? 256 : wide_cta ? 512 : std::max<std::int64_t>(64, pair ? 2 * tpr_needed : tpr_needed);
    c.num_warps = static_cast<int>(threads / 32);
    c.rows_per_cta = static_cast<int>(threads / tpr);
    if (fp32_short_rows) {
      c.num_warps = 16;
      c.rows_per_cta = static_cast<int>(512 / (single / 4));
    }
  } else if (!bwd && single / 512 <= max_items_per_thread(q.kernel, 16)) {
    // The forward holds up to 32 elements per thread in 512 threads. A fused
    // residual add holds two rows in registers (91 registers against 60 at
    // N = 16384, bf16) and measured fastest (H100, % of copy, `LNTUNE_SWEEP_RESIDUAL=1
    // [LNTUNE_SWEEP_OP=rmsnorm] lntune_sweep fwd DTYPE 12288 16384`) with
    //   RMSNorm: tiles of 8192 columns in 1024 threads (bf16 N = 16384: 100.3,
    //     against 86.4 for this rule's config; 12288: 100.6);
    //   LayerNorm, fp32: the whole row in 1024 threads (N = 16384: 98.3,
    //     against 77.9; 12288: 100.6);
    //   LayerNorm, 16 bits: tiles of 8192 columns in 512 threads (bf16
    //     N = 16384: 94.4, against 81.0; 1024 threads: 57.0).
    c.num_warps = 16;
    if (q.residual && single > 8192) {
      c.num_warps = q.norm == Norm::layer && q.dtype != DType::f32 ? 16 : 32;
      if (q.norm == Norm::rms || q.dtype != DType::f32) c.block_size = 8192;
    }
  } else if (bwd && q.cc >= 90 && single / (512 * kItems) <= 8) {
    c.num_warps = 16;
    c.block_size = 512 * kItems;
    c.cluster_size = static_cast<int>(single / c.block_size);
  } else {
    c.num_warps = bwd ? 32 : 16;
    c.block_size = 8192;  // tiles of 8192 columns (16 or 8 elements per thread)
  }
  if (bwd) {
    // Persistent: about 512 threads' worth of CTAs per SM (clusters: one per
    // SM, as measured), but at least 8 rows per CTA, so that the fp32 partial
    // rows (one per CTA) stay a small part of the traffic when M is small.
    // fp32 rows of 256 threads (N = 2049..4096): one CTA per SM (H100,
    // M = 4096, N = 4096, dx with dW/dB: 81.0 us against 89.7 us with two).
    std::int64_t per_sm = ctas_for_512_threads(c.threads());
    if (q.dtype == DType::f32 && tpr_needed == 256 && c.rows_per_cta == 1) per_sm = 1;
    if (fp32_short_rows) per_sm = 2;
    // Training sizes (M <= 8192), rows of 513-2048 columns held whole, no
    // residual, sm_80+, where the kernel stages each next row in shared
    // memory (bwd_dx.cuh, staged_bwd): fewer, larger row groups than the
    // pair rule above, so fewer partial rows for bwd_dwdb, the staging
    // keeping each CTA's loads ahead (where the call's instance stages them:
    // not with accesses under 4 bytes, odd 16-bit N). One row a CTA (16 bits,
    // N = 1024: two) in 4 warps, 2 CTAs per SM (fp32, N = 1024: 4; N = 2048:
    // 8 warps). On
    // an H100 at M = 4096 these were the best of every config with dW/dB, or
    // within 0.3 points of it (`LNTUNE_SWEEP_EVERY=1 lntune_sweep train DTYPE
    // N`, bench/results/h100_s30, calls 2 and 3), % of copy against the rule
    // above: bf16 N = 1024 46.4 (45.1), 2048 63.5 (57.3); fp32 N = 1024
    // 72.6 (66.9), 2048 86.6 (81.3).
    const bool staged_rows = q.m <= 8192 && !q.residual && q.cc >= 80 && c.cluster_size == 1 &&
                             c.block_size == single && (single == 1024 || single == 2048);
    if (staged_rows) {
      const bool fp32 = q.dtype == DType::f32;
      Config s = c;
      s.num_warps = fp32 && single == 2048 ? 8 : 4;
      s.rows_per_cta = !fp32 && single == 1024 ? 2 : 1;
      if (backward_stages_rows(q, s, accept)) {
        c = s;
        per_sm = fp32 && single == 1024 ? 4 : 2;
      }
    }
    c.group_size_m = persistent_groups(q, c.rows_per_cta, c.cluster_size > 1 ? q.sm_count : q.sm_count * per_sm);
    // Small M, rows of 513-2048 columns held whole (no residual: those
    // variants took their own rules above): fewer elements a thread, so that
    // the short grid's one pass over its rows waits less on each row.
    //   M = 1: one 16-byte access of x a thread, one CTA (it writes dW/dB
    //     itself: rt::finish_path, alone);
    //   M = 5 to 16384 / N: 4 elements a thread in CTAs of 512 threads (2
    //     rows of 1024 columns, 1 of 2048), one CTA per row group, bwd_dwdb
    //     after it.
    // On an H100, the default before and with this rule, each in its own
    // process (`LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=M lntune_sweep
    // bwd`, bench/results/h100_s29, call 8, first round), us:
    //   M = 1: bf16 N = 1024 5.7 / 5.2, 2048 5.9 / 5.1; fp32 1024 5.3 / 4.4,
    //     2048 5.8 / 4.8; RMSNorm bf16 1024 5.6 / 4.8;
    //   M = 8: bf16 1024 9.0 / 7.7, 2048 10.5 / 8.7; fp32 1024 8.8 / 7.4,
    //     2048 10.0 / 8.0; RMSNorm bf16 1024 8.0 / 6.9, 2048 8.7 / 7.8;
    //   M = 16, N = 1024: bf16 9.4 / 8.4, fp32 8.8 / 7.3, RMSNorm 8.4 / 7.2.
    // Not further: at M = 16, N = 2048 and from M = 32 (16 CTAs and more) it
    // was 0.1-1.1 us slower (call 7; bf16 N = 1024, M = 32: 9.6 / 10.7).
    const bool short_grid = q.m == 1 || (q.m >= 5 && q.m * single <= 16384);
    if (short_grid && c.cluster_size == 1 && c.block_size == single && single >= 1024 && single <= 2048) {
      const std::int64_t tpr_small = q.m == 1 ? single * static_cast<std::int64_t>(dtype_size(q.dtype)) / 16 : single / 4;
      c.rows_per_cta = q.m == 1 ? 1 : static_cast<int>(512 / tpr_small);
      c.num_warps = static_cast<int>(tpr_small * c.rows_per_cta / 32);
      c.group_size_m = static_cast<int>((q.m + c.rows_per_cta - 1) / c.rows_per_cta);
    }
    // Decode sizes, M = 2 to 4 rows held whole: one CTA holds them all side by
    // side (the same threads per row, next_pow2(M) row slots), so the grid is
    // one CTA and it writes dW/dB itself (rt::finish_path: alone; no bwd_dwdb
    // launch). On an H100 (`LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_M=M lntune_sweep
    // bwd`, bench/results/h100_s28, call 10), against the rule above: bf16
    // M = 2 N = 4096 6.9 us against 11.0, fp32 6.8 against 9.7; M = 4
    // N = 1024 6.9 against 8.3, N = 2048 8.6 against 9.3. Not where a thread
    // would hold more elements than its registers allow at that CTA size.
    const std::int64_t slots = next_pow2(q.m);
    const std::int64_t tpr = c.threads() / c.rows_per_cta;
    if (q.m >= 2 && q.m <= 4 && c.cluster_size == 1 && c.block_size >= q.n && c.rows_per_cta < slots &&
        tpr * slots >= 32 && tpr * slots <= 1024 &&
        single / tpr <= max_items_per_thread(q.kernel, static_cast<int>(tpr * slots / 32))) {
      c.rows_per_cta = static_cast<int>(slots);
      c.num_warps = static_cast<int>(tpr * slots / 32);
      c.group_size_m = 1;
    }
  }
  return c;
}

}  // namespace lntune::gen

namespace lntune::gen {

std::vector<std::int64_t> default_n_grid() {
  std::vector<std::int64_t> n;
  for (int i = 2; i <= 31; ++i) n.push_back(512 * i);
  for (std::int64_t v : {768, 1280, 1600, 2560, 3200, 5120, 6144, 7168, 8192, 12288, 14336, 16384, 18432, 32768, 65536})
    n.push_back(v);
  std::sort(n.begin(), n.end());
  n.erase(std::unique(n.begin(), n.end()), n.end());
  return n;
}

std::vector<std::int64_t> bandwidth_n_grid() { return {256, 1024, 4096, 16384, 65536, 262144}; }

std::int64_t bandwidth_m(std::int64_t n, DType dtype) {
  if (n < 1) throw Error("lntune: bandwidth_m needs N >= 1, got " + std::to_string(n));
  const std::int64_t row = n * static_cast<std::int64_t>(dtype_size(dtype));
  return std::max<std::int64_t>(1, (kBandwidthBytes + row - 1) / row);
}

}  // namespace lntune::gen
