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

  // Other traits or GPU: nothing. (Another M bucket: the nearest-bucket
  // rule, below.)
  Traits f16 = t;
  f16.x_dtype = f16.w_dtype = DType::f16;
  EXPECT_FALSE(src.select(dev, f16, 4096, M));
  rt::DeviceInfo other = dev;
  other.sm_count = 114;
  EXPECT_FALSE(src.select(other, t, 4096, M));
}

TEST(CacheBinding, BucketOrder) {
  EXPECT_EQ(rt::bucket_order(4), (std::vector<int>{4, 5, 3, 2, 1, 0}));
  EXPECT_EQ(rt::bucket_order(2), (std::vector<int>{2, 3, 1, 4, 0, 5}));
  EXPECT_EQ(rt::bucket_order(0), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(rt::bucket_order(5), (std::vector<int>{5}));  // the bandwidth regime borrows from no other bucket
  EXPECT_THROW(rt::bucket_order(-1), lntune::Error);
  EXPECT_THROW(rt::bucket_order(cache::kNumMBuckets), lntune::Error);
}

// Rows in each M bucket on the 132-SM test GPU.
constexpr std::int64_t kRowsIn[cache::kNumMBuckets] = {16, 64, 264, 1056, 4096, 100000};

TEST(CacheBinding, NearestMBucket) {
  for (int b = 0; b < cache::kNumMBuckets; ++b) ASSERT_EQ(cache::m_bucket(kRowsIn[b], 132), b);
  TempDir tmp;
  const std::string path = tmp / "c.db";
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  // Bucket 2: N = 4096; bucket 4: N = 1024 and 16384; bucket 5: N = 4096.
  // Each record's config is told apart by its num_warps / rows_per_cta.
  {
    cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
    db.upsert(sample_record(4096, 2, cache::Origin::tuned, cfg(4096, 4, 1)));
    db.upsert(sample_record(1024, 4, cache::Origin::tuned, cfg(1024, 2, 2)));
    db.upsert(sample_record(16384, 4, cache::Origin::tuned, cfg(2048, 8, 1)));  // tiled
    db.upsert(sample_record(4096, 5, cache::Origin::tuned, cfg(4096, 16, 1)));
  }
  rt::CacheConfigSource src(std::make_shared<cache::CacheStack>(path, std::vector<std::string>{}));
  const rt::DeviceInfo dev = test_device();
  auto pick = [&](const Traits& tr, std::int64_t n, int bucket) { return src.select(dev, tr, n, kRowsIn[bucket]); };

  // The own bucket wins, even with an exact N in another bucket: bucket 4
  // has no N = 4096, its nearest is 16384 (log distance 2 against 2: the
  // larger), not bucket 5's or bucket 2's 4096.
  auto own = pick(t, 4096, 4);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->reason, "tuned (nearest N=16384)");
  EXPECT_EQ(own->config, cfg(2048, 8, 1));
  EXPECT_EQ(pick(t, 4096, 5)->reason, "tuned (exact)");
  EXPECT_EQ(pick(t, 4096, 2)->reason, "tuned (exact)");

  // Bucket 3 has nothing: buckets 4 and 2 are both at distance 1; the larger
  // (4) wins, with its nearest N.
  auto b3 = pick(t, 1024, 3);
  ASSERT_TRUE(b3);
  EXPECT_EQ(b3->reason, "tuned (M bucket 4)");
  EXPECT_EQ(b3->config, cfg(1024, 2, 2));
  auto b3n = pick(t, 4096, 3);
  ASSERT_TRUE(b3n);
  EXPECT_EQ(b3n->reason, "tuned (M bucket 4, nearest N=16384)");
  // Bucket 1: bucket 2 (distance 1) before 0 (empty) and 4.
  auto b1 = pick(t, 4096, 1);
  ASSERT_TRUE(b1);
  EXPECT_EQ(b1->reason, "tuned (M bucket 2)");
  EXPECT_EQ(b1->config, cfg(4096, 4, 1));
  // Bucket 0: bucket 1 is empty, then bucket 2 (distance 2).
  EXPECT_EQ(pick(t, 4096, 0)->reason, "tuned (M bucket 2)");
  // Carried over to this N in the other bucket as in the own bucket: the
  // single-tile 4096 config of bucket 2 holds a row of 6000 in 8192.
  auto b1a = pick(t, 6000, 1);
  ASSERT_TRUE(b1a);
  EXPECT_EQ(b1a->reason, "tuned (M bucket 2, nearest N=4096)");
  EXPECT_EQ(b1a->config, cfg(8192, 8, 1));
  // The same answer every time (deterministic), and for every M of a bucket.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(src.select(dev, t, 1024, 600)->reason, "tuned (M bucket 4)");
  EXPECT_EQ(src.select(dev, t, 1024, 2111)->reason, "tuned (M bucket 4)");

  // Other variants, dtypes or weight/bias never borrow these records, in any
  // bucket.
  auto variant = [&](auto change) {
    Traits v = t;
    change(v);
    return v;
  };
  const Traits others[] = {
      variant([](Traits& v) { v.norm = Norm::rms; }),
      variant([](Traits& v) { v.residual = DType::bf16; }),
      variant([](Traits& v) { v.zero_centered = true; }),
      variant([](Traits& v) { v.y_dtype = DType::f32; }),
      variant([](Traits& v) { v.x_dtype = v.w_dtype = DType::f16; }),
      variant([](Traits& v) { v.w_dtype = DType::f32; }),
      variant([](Traits& v) { v.has_bias = false; }),
      variant([](Traits& v) { v.kernel = Kernel::bwd_dx; }),
  };
  for (const Traits& o : others)
    for (int b = 0; b < cache::kNumMBuckets; ++b)
      EXPECT_FALSE(pick(o, 4096, b)) << o << " bucket " << b;
}

