// The tuner's pure parts (tuner/tuner.hpp): targets, resume against a
// temporary cache, records and their provenance, M buckets.
#include <gtest/gtest.h>

#include "temp_dir.hpp"
#include "generator/instance.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "tuner/device_pool.hpp"
#include "tuner/tuner.hpp"
#include "tuner_test_util.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;
using namespace lntune::testing;

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

TEST(Targets, NormVariants) {
  const auto ln = make_targets({4096}, {4096}, {DType::f16, DType::bf16, DType::f32}, {Kernel::fwd, Kernel::bwd_dx});
  const auto rms = with_variant(ln, Norm::rms, false);
  ASSERT_EQ(rms.size(), ln.size());
  for (const Target& t : rms) {
    EXPECT_EQ(t.traits.norm, Norm::rms);
    EXPECT_FALSE(t.traits.has_bias);  // RMSNorm's usual form
    EXPECT_TRUE(t.traits.has_weight);
    EXPECT_FALSE(t.traits.residual.has_value());
  }
  const auto res = with_variant(ln, Norm::layer, true, DType::f32);
  for (const Target& t : res) {
    EXPECT_EQ(t.traits.norm, Norm::layer);
    EXPECT_TRUE(t.traits.has_bias);
    EXPECT_EQ(t.traits.residual, DType::f32);
  }
  EXPECT_EQ(with_variant(ln, Norm::rms, true)[0].traits.residual, DType::f16);  // the row dtype
  EXPECT_THROW(with_variant(ln, Norm::rms, false, DType::f32), Error);
  // The default grid: LayerNorm as given, then RMSNorm without and with a
  // residual for the fp16 and bf16 targets only.
  const auto grid = default_variant_grid(ln);
  ASSERT_EQ(grid.size(), ln.size() + 2 * 4);
  for (std::size_t i = 0; i < ln.size(); ++i) EXPECT_EQ(grid[i].traits, ln[i].traits);
  int plain = 0, with_residual = 0;
  for (std::size_t i = ln.size(); i < grid.size(); ++i) {
    EXPECT_EQ(grid[i].traits.norm, Norm::rms);
    EXPECT_NE(grid[i].traits.x_dtype, DType::f32);
    (grid[i].traits.residual ? with_residual : plain) += 1;
  }
  EXPECT_EQ(plain, 4);
  EXPECT_EQ(with_residual, 4);
}

TEST(Resume, CompleteRecordsAreSkippedPartialOnesAreNot) {
  TempDir tmp;
  cache::Database db = cache::Database::open(tmp / "c.db", cache::Database::Mode::read_write_create);
  const auto done = sample_record(4096, 4, cache::Origin::tuned);
  const auto partial = sample_record(8192, 4, cache::Origin::partial);
  db.upsert(done);
  db.upsert(partial);
  EXPECT_TRUE(is_tuned(db, done.key));
  EXPECT_FALSE(is_tuned(db, partial.key));
  // A record measured with other kernel templates is stale.
  auto stale = sample_record(2048, 4, cache::Origin::tuned);
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
  cache::TuneKey key = sample_record(4096, 4, cache::Origin::tuned).key;
  const auto prov = make_provenance(12040, 12050, false);
  const cache::TuneRecord r = make_record(key, o, 8e6, 3000, prov);
  EXPECT_EQ(r.config, cfg(2, 1));
  EXPECT_DOUBLE_EQ(r.timing.median_us, 8);
  EXPECT_DOUBLE_EQ(r.gbps, 8e6 / 8e-6 / 1e9);  // 1000 GB/s
  EXPECT_DOUBLE_EQ(r.copy_gbps, 3000);
  EXPECT_DOUBLE_EQ(r.default_median_us, 10);
  EXPECT_EQ(r.prov.origin, cache::Origin::tuned);
  EXPECT_EQ(r.prov.nvrtc_version, 12040);
  EXPECT_EQ(r.prov.driver_version, 12050);
  EXPECT_EQ(r.prov.template_hash, gen::hex(gen::templates_hash()));
  EXPECT_EQ(r.prov.lntune_version, version());
  EXPECT_EQ(r.prov.tuned_at.size(), 20u);  // 2024-05-01T12:00:00Z
  EXPECT_EQ(make_provenance(1, 1, true).origin, cache::Origin::partial);
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


}  // namespace

// The pool's size classes (no GPU needed): at least 4 KiB, else a quarter
// step of the power of two, never more than 25% above the request.
TEST(DevicePool, SizeClassesAreQuarterStepsOfAPowerOfTwo) {
  using tune::DevicePool;
  constexpr std::size_t MB = std::size_t{1} << 20;
  EXPECT_EQ(DevicePool::size_class(1), 4096u);
  EXPECT_EQ(DevicePool::size_class(4096), 4096u);
  EXPECT_EQ(DevicePool::size_class(4097), 5120u);
  EXPECT_EQ(DevicePool::size_class(64 * MB), 64 * MB);
  EXPECT_EQ(DevicePool::size_class(64 * MB + 1), 80 * MB);
  EXPECT_EQ(DevicePool::size_class(100 * MB), 112 * MB);
  EXPECT_EQ(DevicePool::size_class(127 * MB), 128 * MB);
  // 4224 rows of 262144 fp32 columns: 4.125 GiB, class 5 GiB.
  EXPECT_EQ(DevicePool::size_class(std::size_t{4224} * 262144 * 4), std::size_t{5} << 30);
  for (std::size_t b = 4097; b < (std::size_t{1} << 40); b = b * 3 / 2 + 7) {
    const std::size_t c = DevicePool::size_class(b);
    EXPECT_GE(c, b);
    EXPECT_LE(static_cast<double>(c), 1.25 * static_cast<double>(b) + 1);
    EXPECT_EQ(DevicePool::size_class(c), c) << b;
  }
}
