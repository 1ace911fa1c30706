#include "runtime/cache_binding.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "generator/instance.hpp"
#include "generator/space.hpp"

namespace lntune::rt {

cache::GpuId gpu_id(const DeviceInfo& dev) {
  cache::GpuId g;
  g.name = dev.name;
  g.cc_major = dev.cc_major;
  g.cc_minor = dev.cc_minor;
  g.sm_count = dev.sm_count;
  return g;
}

cache::TuneKey tune_key(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m) {
  cache::TuneKey k;
  k.gpu = gpu_id(dev);
  k.traits = traits.canonical();
  k.n = n;
  k.m_bucket = cache::m_bucket(m, dev.sm_count);
  return k;
}

std::vector<int> bucket_order(int own) {
  if (own < 0 || own >= cache::kNumMBuckets)
    throw Error("lntune: bucket_order: M bucket " + std::to_string(own) + " is not in [0, " +
                std::to_string(cache::kNumMBuckets) + ")");
  std::vector<int> out{own};
  if (own == cache::kNumMBuckets - 1) return out;  // the bandwidth regime borrows no other bucket's record
  for (int d = 1; d < cache::kNumMBuckets; ++d)
    for (int b : {own + d, own - d})
      if (b >= 0 && b < cache::kNumMBuckets) out.push_back(b);
  return out;
}

bool near_enough(std::int64_t from, std::int64_t to) {
  if (from <= 0 || to <= 0) throw Error("lntune: near_enough: N must be > 0");
  const std::int64_t hi = std::max(from, to), lo = std::min(from, to);
  return 2 * hi <= 3 * lo;  // hi / lo <= 3 / 2 without rounding
}

Config adapt_config(const Config& c, Kernel kernel, std::int64_t from_n, std::int64_t to_n) {
  if (kernel == Kernel::bwd_dwdb || from_n == to_n || c.block_size <= 0 || c.num_warps <= 0 || c.rows_per_cta <= 0)
    return c;
  // The wide-row kernels' shape (slab, staging depth) is kept: valid for
  // the new N or not (then the caller falls back to the default).
  if (gen::is_wide_bwd(kernel, c) || gen::is_wide_fwd(kernel, c)) return c;
  const int cluster = c.cluster_size > 0 ? c.cluster_size : 1;
  const bool whole_row = from_n <= static_cast<std::int64_t>(c.block_size) * cluster;
  if (!whole_row) return c;  // tiled: kept as is
  const std::int64_t share = (to_n + cluster - 1) / cluster;
  const std::int64_t block = gen::next_pow2(share);
  // A single tile of other than a power of two (a multiple of its threads'
  // accesses, gen::search_space): the same threads, the new N rounded up to
  // the same grain (the threads per row times the largest power of two, at
  // most 8, dividing each thread's elements), at most next_pow2(N);
  // make_instance picks the vec and validates (a tile past the registers'
  // bound: the caller's default instead).
  if (gen::is_odd_tile(c)) {
    const std::int64_t tpr = c.threads_per_row();
    const std::int64_t items = c.block_size / std::max<std::int64_t>(1, tpr);
    std::int64_t grain = tpr;
    for (std::int64_t v = 2; v <= 8 && items % v == 0; v *= 2) grain = tpr * v;
    Config out = c;
    out.block_size = static_cast<int>(std::min(block, gen::round_up(to_n, grain)));
    return out;
  }
  Config out = c;
  out.block_size = static_cast<int>(block);
  // Same elements per thread: threads per row scale with the block. Rows
  // per CTA shrink while the CTA breaks a rule of the search space (at most
  // 1024 threads; registers: gen::max_items_per_thread; rows * block <=
  // 16384) and grow while it has less than a warp.
  const std::int64_t items = std::max<std::int64_t>(1, c.block_size / c.threads_per_row());
  const std::int64_t tpr = std::max<std::int64_t>(1, block / items);
  auto fits = [&](std::int64_t r) {
    const std::int64_t t = tpr * r;
    const int warps = static_cast<int>(std::max<std::int64_t>(1, t / 32));
    return t <= 1024 && items <= gen::max_items_per_thread(kernel, warps) && r * block <= 16384;
  };
  std::int64_t rows = c.rows_per_cta;
  while (rows > 1 && !fits(rows)) rows /= 2;
  while (tpr * rows < 32 && fits(rows * 2)) rows *= 2;
  const std::int64_t threads = std::min<std::int64_t>(1024, std::max<std::int64_t>(32, tpr * rows));
  out.rows_per_cta = static_cast<int>(rows);
  out.num_warps = static_cast<int>(threads / 32);
  return out;
}

// ------------------------------------------------------------ config source
bool is_stale(const cache::TuneRecord& r) {
  // Computed once: the templates are compiled into the binary.
  static const std::string current = gen::hex(gen::templates_hash());
  return r.prov.template_hash != current;
}

CacheConfigSource::CacheConfigSource(std::shared_ptr<cache::CacheStack> stack, Log log)
    : stack_(std::move(stack)), log_(log) {}

std::optional<Selection> CacheConfigSource::select(const DeviceInfo& dev, const Traits& traits, std::int64_t n,
                                                   std::int64_t m) {
  if (!stack_ || n <= 0 || dev.sm_count <= 0) return std::nullopt;
  const cache::TuneKey key = tune_key(dev, traits, n, m < 0 ? 0 : m);
  auto usable = [this](const std::optional<cache::TuneRecord>& r) {
    if (r && is_stale(*r)) {
      if (log_.debug_enabled())
        log_.debug("ignoring the stale record for N=" + std::to_string(r->key.n) + " (tuned with templates " +
                   r->prov.template_hash + ")");
      return false;
    }
    return r.has_value();
  };
  if (auto r = stack_->find(key); usable(r)) return Selection{r->config, "tuned (exact)"};
  // The bandwidth regime (its own bucket only: bucket_order) takes only a near N.
  const bool bandwidth = key.m_bucket == cache::kNumMBuckets - 1;
  for (int bucket : bucket_order(key.m_bucket)) {
    cache::TuneKey k = key;
    k.m_bucket = bucket;
    auto r = stack_->find_nearest(k);
    if (!usable(r)) continue;
    if (bandwidth && !near_enough(r->key.n, n)) {
      if (log_.debug_enabled())
        log_.debug("bandwidth regime: the nearest record (N=" + std::to_string(r->key.n) + ") is too far from N=" +
                   std::to_string(n) + ": default heuristic");
      break;
    }
    std::string reason;
    if (bucket == key.m_bucket)
      reason = "tuned (nearest N=" + std::to_string(r->key.n) + ")";
    else if (r->key.n == n)
      reason = "tuned (M bucket " + std::to_string(bucket) + ")";
    else
      reason = "tuned (M bucket " + std::to_string(bucket) + ", nearest N=" + std::to_string(r->key.n) + ")";
    return Selection{adapt_config(r->config, traits.kernel, r->key.n, n), std::move(reason)};
  }
  return std::nullopt;
}

// ------------------------------------------------------------ binary store
CacheBinaryStore::CacheBinaryStore(std::shared_ptr<cache::CacheStack> stack, Log log)
    : stack_(std::move(stack)), log_(log) {}

std::optional<std::vector<char>> CacheBinaryStore::get(const std::string& hash, const std::string& arch,
                                                       int nvrtc_version) {
  if (!stack_) return std::nullopt;
  try {
    return stack_->get_binary(cache::BinaryKey{hash, arch, nvrtc_version});
  } catch (const std::exception& e) {
    // A cache that cannot be read means compiling: slower, never wrong.
    if (!get_failed_.exchange(true))
      log_.warn(std::string("could not read compiled kernels from the cache: ") + e.what());
    return std::nullopt;
  }
}

void CacheBinaryStore::put(const std::string& hash, const std::string& arch, int nvrtc_version,
                           const std::vector<char>& cubin, const std::string& kernel_name) {
  if (!stack_ || put_failed_.load()) return;
  try {
    cache::Database* db = stack_->writable();
    if (!db) return;  // no user cache configured: nothing to write to
    db->put_binary(cache::BinaryKey{hash, arch, nvrtc_version}, cubin, kernel_name);
  } catch (const std::exception& e) {
    if (!put_failed_.exchange(true))
      log_.warn(std::string("compiled kernels are not being saved to the cache: ") + e.what());
  }
}

// ------------------------------------------------------------ default
std::shared_ptr<cache::CacheStack> cache_stack_from_environment(const Log& log) {
  const char* v = std::getenv("LNTUNE_CACHE");
  if (v && std::strcmp(v, "off") == 0) {
    log.debug("LNTUNE_CACHE=off: no tuned configs, no cached kernels");
    return nullptr;
  }
  try {
    auto stack = std::make_shared<cache::CacheStack>(cache::CacheStack::from_environment());
    // Files are opened on first lookup, not here: a damaged user cache then
    // costs warnings, never the shipped caches.
    if (log.debug_enabled()) {
      const char* shipped = std::getenv("LNTUNE_CACHE_PATH");
      log.debug("tuning cache: user cache " + (stack->writable_path() ? *stack->writable_path() : "none") +
                (shipped ? std::string(", shipped: ") + shipped : ""));
    }
    return stack;
  } catch (const std::exception& e) {
    log.warn(std::string("the tuning cache is not used (default heuristic only): ") + e.what());
    return nullptr;
  }
}

}  // namespace lntune::rt