TEST(CacheBinding, NearestMBucketAcrossLayers) {
  // The user cache has bucket 2, a shipped cache bucket 3: a call in bucket
  // 3 takes the shipped record (its own bucket), one in bucket 1 the user's.
  TempDir tmp;
  const std::string user = tmp / "user.db", shipped = tmp / "shipped.db";
  {
    cache::Database u = cache::Database::open(user, cache::Database::Mode::read_write_create);
    u.upsert(sample_record(4096, 2, cache::Origin::tuned, cfg(4096, 4, 1)));
    cache::Database s = cache::Database::open(shipped, cache::Database::Mode::read_write_create);
    s.upsert(sample_record(4096, 3, cache::Origin::tuned, cfg(4096, 8, 1)));
  }
  rt::CacheConfigSource src(std::make_shared<cache::CacheStack>(user, std::vector<std::string>{shipped}));
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  auto b3 = src.select(test_device(), t, 4096, kRowsIn[3]);
  ASSERT_TRUE(b3);
  EXPECT_EQ(b3->reason, "tuned (exact)");
  EXPECT_EQ(b3->config, cfg(4096, 8, 1));
  EXPECT_EQ(src.select(test_device(), t, 4096, kRowsIn[1])->config, cfg(4096, 4, 1));
  // Bucket 1 has nothing: 2 (the user's) is nearer than 3.
  EXPECT_EQ(src.select(test_device(), t, 4096, kRowsIn[1])->reason, "tuned (M bucket 2)");
  // Bucket 5 (the bandwidth regime) never borrows another bucket's record.
  EXPECT_FALSE(src.select(test_device(), t, 4096, kRowsIn[5]));
}

