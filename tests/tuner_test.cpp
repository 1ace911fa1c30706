// The tuner's GPU-free parts (ctest label "cpu"): statistics, the stop rule,
// the search over a fake bench (pruning, the correctness gate, failures,
// budget), targets and resume against a temporary cache, records, the cache
// binding's selection rule, the compile pool (NVRTC needs no GPU), reports.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "temp_dir.hpp"
#include "cache/cache.hpp"
#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/selector.hpp"
#include "tuner/compile_pool.hpp"
#include "tuner/report.hpp"
#include "tuner/search.hpp"
#include "tuner/stats.hpp"
#include "tuner/tuner.hpp"

namespace {

namespace fs = std::filesystem;
using namespace lntune;
using namespace lntune::tune;

using lntune::testing::TempDir;

// ------------------------------------------------------------ statistics
TEST(Stats, QuantilesInterpolateLinearly) {
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.2), 1.6);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.8), 3.4);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.3), 7);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0), 1);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 1), 4);
  EXPECT_THROW(quantile({}, 0.5), Error);
  EXPECT_THROW(quantile({1}, 1.5), Error);
}

TEST(Stats, BinomialCdf) {
  EXPECT_DOUBLE_EQ(binomial_half_cdf(10, 0), 1.0 / 1024);
  EXPECT_NEAR(binomial_half_cdf(10, 1), 11.0 / 1024, 1e-15);
  EXPECT_NEAR(binomial_half_cdf(4, 2), 11.0 / 16, 1e-15);
  EXPECT_DOUBLE_EQ(binomial_half_cdf(10, 10), 1.0);
  EXPECT_NEAR(binomial_half_cdf(2000, 1000), 0.5 + 0.5 * 0.017839, 1e-4);  // symmetric: (1 + P(B = n/2)) / 2
}

TEST(Stats, MedianConfidenceIntervalFromOrderStatistics) {
  // Too few samples for 95%: P(all above the median) = 1/32 > 2.5%.
  const Interval five = median_ci({1, 2, 3, 4, 5});
  EXPECT_FALSE(five.valid);
  EXPECT_EQ(five.lo, 1);
  EXPECT_EQ(five.hi, 5);
  // n = 6: [min, max] with coverage 1 - 2/64.
  const Interval six = median_ci({6, 5, 4, 3, 2, 1});
  EXPECT_TRUE(six.valid);
  EXPECT_EQ(six.lo, 1);
  EXPECT_EQ(six.hi, 6);
  EXPECT_NEAR(six.coverage, 1 - 2.0 / 64, 1e-12);
  // n = 100: the textbook interval [x(40), x(61)] (1-based), coverage 0.9648.
  std::vector<double> v(100);
  std::iota(v.begin(), v.end(), 1.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(7));
  const Interval hundred = median_ci(v);
  EXPECT_TRUE(hundred.valid);
  EXPECT_EQ(hundred.lo, 40);
  EXPECT_EQ(hundred.hi, 61);
  EXPECT_NEAR(hundred.coverage, 0.9648, 1e-4);
  EXPECT_GE(hundred.coverage, 0.95);
}

TEST(Stats, CoverageIsHonest) {
  // For a skewed distribution the interval holds the true median at least
  // 95% of the time.
  std::mt19937_64 g(1);
  std::exponential_distribution<double> e(1.0);
  const double true_median = std::log(2.0);
  int hits = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> s(30);
    for (double& x : s) x = e(g);
    const Interval ci = median_ci(s);
    hits += ci.lo <= true_median && true_median <= ci.hi;
  }
  EXPECT_GE(hits, static_cast<int>(0.94 * trials));
}

TEST(Stats, SummaryReusesScratch) {
  std::vector<double> scratch;
  scratch.reserve(64);
  const double* before = scratch.data();
  const Summary s = summarize({10, 12, 11, 13, 9, 10, 11, 10, 12, 11}, 0.95, &scratch);
  EXPECT_EQ(scratch.data(), before);  // no reallocation
  EXPECT_EQ(s.n, 10);
  EXPECT_EQ(s.min, 9);
  EXPECT_EQ(s.max, 13);
  EXPECT_DOUBLE_EQ(s.median, 11);
  EXPECT_DOUBLE_EQ(s.mean, 10.9);
  EXPECT_TRUE(s.median_ci.valid);
  EXPECT_NEAR(s.ci_rel_halfwidth(), 1.0 / 11, 1e-12);  // CI [10, 12]
}

