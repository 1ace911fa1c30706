// The SQLite cache bound to the launcher (runtime/cache_binding.hpp): the
// selection rule (exact, nearest, nothing; stale records), config carry-over,
// the binary store.
#include <gtest/gtest.h>

#include "temp_dir.hpp"
#include "generator/instance.hpp"
#include "runtime/cache_binding.hpp"
#include "tuner_test_util.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;
using namespace lntune::testing;

// ------------------------------------------------------------ cache binding
TEST(CacheBinding, ExactThenNearestThenNothing) {
  TempDir tmp;
  const std::string path = tmp / "c.db";
  {
    cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
    db.upsert(sample_record(4096, 4, cache::Origin::tuned, cfg(4096, 8)));
    db.upsert(sample_record(1024, 4, cache::Origin::tuned, cfg(1024, 2, 2)));
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

TEST(CacheBinding, StaleRecordsAreNotUsed) {
  // The one rule the tuner applies too (tune::is_tuned): a record measured
  // with other kernel templates counts as absent.
  TempDir tmp;
  const std::string path = tmp / "c.db";
  auto stale = sample_record(4096, 4, cache::Origin::tuned, cfg(4096, 8));
  stale.prov.template_hash = "0000000000000000";
  EXPECT_TRUE(rt::is_stale(stale));
  EXPECT_FALSE(rt::is_stale(sample_record(4096, 4, cache::Origin::tuned)));
  {
    cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
    db.upsert(stale);
    EXPECT_FALSE(is_tuned(db, stale.key));
  }
  rt::CacheConfigSource src(std::make_shared<cache::CacheStack>(path, std::vector<std::string>{}));
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  EXPECT_FALSE(src.select(test_device(), t, 4096, 4096));  // exact
  EXPECT_FALSE(src.select(test_device(), t, 6144, 4096));  // nearest
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


}  // namespace