TEST(CacheBinding, BandwidthRegimeTakesOnlyItsOwnNearRecords) {
  EXPECT_TRUE(rt::near_enough(1024, 1024));
  EXPECT_TRUE(rt::near_enough(1024, 1536));
  EXPECT_TRUE(rt::near_enough(1536, 1024));
  EXPECT_FALSE(rt::near_enough(1024, 1537));
  EXPECT_FALSE(rt::near_enough(1024, 2048));
  EXPECT_FALSE(rt::near_enough(256, 512));
  EXPECT_THROW(rt::near_enough(0, 512), lntune::Error);
  TempDir tmp;
  const std::string path = tmp / "c.db";
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};  // sample_record's
  // The bandwidth bucket (5) tuned at N = 1024 and 4096 (the default grid's
  // points); the training bucket (4) at every N asked below.
  {
    cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
    db.upsert(sample_record(1024, 5, cache::Origin::tuned, cfg(1024, 4, 2, 528)));
    db.upsert(sample_record(4096, 5, cache::Origin::tuned, cfg(4096, 8, 1, 264)));
    for (std::int64_t n : {512, 1024, 1280, 2048, 4096, 8192})
      db.upsert(sample_record(n, 4, cache::Origin::tuned, cfg(1024, 4, 2, 264)));
  }
  rt::CacheConfigSource src(std::make_shared<cache::CacheStack>(path, std::vector<std::string>{}));
  const rt::DeviceInfo dev = test_device();
  const std::int64_t big = kRowsIn[5];
  EXPECT_EQ(src.select(dev, t, 1024, big)->reason, "tuned (exact)");
  EXPECT_EQ(src.select(dev, t, 1024, big)->config, cfg(1024, 4, 2, 528));
  // Within 1.5x of a tuned N of its own bucket: carried over as elsewhere.
  auto near = src.select(dev, t, 1280, big);
  ASSERT_TRUE(near);
  EXPECT_EQ(near->reason, "tuned (nearest N=1024)");
  EXPECT_EQ(near->config.group_size_m, 528);
  EXPECT_EQ(src.select(dev, t, 5000, big)->reason, "tuned (nearest N=4096)");
  // Farther (N = 512, 2048, 8192 are twice a tuned N): the default
  // heuristic, not the own bucket's far record nor bucket 4's exact one.
  for (std::int64_t n : {512, 2048, 8192, 262144}) EXPECT_FALSE(src.select(dev, t, n, big)) << "N=" << n;
  // Other buckets keep the nearest-bucket rule (bucket 3 borrows bucket 4's).
  EXPECT_EQ(src.select(dev, t, 2048, kRowsIn[3])->reason, "tuned (M bucket 4)");
  EXPECT_EQ(src.select(dev, t, 2048, kRowsIn[4])->reason, "tuned (exact)");
}

TEST(CacheBinding, StaleBucketIsPassedOver) {
  // A bucket whose nearest record is stale counts as empty: the next bucket
  // in bucket_order serves the call.
  TempDir tmp;
  const std::string path = tmp / "c.db";
  auto stale = sample_record(4096, 4, cache::Origin::tuned, cfg(4096, 8));
  stale.prov.template_hash = "0000000000000000";
  {
    cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
    db.upsert(stale);
    db.upsert(sample_record(4096, 3, cache::Origin::tuned, cfg(4096, 4, 1)));
  }
  rt::CacheConfigSource src(std::make_shared<cache::CacheStack>(path, std::vector<std::string>{}));
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  auto r = src.select(test_device(), t, 4096, kRowsIn[4]);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, "tuned (M bucket 3)");
  EXPECT_EQ(r->config, cfg(4096, 4, 1));
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
  // A tile of other than a power of two: the same threads, N rounded up to
  // the tile's grain (5120 in 8 warps: 20 elements a thread, grain 4 x
  // 256), and an instance for the new N; where that grain reaches the
  // power of two, the rule above.
  EXPECT_EQ(rt::adapt_config(cfg(5120, 8), Kernel::fwd, 5120, 4700), cfg(5120, 8));
  EXPECT_EQ(rt::adapt_config(cfg(5120, 8), Kernel::fwd, 5120, 5800), cfg(6144, 8));
  EXPECT_EQ(rt::adapt_config(cfg(10240, 8), Kernel::fwd, 9216, 11000), cfg(12288, 8));
  EXPECT_EQ(rt::adapt_config(cfg(6144, 16), Kernel::bwd_dx, 4608, 5000), cfg(6144, 16));
  EXPECT_EQ(rt::adapt_config(cfg(5120, 8), Kernel::fwd, 5120, 7800), cfg(8192, 8)) << "at most next_pow2(N)";
  {
    const Traits ft{Kernel::fwd, DType::bf16, DType::bf16, true, true};
    const Config a = rt::adapt_config(cfg(5120, 8), Kernel::fwd, 5120, 5800);
    EXPECT_EQ(gen::make_instance(ft, a, 5800, 8).vec, 8) << "6144 in 8 warps: 16-byte accesses";
    const Traits bt{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true};
    EXPECT_EQ(gen::make_instance(bt, rt::adapt_config(cfg(6144, 16), Kernel::bwd_dx, 4608, 6800), 6800, 8).block_size,
              8192);
    EXPECT_THROW(gen::make_instance(bt, rt::adapt_config(cfg(6144, 16), Kernel::bwd_dx, 4608, 9000), 9000, 8), Error)
        << "10240 in 16 warps is past the backward's 16 elements a thread: the caller's default";
  }
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