// ------------------------------------------------------------ stop rule
TEST(StopRuleTest, Decisions) {
  StopRule rule;
  rule.min_reps = 10;
  rule.max_reps = 50;
  rule.max_seconds = 1.0;
  rule.prune_after = 5;
  rule.prune_ratio = 1.5;
  rule.target_rel_ci = 0.01;
  const std::vector<double> flat(10, 100.0);
  EXPECT_EQ(should_stop({}, 0, {}, rule), StopReason::none);
  EXPECT_EQ(should_stop(std::vector<double>(5, 100.0), 0, {}, rule), StopReason::none);  // < min_reps
  EXPECT_EQ(should_stop(flat, 0, {}, rule), StopReason::converged);
  // Prune after 5 when the median is > 1.5x the best, not at 1.4x, not at 4 reps.
  EXPECT_EQ(should_stop(std::vector<double>(5, 160.0), 0, 100.0, rule), StopReason::pruned);
  EXPECT_EQ(should_stop(std::vector<double>(4, 160.0), 0, 100.0, rule), StopReason::none);
  EXPECT_EQ(should_stop(std::vector<double>(5, 140.0), 0, 100.0, rule), StopReason::none);
  // Noisy samples: not converged before max_reps, then max_reps.
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 50.0 : 150.0);
  EXPECT_EQ(should_stop(noisy, 0, {}, rule), StopReason::none);
  std::vector<double> many;
  for (int i = 0; i < 50; ++i) many.push_back(i % 2 ? 50.0 : 150.0);
  EXPECT_EQ(should_stop(many, 0, {}, rule), StopReason::max_reps);
  EXPECT_EQ(should_stop(noisy, 1.5, {}, rule), StopReason::time_limit);
  EXPECT_EQ(should_stop({1.0, 2.0}, 5.0, {}, rule), StopReason::none);  // time limit needs 3 samples
}

// ------------------------------------------------------------ search
Config cfg(int block, int warps, int rows = 1, int group = 0) { return Config{block, warps, rows, group}; }

// A bench whose behaviour per config is scripted: time in us (constant
// samples), or a failure; records what was called.
class FakeBench : public Bench {
 public:
  struct Script {
    double us = 10;
    bool compile_fails = false, launch_fails = false, wrong = false, fatal = false;
  };
  std::map<int, Script> by_block;  // keyed by block_size
  std::vector<int> prepared, timed, verified;
  StopRule rule;

  FakeBench() {
    rule.min_reps = 10;
    rule.prune_after = 5;
  }
  const Script& script(const Config& c) { return by_block[c.block_size]; }
  void prepare(const Config& c) override {
    prepared.push_back(c.block_size);
    if (script(c).compile_fails) throw rt::CompileError("nvrtc: boom", "log", {}, "k");
  }
  Measurement time(const Config& c, std::optional<double> best) override {
    timed.push_back(c.block_size);
    const Script& s = script(c);
    if (s.fatal) throw FatalError("context lost");
    if (s.launch_fails) throw rt::CudaError("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    // The runner's loop, on constant samples.
    std::vector<double> samples;
    StopReason r = StopReason::none;
    while (r == StopReason::none) {
      samples.push_back(s.us);
      r = should_stop(samples, 0, best, rule);
    }
    return Measurement{summarize(samples), r};
  }
  std::string verify(const Config& c) override {
    verified.push_back(c.block_size);
    return script(c).wrong ? "y: 12 of 4096 elements wrong" : "";
  }
};

TEST(Search, DefaultIsBaselineAndFasterCandidatesAreVerifiedBeforeWinning) {
  FakeBench b;
  b.by_block[1] = {10};   // default
  b.by_block[2] = {12};   // slower: not verified
  b.by_block[3] = {20};   // > 1.5x: pruned after 5 reps
  b.by_block[4] = {8};    // faster: verified, wins
  b.by_block[5] = {9};    // faster than the default, slower than 4: not verified
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1), cfg(1, 1), cfg(3, 1), cfg(4, 1), cfg(5, 1)});
  ASSERT_EQ(o.candidates.size(), 5u);  // the default appears once, first
  EXPECT_TRUE(o.candidates[0].is_default);
  EXPECT_EQ(o.candidates[0].status, Status::ok);
  EXPECT_EQ(o.candidates[1].status, Status::slower);
  EXPECT_EQ(o.candidates[2].status, Status::pruned);
  EXPECT_EQ(o.candidates[2].timing->stats.n, 5);
  EXPECT_EQ(o.candidates[3].status, Status::ok);
  EXPECT_EQ(o.candidates[4].status, Status::slower);
  ASSERT_TRUE(o.winner);
  EXPECT_EQ(o.best()->config.block_size, 4);
  EXPECT_EQ(b.verified, (std::vector<int>{1, 4}));
  EXPECT_NEAR(o.speedup(), 10.0 / 8.0, 1e-12);
  EXPECT_FALSE(o.partial);
}

