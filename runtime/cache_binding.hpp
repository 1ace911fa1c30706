// The SQLite cache (cache/) bound to the launcher: tuned configs through
// rt::ConfigSource, compiled CUBINs through rt::BinaryStore.
//
// Selection rule (what the launcher does for a call, memoised per shape by
// its plan table, so a warm call does no SQLite work). Only records of this
// GPU (name, compute capability, SM count) and of the call's canonical
// traits (kernel, dtypes, weight/bias, norm variant: RMSNorm, residual,
// zero-centred gamma, output dtype) are ever used:
//   1. exact key: those, N, and the bucket of M (cache::m_bucket)
//      -> "tuned (exact)";
//   2. else the nearest M bucket that holds a record, then in it the record
//      whose N is nearest on a log scale (ties: the larger N; the rule of
//      cache::CacheStack::find_nearest):
//        * buckets are tried in the order of bucket_order(own bucket): the
//          own bucket first, then by distance |b - own|, and of two at the
//          same distance the larger one first (its persistent grid is the
//          larger, and the launcher clips a grid to the rows of the call; a
//          smaller bucket's grid could leave SMs idle);
//        * a bucket whose nearest record is stale (is_stale) is passed over
//          as if it held none;
//      -> "tuned (nearest N=<n>)" in the own bucket, "tuned (M bucket <b>)"
//      for the same N in another bucket, "tuned (M bucket <b>, nearest
//      N=<n>)" otherwise. The config is carried over to this N keeping its
//      shape: a config that held the whole row in one tile (or one cluster)
//      for its N is rescaled to hold the whole row for this N with the same
//      elements per thread (block_size = next_pow2 of the row share,
//      num_warps scaled by the same factor; rows_per_cta, cluster_size,
//      group_size_m kept); a tiled config is kept as is. group_size_m is
//      kept across buckets too: the launcher clips it to the call's row
//      groups (bwd_dwdb: its splits to the partial rows). In the bandwidth
//      regime (the last bucket, M >= 64 x SMs) rule 2 takes only the own
//      bucket's nearest record, and only within 3/2 of the call's N
//      (near_enough). Its default heuristic is within a
//      few percent of the tuned winners (H200: 1.018x geometric mean over
//      its 54 default-grid keys, at most 1.17x), while a config carried from
//      4096 rows or from twice the N lost up to half the copy bandwidth
//      (RMSNorm bf16 backward at x = 512 MiB: 52.5-82% of copy against
//      99.3-99.7% with the default; bench/results/s33, calls 4 and 5): a
//      persistent grid and a CTA shape sized for fewer rows or another row
//      length, where the kernel is bound by bandwidth alone;
//   3. else nothing: the launcher uses the default heuristic. (So does the
//      launcher when a tuned config is not valid for the call, e.g. for its
//      vector width.)
// A stale exact record (step 1) counts as absent.
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
#include "runtime/log.hpp"
#include "runtime/selector.hpp"

namespace lntune::rt {

// The cache's identity of a device.
cache::GpuId gpu_id(const DeviceInfo& dev);

// The tune key of a call (traits canonicalised; M bucketed for this GPU).
cache::TuneKey tune_key(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m);

// Rule 2's order of M buckets for a call in bucket `own` (pure): own, then
// own + 1, own - 1, own + 2, own - 2, ... within [0, cache::kNumMBuckets);
// the last bucket (the bandwidth regime) alone. Throws lntune::Error for a
// bucket out of range.
std::vector<int> bucket_order(int own);

// Rule 2 in the bandwidth regime: a record of N `from` serves a call of N
// `to` when max / min <= 3 / 2 (pure, in integers; throws lntune::Error
// unless both are > 0).
bool near_enough(std::int64_t from, std::int64_t to);

// Rule 2's carry-over of a config tuned for N = from_n to N = to_n (pure).
Config adapt_config(const Config& c, Kernel kernel, std::int64_t from_n, std::int64_t to_n);

// The one rule for records measured with other kernel templates (a
// template_hash that is not this build's, gen::templates_hash()): they are
// stale, as if absent. The launcher does not use them (its next rule
// applies) and the tuner tunes their keys again.
bool is_stale(const cache::TuneRecord& r);

class CacheConfigSource : public ConfigSource {
 public:
  explicit CacheConfigSource(std::shared_ptr<cache::CacheStack> stack, Log log = Log::from_environment());
  std::optional<Selection> select(const DeviceInfo& dev, const Traits& traits, std::int64_t n,
                                  std::int64_t m) override;

 private:
  std::shared_ptr<cache::CacheStack> stack_;
  Log log_;
};

// get: the first layer holding the binary. put: the writable (user) cache; a
// failure to write is reported once (log_warn) and later puts are skipped.
// Neither throws: a cache that cannot be used means compiling.
class CacheBinaryStore : public BinaryStore {
 public:
  explicit CacheBinaryStore(std::shared_ptr<cache::CacheStack> stack, Log log = Log::from_environment());
  std::optional<std::vector<char>> get(const std::string& hash, const std::string& arch,
                                       int nvrtc_version) override;
  void put(const std::string& hash, const std::string& arch, int nvrtc_version,
           const std::vector<char>& cubin, const std::string& kernel_name) override;

 private:
  std::shared_ptr<cache::CacheStack> stack_;
  Log log_;
  std::atomic<bool> put_failed_{false}, get_failed_{false};
};

// The cache a Runtime uses by default: cache::CacheStack::from_environment(),
// or nullptr with LNTUNE_CACHE=off. A cache that cannot be opened is a
// warning on `log` and no cache, never an error.
std::shared_ptr<cache::CacheStack> cache_stack_from_environment(const Log& log);

}  // namespace lntune::rt