// ------------------------------------------------------------ default selection
// The default heuristic's shared-memory kernels are sized by the row dtype;
// a variant with wider slabs gets the next shared-memory config that fits
// it, else the register kernels.
namespace {
rt::DeviceInfo sm90() {
  rt::DeviceInfo d = lntune::testing::test_device();
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  return d;
}
}  // namespace

TEST(DefaultSelection, SharedMemoryDefaultsFitEveryVariant) {
  const rt::DeviceInfo dev = sm90();
  // Plain bf16 backward at N = 65536: the wide kernel with 3 stages.
  const Traits plain{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true};
  const Config c = rt::default_selection(dev, plain, 65536, 4096).config;
  EXPECT_TRUE(gen::is_wide_bwd(Kernel::bwd_dx, c)) << to_string(c);
  EXPECT_EQ(c.rows_per_cta, 3);
  // Rows not 16-byte aligned (vec 1): the shared-memory kernels' bulk
  // copies cannot serve them; the register kernels do.
  // fp32 rows of 256K columns: no stages of x and dy fit; the wide kernel
  // staging x alone (2 stages of 16384-column slabs in clusters of 16).
  const Traits f32{Kernel::bwd_dx, DType::f32, DType::f32, true, true};
  const Config w32 = rt::default_selection(dev, f32, 262144, 512).config;
  ASSERT_TRUE(gen::is_wide_bwd(Kernel::bwd_dx, w32)) << to_string(w32);
  EXPECT_FALSE(gen::wide_stages_dy(gen::make_instance(f32, w32, 262144, 4))) << to_string(w32);
  EXPECT_EQ(w32.cluster_size, 16);
  EXPECT_EQ(w32.rows_per_cta, 2);
  EXPECT_EQ(w32.num_warps, 32);
  // ... while bf16 there keeps stages of x and dy.
  const Config w16 = rt::default_selection(dev, plain, 262144, 1024).config;
  EXPECT_TRUE(gen::wide_stages_dy(gen::make_instance(plain, w16, 262144, 8))) << to_string(w16);
  const Config r1 = rt::default_selection(dev, plain, 65536, 4096, 1).config;
  EXPECT_FALSE(gen::is_wide_bwd(Kernel::bwd_dx, r1)) << to_string(r1);
  EXPECT_NO_THROW(gen::make_instance(plain, r1, 65536, 1));
  const Traits fwd{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  const Config f1 = rt::default_selection(dev, fwd, 65536, 4096, 1).config;
  EXPECT_NO_THROW(gen::make_instance(fwd, f1, 65536, 1)) << to_string(f1);
  // A variant whose wider slabs the first pick does not fit takes the next
  // shared-memory config that fits it, not the register kernels: bf16 x with
  // an fp32 residual and an fp32 weight at N = 32768 (16384-column slabs of
  // fp32 z and bf16 dy, 2 stages and the weight, exceed 227 KB) ...
  Traits wide_res{Kernel::bwd_dx, DType::bf16, DType::f32, true, true};
  wide_res.residual = DType::f32;
  const Config wr = rt::default_selection(dev, wide_res, 32768, 4096).config;
  EXPECT_EQ(rt::default_selection(dev, plain, 32768, 4096).config.block_size, 16384);
  EXPECT_TRUE(gen::is_wide_bwd(Kernel::bwd_dx, wr)) << to_string(wr);
  EXPECT_LT(wr.block_size, 16384) << to_string(wr);
  // ... and fp32 x with an fp32 residual at N = 32768 (the wide forward's
  // 16384-column slabs of x and the residual do not fit: 4096-column slabs
  // in clusters of 8), and at N = 262144 (x's stages alone: the residual read
  // from global memory).
  Traits fwd_res{Kernel::fwd, DType::f32, DType::f32, true, true};
  fwd_res.residual = DType::f32;
  const Config fr = rt::default_selection(dev, fwd_res, 32768, 4096).config;
  EXPECT_TRUE(gen::is_wide_fwd(Kernel::fwd, fr)) << to_string(fr);
  EXPECT_EQ(fr.block_size, 4096) << to_string(fr);
  const Config fr256 = rt::default_selection(dev, fwd_res, 262144, 512).config;
  EXPECT_TRUE(gen::is_wide_fwd(Kernel::fwd, fr256)) << to_string(fr256);
  EXPECT_NE(gen::wide_fwd_residual(gen::make_instance(fwd_res, fr256, 262144, 4)), gen::WideResidual::staged)
      << to_string(fr256);
  // bf16 x beside an fp32 residual (not measured with the wide forward): a
  // slab per CTA.
  Traits fwd_mixed{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  fwd_mixed.residual = DType::f32;
  const Config fm = rt::default_selection(dev, fwd_mixed, 262144, 1024).config;
  EXPECT_TRUE(gen::forward_in_smem(fm, 262144)) << to_string(fm);
  // The call's residual reaches the heuristic: its forward at N = 16384
  // runs 8192-column tiles in 32 warps, and its wide backward on
  // 16384-column slices runs 32 warps.
  Traits fwd_bres{Kernel::fwd, DType::bf16, DType::bf16, true, false};
  fwd_bres.norm = Norm::rms;
  fwd_bres.residual = DType::bf16;
  EXPECT_EQ(rt::default_selection(dev, fwd_bres, 16384, 16384).config.num_warps, 32);
  const Config f16k = rt::default_selection(dev, fwd, 16384, 16384).config;  // without: the row in shared memory
  EXPECT_TRUE(gen::forward_in_smem(f16k, 16384)) << to_string(f16k);
  EXPECT_EQ(f16k.num_warps, 8);
  Traits bwd_bres = fwd_bres;
  bwd_bres.kernel = Kernel::bwd_dx;
  EXPECT_EQ(rt::default_selection(dev, bwd_bres, 32768, 8192).config.num_warps, 32);
  EXPECT_EQ(rt::default_selection(dev, plain, 32768, 8192).config.num_warps, 16);
  // Every variant's forward and backward default is a valid instance, for
  // long rows in each dtype, at the widest and the narrowest vector width.
  for (DType x : {DType::f16, DType::bf16, DType::f32})
    for (std::optional<DType> res : {std::optional<DType>{}, std::optional<DType>{DType::f32}, std::optional<DType>{x}})
      for (std::optional<DType> y : {std::optional<DType>{}, std::optional<DType>{DType::f32}})
        for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
          for (std::int64_t n : {12288, 16384, 16385, 40000, 65536, 131072, 262144})
            for (int vec : {gen::max_vec(x), 1}) {
              Traits t{k, x, DType::f32, true, true};
              t.residual = res;
              t.y_dtype = y;
              const Config d = rt::default_selection(dev, t, n, 4096, vec).config;
              EXPECT_NO_THROW(gen::make_instance(t, d, n, vec))
                  << to_string(x) << " N=" << n << " vec " << vec << " " << to_string(d) << (res ? " residual" : "")
                  << (y ? " y" : "");
            }
}