TEST(Search, FailuresAreRecordedAndNeverChosen) {
  FakeBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {1, true};          // compile error
  b.by_block[3] = {1, false, true};   // launch error
  b.by_block[4] = {2, false, false, true};  // fastest but wrong
  b.by_block[5] = {7};
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1), cfg(3, 1), cfg(4, 1), cfg(5, 1)});
  EXPECT_EQ(o.candidates[1].status, Status::compile_error);
  EXPECT_NE(o.candidates[1].message.find("nvrtc: boom"), std::string::npos);
  EXPECT_EQ(o.candidates[2].status, Status::launch_error);
  EXPECT_NE(o.candidates[2].message.find("OUT_OF_RESOURCES"), std::string::npos);
  EXPECT_EQ(o.candidates[3].status, Status::wrong);
  EXPECT_NE(o.candidates[3].message.find("elements wrong"), std::string::npos);
  EXPECT_EQ(o.candidates[4].status, Status::ok);
  EXPECT_EQ(o.best()->config.block_size, 5);
  // A compile error is never timed.
  EXPECT_EQ(std::count(b.timed.begin(), b.timed.end(), 2), 0);
}

TEST(Search, WrongDefaultLeavesTheFirstCorrectCandidateToWin) {
  FakeBench b;
  b.by_block[1] = {10, false, false, true};
  b.by_block[2] = {30};
  b.by_block[3] = {20};
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1), cfg(3, 1)});
  EXPECT_EQ(o.candidates[0].status, Status::wrong);
  EXPECT_EQ(o.candidates[1].status, Status::ok);  // no best yet: verified
  EXPECT_EQ(o.candidates[2].status, Status::ok);
  EXPECT_EQ(o.best()->config.block_size, 3);
  EXPECT_NEAR(o.speedup(), 10.0 / 20.0, 1e-12);  // vs the (wrong) default's time
}

TEST(Search, NothingCorrectMeansNoWinner) {
  FakeBench b;
  b.by_block[1] = {10, true};
  b.by_block[2] = {10, false, false, true};
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1)});
  EXPECT_FALSE(o.winner);
  EXPECT_EQ(o.best(), nullptr);
  EXPECT_EQ(o.speedup(), 0);
}

