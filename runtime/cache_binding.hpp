// The SQLite cache (cache/) bound to the launcher: tuned configs through
// rt::ConfigSource, compiled CUBINs through rt::BinaryStore.
//
// Selection rule (what the launcher does for a call, memoised per shape by
// its plan table, so a warm call does no SQLite work):
//   1. exact key: this GPU (name, compute capability, SM count), the
//      canonical traits (kernel, dtypes, weight/bias), N, and the bucket of M
//      (cache::m_bucket) -> "tuned (exact)";
//   2. else the record of the same GPU, traits and M bucket whose N is
//      nearest on a log scale (ties: the larger N) -> "tuned (nearest
//      N=<n>)". Its config is carried over to this N keeping its shape: a
//      config that held the whole row in one tile (or one cluster) for its N
//      is rescaled to hold the whole row for this N with the same elements
//      per thread (block_size = next_pow2 of the row share, num_warps scaled
//      by the same factor; rows_per_cta, cluster_size, group_size_m kept); a
//      tiled config is kept as is;
//   3. else nothing: the launcher uses the default heuristic. (So does the
//      launcher when a tuned config is not valid for the call, e.g. for its
//      vector width.)
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "runtime/driver.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/selector.hpp"

namespace lntune::rt {

// The cache's identity of a device.
cache::GpuId gpu_id(const DeviceInfo& dev);

// The tune key of a call (traits canonicalised; M bucketed for this GPU).
cache::TuneKey tune_key(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m);

// Rule 2's carry-over of a config tuned for N = from_n to N = to_n (pure).
Config adapt_config(const Config& c, Kernel kernel, std::int64_t from_n, std::int64_t to_n);

class CacheConfigSource : public ConfigSource {
 public:
  explicit CacheConfigSource(std::shared_ptr<cache::CacheStack> stack);
  std::optional<Selection> select(const DeviceInfo& dev, const Traits& traits, std::int64_t n,
                                  std::int64_t m) override;

 private:
  std::shared_ptr<cache::CacheStack> stack_;
};

// get: the first layer holding the binary. put: the writable (user) cache; a
// failure to write is reported once (log_warn) and later puts are skipped.
// Neither throws: a cache that cannot be used means compiling.
class CacheBinaryStore : public BinaryStore {
 public:
  explicit CacheBinaryStore(std::shared_ptr<cache::CacheStack> stack);
  std::optional<std::vector<char>> get(const std::string& source_hash, const std::string& arch,
                                       int nvrtc_version) override;
  void put(const std::string& source_hash, const std::string& arch, int nvrtc_version,
           const std::vector<char>& cubin, const std::string& kernel_name) override;

 private:
  std::shared_ptr<cache::CacheStack> stack_;
  std::atomic<bool> put_failed_{false}, get_failed_{false};
};

// Once per process (thread-safe; later calls are one atomic load): unless
// LNTUNE_CACHE=off, builds cache::CacheStack::from_environment() and installs
// a CacheConfigSource and a CacheBinaryStore over it. A cache that cannot be
// opened is a warning (log_warn) and no cache, never an error.
void install_default_cache();

// The stack install_default_cache built (nullptr: none, or not yet built).
std::shared_ptr<cache::CacheStack> default_cache_stack();

// Installs both bindings over `stack` (nullptr: removes both). Marks the
// default cache as installed, so a later install_default_cache() keeps it.
void install_cache(std::shared_ptr<cache::CacheStack> stack);

// enabled = false: no tuned configs (the default heuristic everywhere; the
// binary store stays). enabled = true: the default cache's config source
// again (building it first if needed; nothing with LNTUNE_CACHE=off).
void set_tuned(bool enabled);

}  // namespace lntune::rt