TEST(Search, BudgetStopsAndKeepsTheBestSoFar) {
  FakeBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {5};
  b.by_block[3] = {1};
  int calls = 0;
  SearchOptions so;
  so.out_of_time = [&calls] { return ++calls > 1; };  // spent after one more candidate
  std::vector<std::size_t> reported;
  so.on_result = [&](std::size_t i, const CandidateResult&) { reported.push_back(i); };
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1), cfg(3, 1)}, so);
  EXPECT_TRUE(o.partial);
  EXPECT_EQ(o.candidates[1].status, Status::ok);
  EXPECT_EQ(o.candidates[2].status, Status::skipped);
  EXPECT_EQ(o.best()->config.block_size, 2);
  EXPECT_EQ(reported, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(Search, FatalErrorPropagates) {
  FakeBench b;
  b.by_block[1] = {10};
  b.by_block[2].fatal = true;
  EXPECT_THROW(search(b, cfg(1, 1), {cfg(2, 1)}), FatalError);
}

// ------------------------------------------------------------ targets, resume, records
const cache::GpuId kGpu{"Test GPU", 9, 0, 132};

rt::DeviceInfo test_device() {
  rt::DeviceInfo d;
  d.name = kGpu.name;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 50 << 20;
  d.driver_version = 12040;
  return d;
}

TEST(Targets, CrossProductInOrder) {
  const auto t = make_targets({1024, 4096}, {4096}, {DType::f16, DType::bf16}, {Kernel::fwd, Kernel::bwd_dx});
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t[0].traits.kernel, Kernel::fwd);
  EXPECT_EQ(t[0].traits.x_dtype, DType::f16);
  EXPECT_EQ(t[0].traits.w_dtype, DType::f16);
  EXPECT_EQ(t[0].n, 1024);
  EXPECT_EQ(t[1].n, 4096);
  EXPECT_EQ(t[2].traits.x_dtype, DType::bf16);
  EXPECT_EQ(t[4].traits.kernel, Kernel::bwd_dx);
  const auto w = make_targets({8}, {8}, {DType::bf16}, {Kernel::fwd}, DType::f32, true, false);
  EXPECT_EQ(w[0].traits.w_dtype, DType::f32);
  EXPECT_FALSE(w[0].traits.has_bias);
  EXPECT_THROW(make_targets({}, {1}, {DType::f32}, {Kernel::fwd}), Error);
  EXPECT_THROW(make_targets({0}, {1}, {DType::f32}, {Kernel::fwd}), Error);
  EXPECT_THROW(make_targets({8}, {1}, {DType::f32}, {Kernel::bwd_dwdb}), Error);
}

cache::TuneRecord sample_record(std::int64_t n, int bucket, const std::string& origin, Config c = cfg(4096, 8)) {
  cache::TuneRecord r;
  r.key.gpu = kGpu;
  r.key.traits = Traits{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  r.key.n = n;
  r.key.m_bucket = bucket;
  r.config = c;
  r.timing = {10, 9, 11, 50};
  r.gbps = 1000;
  r.copy_gbps = 3000;
  r.default_median_us = 12;
  r.prov = make_provenance(12040, 12040, origin == kOriginPartial);
  r.prov.origin = origin;
  return r;
}

TEST(Resume, CompleteRecordsAreSkippedPartialOnesAreNot) {
  TempDir tmp;
  cache::Database db = cache::Database::open(tmp / "c.db", cache::Database::Mode::read_write_create);
  const auto done = sample_record(4096, 4, kOriginTuned);
  const auto partial = sample_record(8192, 4, kOriginPartial);
  db.upsert(done);
  db.upsert(partial);
  EXPECT_TRUE(is_tuned(db, done.key));
  EXPECT_FALSE(is_tuned(db, partial.key));
  // A record measured with other kernel templates is stale.
  auto stale = sample_record(2048, 4, kOriginTuned);
  stale.prov.template_hash = "0000000000000000";
  db.upsert(stale);
  EXPECT_FALSE(is_tuned(db, stale.key));
  cache::TuneKey other = done.key;
  other.n = 2048;
  EXPECT_FALSE(is_tuned(db, other));
  other = done.key;
  other.m_bucket = 3;
  EXPECT_FALSE(is_tuned(db, other));
  // The key the tuner computes for a device matches the stored one.
  EXPECT_EQ(rt::tune_key(test_device(), done.key.traits, 4096, 4096), done.key);
}

TEST(TuneRecords, BuiltFromTheWinnerWithProvenance) {
  FakeBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {8};
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1)});
  cache::TuneKey key = sample_record(4096, 4, kOriginTuned).key;
  const auto prov = make_provenance(12040, 12050, false);
  const cache::TuneRecord r = make_record(key, o, 8e6, 3000, prov);
  EXPECT_EQ(r.config, cfg(2, 1));
  EXPECT_DOUBLE_EQ(r.timing.median_us, 8);
  EXPECT_DOUBLE_EQ(r.gbps, 8e6 / 8e-6 / 1e9);  // 1000 GB/s
  EXPECT_DOUBLE_EQ(r.copy_gbps, 3000);
  EXPECT_DOUBLE_EQ(r.default_median_us, 10);
  EXPECT_EQ(r.prov.origin, "tuned");
  EXPECT_EQ(r.prov.nvrtc_version, 12040);
  EXPECT_EQ(r.prov.driver_version, 12050);
  EXPECT_EQ(r.prov.template_hash, gen::hex(gen::templates_hash()));
  EXPECT_EQ(r.prov.lntune_version, version());
  EXPECT_EQ(r.prov.tuned_at.size(), 20u);  // 2024-05-01T12:00:00Z
  EXPECT_EQ(make_provenance(1, 1, true).origin, "tuned-partial");
  // Stored and read back unchanged.
  TempDir tmp;
  cache::Database db = cache::Database::open(tmp / "c.db", cache::Database::Mode::read_write_create);
  db.upsert(r);
  EXPECT_EQ(*db.find(key), r);
}

TEST(Buckets, RepresentativeRowsFallInTheirBucket) {
  for (int sm : {1, 8, 108, 132, 144})
    for (int b = 0; b < cache::kNumMBuckets; ++b) {
      if (cache::m_bucket(1, sm) > b) continue;  // no M >= 1 falls in it (tiny GPUs)
      EXPECT_EQ(cache::m_bucket(representative_m(b, sm), sm), b) << "sm " << sm << " bucket " << b;
    }
}

// ------------------------------------------------------------ cache binding
TEST(CacheBinding, ExactThenNearestThenNothing) {
  TempDir tmp;
  const std::string path = tmp / "c.db";
  {
    cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
    db.upsert(sample_record(4096, 4, kOriginTuned, cfg(4096, 8)));
    db.upsert(sample_record(1024, 4, kOriginTuned, cfg(1024, 2, 2)));
  }
  auto stack = std::make_shared<cache::CacheStack>(path, std::vector<std::string>{});
  rt::CacheConfigSource src(stack);
  const rt::DeviceInfo dev = test_device();
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  const std::int64_t M = 4096;  // bucket 4 on 132 SMs
  ASSERT_EQ(cache::m_bucket(M, 132), 4);

  auto exact = src.select(dev, t, 4096, M);
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->reason, "tuned (exact)");
  EXPECT_EQ(exact->config, cfg(4096, 8));

  // N = 6144: nearest on a log scale is 4096; the single-tile config is
  // carried over to hold the whole row: block 8192, same 16 items/thread.
  auto near = src.select(dev, t, 6144, M);
  ASSERT_TRUE(near);
  EXPECT_EQ(near->reason, "tuned (nearest N=4096)");
  EXPECT_EQ(near->config.block_size, 8192);
  EXPECT_EQ(near->config.num_warps, 16);
  EXPECT_EQ(near->config.rows_per_cta, 1);
  EXPECT_NO_THROW(gen::make_instance(t, near->config, 6144, 8));

  auto near_small = src.select(dev, t, 1500, M);
  ASSERT_TRUE(near_small);
  EXPECT_EQ(near_small->reason, "tuned (nearest N=1024)");

  // Other traits, M bucket or GPU: nothing.
  Traits f16 = t;
  f16.x_dtype = f16.w_dtype = DType::f16;
  EXPECT_FALSE(src.select(dev, f16, 4096, M));
  EXPECT_FALSE(src.select(dev, t, 4096, 64));
  rt::DeviceInfo other = dev;
  other.sm_count = 114;
  EXPECT_FALSE(src.select(other, t, 4096, M));
}

TEST(CacheBinding, AdaptConfigKeepsTheShape) {
  // Single tile (block >= N): rescaled with the row.
  EXPECT_EQ(rt::adapt_config(cfg(4096, 8), Kernel::fwd, 4096, 2000), cfg(2048, 4));
  EXPECT_EQ(rt::adapt_config(cfg(1024, 2, 2), Kernel::fwd, 1024, 3000), cfg(4096, 8, 2));
  // A CTA of 1024 threads holds half the items (registers): fewer rows.
  EXPECT_EQ(rt::adapt_config(cfg(1024, 16, 16), Kernel::fwd, 1024, 1536), cfg(2048, 16, 8));
  // Tiled: kept.
  EXPECT_EQ(rt::adapt_config(cfg(2048, 8), Kernel::fwd, 16384, 12288), cfg(2048, 8));
  // dW/dB reduction does not depend on N.
  EXPECT_EQ(rt::adapt_config(cfg(64, 8), Kernel::bwd_dwdb, 1024, 8192), cfg(64, 8));
  // group_size_m and clusters are kept.
  Config cl = cfg(4096, 8, 1, 132);
  cl.cluster_size = 2;
  Config want = cfg(8192, 16, 1, 132);
  want.cluster_size = 2;
  EXPECT_EQ(rt::adapt_config(cl, Kernel::bwd_dx, 8192, 16384), want);
}

TEST(CacheBinding, BinaryStoreRoundTripAndNeverThrows) {
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "sub/c.db", std::vector<std::string>{});
  rt::CacheBinaryStore store(stack);
  EXPECT_FALSE(store.get("abc", "sm_90", 12040));
  store.put("abc", "sm_90", 12040, {'c', 'u', 'b'}, "k");
  EXPECT_EQ(*store.get("abc", "sm_90", 12040), (std::vector<char>{'c', 'u', 'b'}));
  EXPECT_FALSE(store.get("abc", "sm_80", 12040));
  // No user cache: puts are dropped, gets miss.
  rt::CacheBinaryStore none(std::make_shared<cache::CacheStack>(std::nullopt, std::vector<std::string>{}));
  EXPECT_NO_THROW(none.put("abc", "sm_90", 1, {'x'}, "k"));
  EXPECT_FALSE(none.get("abc", "sm_90", 1));
  // A user cache that cannot be created: a warning, no exception.
  rt::CacheBinaryStore bad(std::make_shared<cache::CacheStack>(std::string("/proc/lntune/x.db"), std::vector<std::string>{}));
  EXPECT_NO_THROW(bad.put("abc", "sm_90", 1, {'x'}, "k"));
}

TEST(CacheBinding, InstalledSourceAndSetTuned) {
  TempDir tmp;
  const std::string path = tmp / "c.db";
  {
    cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
    db.upsert(sample_record(4096, 4, kOriginTuned, cfg(4096, 8)));
  }
  rt::install_cache(std::make_shared<cache::CacheStack>(path, std::vector<std::string>{}));
  rt::install_default_cache();  // keeps what install_cache installed
  const rt::DeviceInfo dev = test_device();
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  EXPECT_EQ(rt::select(dev, t, 4096, 4096, 8).reason, "tuned (exact)");
  const auto epoch = rt::selection_epoch();
  rt::set_tuned(false);
  EXPECT_GT(rt::selection_epoch(), epoch);  // memoised plans are dropped
  EXPECT_EQ(rt::config_source(), nullptr);
  EXPECT_EQ(rt::select(dev, t, 4096, 4096, 8).reason, "default heuristic");
  rt::set_tuned(true);
  EXPECT_EQ(rt::select(dev, t, 4096, 4096, 8).reason, "tuned (exact)");
  rt::install_cache(nullptr);
  EXPECT_EQ(rt::select(dev, t, 4096, 4096, 8).reason, "default heuristic");
}

// ------------------------------------------------------------ compile pool
TEST(CompilePoolTest, CompilesOnceIntoTheStoreThenReusesIt) {
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  auto backing = std::make_shared<rt::CacheBinaryStore>(stack);
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  const InstanceKey a = gen::make_instance(t, cfg(1024, 4), 1024, 8);
  const InstanceKey b = gen::make_instance(t, cfg(1024, 2), 1024, 8);
  {
    auto layered = std::make_shared<LayeredBinaryStore>(backing);
    CompilePool pool("sm_90", layered, 2);
    auto fa = pool.submit(a), fb = pool.submit(b), fa2 = pool.submit(a);
    const CompileResult ra = fa.get(), rb = fb.get();
    EXPECT_TRUE(ra.ok) << ra.error;
    EXPECT_TRUE(rb.ok) << rb.error;
    EXPECT_FALSE(ra.from_cache);
    EXPECT_TRUE(fa2.get().ok);
    const CompileStats s = pool.stats();
    EXPECT_EQ(s.compiled, 2u);  // `a` twice: compiled once
    EXPECT_EQ(s.failed, 0u);
    const std::string hash = gen::hex(gen::render(a).hash);
    EXPECT_TRUE(layered->in_memory(hash, "sm_90", rt::nvrtc_version()));
    EXPECT_TRUE(backing->get(hash, "sm_90", rt::nvrtc_version()));
  }
  // A second run finds both in the persistent cache.
  auto layered = std::make_shared<LayeredBinaryStore>(backing);
  CompilePool pool("sm_90", layered, 1);
  EXPECT_TRUE(pool.submit(a).get().from_cache);
  EXPECT_TRUE(pool.submit(b).get().from_cache);
  EXPECT_EQ(pool.stats().compiled, 0u);
  EXPECT_EQ(pool.stats().from_cache, 2u);
}

TEST(CompilePoolTest, FailuresAndCancellationAreResults) {
  auto layered = std::make_shared<LayeredBinaryStore>();
  CompilePool pool("sm_1", layered, 1);  // not an architecture: every compile fails
  const Traits t{Kernel::fwd, DType::f32, DType::f32, true, true};
  const CompileResult r = pool.submit(gen::make_instance(t, cfg(256, 1), 256, 4)).get();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("sm_90"), std::string::npos) << r.error;  // "architecture must look like sm_90"
  pool.cancel();
  EXPECT_EQ(pool.stats().failed, 1u);
}

// ------------------------------------------------------------ reports
TEST(Report, JsonAndConfigs) {
  EXPECT_EQ(records_json({}), "[]\n");
  EXPECT_EQ(json_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(short_config(cfg(4096, 8)), "b4096 w8 r1");
  Config c = cfg(4096, 8, 1, 264);
  c.cluster_size = 2;
  EXPECT_EQ(short_config(c), "b4096 w8 r1 g264 c2");
  const std::string j = records_json({sample_record(4096, 4, kOriginTuned)}, nullptr);
  for (const char* part : {"\"n\": 4096", "\"m_bucket\": 4", "\"kernel\": \"fwd\"", "\"x_dtype\": \"bf16\"",
                           "\"block_size\": 4096", "\"median_us\": 10", "\"speedup_vs_default\": 1.2",
                           "\"pct_of_copy\": 33.33333333", "\"origin\": \"tuned\"", "\"name\": \"Test GPU\""})
    EXPECT_NE(j.find(part), std::string::npos) << part << " in " << j;
}

TEST(Report, SummaryTableHasEveryColumn) {
  TuneSummary s;
  s.gpu = kGpu;
  s.copy_gbps = 3000;
  KeyResult k;
  k.key = sample_record(4096, 4, kOriginTuned).key;
  k.m = 4096;
  k.state = KeyResult::State::tuned;
  k.record = sample_record(4096, 4, kOriginTuned);
  s.keys.push_back(k);
  KeyResult f;
  f.key = k.key;
  f.key.n = 8192;
  f.m = 4096;
  f.state = KeyResult::State::failed;
  f.message = "cuMemAlloc: out of memory";
  s.keys.push_back(f);
  std::ostringstream os;
  print_summary(os, s);
  const std::string out = os.str();
  for (const char* part : {"winner", "median", "GB/s", "% copy", "vs default", "b4096 w8 r1", "10.00", "1000", "33.3",
                           "1.20x", "failed: cuMemAlloc: out of memory", "geometric-mean speed-up over the default: 1.200x"})
    EXPECT_NE(out.find(part), std::string::npos) << part << " in\n" << out;
}

}  // namespace
