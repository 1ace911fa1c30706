// The Runtime object's GPU-free parts (runtime/runtime.hpp): config sources,
// set_tuned and the generations that retire plans; the plan table's
// publication rule (plans are immutable: a new generation never touches a
// plan a caller holds); Config's hash; the residual gradient in the
// backward's vector-width rule.
#include <gtest/gtest.h>

#include <memory>
#include <unordered_set>

#include "runtime/launcher.hpp"
#include "runtime/problem.hpp"
#include "runtime/runtime.hpp"

namespace {

using namespace lntune;

rt::DeviceInfo test_device() {
  rt::DeviceInfo d;
  d.name = "Test GPU";
  d.cc_major = 9;
  d.sm_count = 132;
  return d;
}

const Traits kFwd{Kernel::fwd, DType::bf16, DType::bf16, true, true};

// Always answers with one config.
class FixedSource : public rt::ConfigSource {
 public:
  explicit FixedSource(Config c) : c_(c) {}
  std::optional<rt::Selection> select(const rt::DeviceInfo&, const Traits&, std::int64_t, std::int64_t) override {
    return rt::Selection{c_, "tuned (fixed)"};
  }

 private:
  Config c_;
};

TEST(Runtime, StartsWithoutSourcesAndTheDefaultHeuristic) {
  rt::Runtime r;
  EXPECT_EQ(r.config_source(), nullptr);
  EXPECT_EQ(r.binary_store(), nullptr);
  EXPECT_EQ(r.cache_stack(), nullptr);
  EXPECT_EQ(r.select(test_device(), kFwd, 4096, 4096, 8).reason, "default heuristic");
}

TEST(Runtime, ConfigSourceChangesStartANewGeneration) {
  rt::Runtime r;
  const auto g0 = r.generation();
  r.set_config_source(std::make_shared<FixedSource>(Config{4096, 8, 1, 0, 1}));
  EXPECT_GT(r.generation(), g0);
  const rt::Selection s = r.select(test_device(), kFwd, 4096, 4096, 8);
  EXPECT_EQ(s.reason, "tuned (fixed)");
  EXPECT_EQ(s.config, (Config{4096, 8, 1, 0, 1}));
  // A config the instance rules reject for this call falls back to the default.
  r.set_config_source(std::make_shared<FixedSource>(Config{3000, 8, 1, 0, 1}));  // not a power of two
  EXPECT_EQ(r.select(test_device(), kFwd, 4096, 4096, 8).reason, "default heuristic");
  const auto g1 = r.generation();
  r.set_tuned(false);
  EXPECT_GT(r.generation(), g1);
  EXPECT_EQ(r.config_source(), nullptr);  // no cache installed: nothing to re-enable
  r.set_tuned(true);
  EXPECT_EQ(r.config_source(), nullptr);
}

TEST(Runtime, RuntimesAreIndependent) {
  rt::Runtime a, b;
  a.set_config_source(std::make_shared<FixedSource>(Config{4096, 8, 1, 0, 1}));
  EXPECT_EQ(a.select(test_device(), kFwd, 4096, 4096, 8).reason, "tuned (fixed)");
  EXPECT_EQ(b.select(test_device(), kFwd, 4096, 4096, 8).reason, "default heuristic");
  EXPECT_EQ(b.config_source(), nullptr);
}

TEST(Runtime, InstallCacheBindsBothAndSetTunedTogglesTheSource) {
  rt::Runtime r;
  auto stack = std::make_shared<cache::CacheStack>(std::nullopt, std::vector<std::string>{});
  r.install_cache(stack);
  EXPECT_EQ(r.cache_stack(), stack);
  EXPECT_NE(r.config_source(), nullptr);
  EXPECT_NE(r.binary_store(), nullptr);
  r.set_tuned(false);
  EXPECT_EQ(r.config_source(), nullptr);
  EXPECT_NE(r.binary_store(), nullptr);  // compiled kernels are still cached
  // A cache installed while tuning is off stays off.
  r.install_cache(stack);
  EXPECT_EQ(r.config_source(), nullptr);
  r.set_tuned(true);
  EXPECT_NE(r.config_source(), nullptr);
  r.install_cache(nullptr);
  EXPECT_EQ(r.config_source(), nullptr);
  EXPECT_EQ(r.binary_store(), nullptr);
}

struct P {
  int value = 0;
};

TEST(PlanTable, PublishedPlansAreSharedAndNeverMutated) {
  rt::PlanTable<P> t;
  rt::PlanKey k;
  k.n = 4096;
  EXPECT_EQ(t.find(k, 0), nullptr);
  auto first = t.publish(k, 0, std::make_shared<const P>(P{1}));
  EXPECT_EQ(t.find(k, 0), first);
  // A second build of the same generation (a concurrent miss) yields the
  // published plan, so every caller runs the same one.
  EXPECT_EQ(t.publish(k, 0, std::make_shared<const P>(P{2})), first);
  // A new generation: the old plan is not found any more, a new one is
  // published, and the one a caller holds is unchanged.
  EXPECT_EQ(t.find(k, 1), nullptr);
  auto second = t.publish(k, 1, std::make_shared<const P>(P{3}));
  EXPECT_EQ(t.find(k, 1), second);
  EXPECT_EQ(first->value, 1);
  EXPECT_EQ(second->value, 3);
  // A late plan from an older generation is returned to its caller but not
  // published over the newer one.
  auto late = t.publish(k, 0, std::make_shared<const P>(P{4}));
  EXPECT_EQ(late->value, 4);
  EXPECT_EQ(t.find(k, 1), second);
  // Keys differ by every field.
  rt::PlanKey k2 = k;
  k2.want_db = true;
  EXPECT_EQ(t.find(k2, 1), nullptr);
}

TEST(DwdbProblem, OneDerivationForEveryCaller) {
  const Traits bwd{Kernel::bwd_dx, DType::f16, DType::f32, true, false};
  const Config dx{1024, 4, 2, 8, 1};
  const rt::DwdbProblem p = rt::dwdb_problem(bwd, true, false, dx, 1000);
  EXPECT_EQ(p.traits.kernel, Kernel::bwd_dwdb);
  EXPECT_TRUE(p.traits.has_weight);
  EXPECT_FALSE(p.traits.has_bias);
  EXPECT_EQ(p.traits.w_dtype, DType::f32);
  EXPECT_EQ(p.rows, 8);  // 8 CTAs, each summing its 2 row slots into one partial row
  EXPECT_EQ(rt::dwdb_problem(bwd, true, false, dx, 3).rows, 2);  // only 2 row groups
  EXPECT_EQ(rt::partial_rows(dx, 3), 2);
  EXPECT_GT(rt::default_dwdb_config(test_device(), p, 4096).block_size, 0);
}

// The backward's vector width covers the residual's gradient too: its
// alignment (in the residual's dtype) and row stride can narrow it.
TEST(BwdProblem, DresidualJoinsTheVectorWidthRule) {
  alignas(256) static unsigned char mem[1 << 16];
  auto at = [](std::size_t off) { return static_cast<void*>(mem + off); };
  BackwardArgs a;
  a.dy = at(0);
  a.x = at(0x1000);
  a.rstd = static_cast<const float*>(at(0x2000));
  a.dx = at(0x3000);
  a.M = 2;
  a.N = 4096;
  a.x_dtype = a.w_dtype = DType::bf16;
  a.norm = Norm::rms;
  a.residual = true;
  a.residual_dtype = DType::f32;
  EXPECT_EQ(rt::check_backward(a).vec, 8);
  a.dresidual = at(0x4000);
  EXPECT_EQ(rt::check_backward(a).vec, 8);
  a.dresidual = at(0x4008);  // 8-byte aligned fp32: two elements at a time
  EXPECT_EQ(rt::check_backward(a).vec, 2);
  a.dresidual = at(0x4004);
  EXPECT_EQ(rt::check_backward(a).vec, 1);
  a.dresidual = at(0x4000);
  a.dresidual_row_stride = 4097;
  const rt::BwdProblem p = rt::check_backward(a);
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(p.dresidual_stride, 4097);
}

TEST(ConfigHash, EqualConfigsHashEqualAndFieldsMatter) {
  const std::hash<Config> h;
  const Config a{1024, 4, 1, 0, 1};
  EXPECT_EQ(h(a), h(Config{1024, 4, 1, 0, 1}));
  std::unordered_set<Config> seen;
  for (int b : {256, 512, 1024})
    for (int w : {1, 2, 4})
      for (int r : {1, 2})
        for (int g : {0, 132})
          for (int c : {1, 2}) seen.insert(Config{b, w, r, g, c});
  EXPECT_EQ(seen.size(), 3u * 3 * 2 * 2 * 2);
  EXPECT_EQ(seen.count(a), 1u);
}

}  // namespace

// Where the in-kernel dW/dB reduction applies (rt::finish_fits): the row
// groups follow the device function (about 4 rows a group, at most
// threads / 8), and it fits only where every thread loads its rows at once
// and no CTA takes two blocks of columns; past 4 rows a group, by warps,
// where every lane loads its rows at once and every item has its own warp
// (bwd_dwdb runs otherwise).
TEST(InKernelFinish, FitsOnlyOneRoundAndOneBlockPerCta) {
  EXPECT_EQ(rt::finish_row_groups(1, 128), 1);
  EXPECT_EQ(rt::finish_row_groups(7, 128), 1);
  EXPECT_EQ(rt::finish_row_groups(8, 128), 2);
  EXPECT_EQ(rt::finish_row_groups(32, 256), 8);
  EXPECT_EQ(rt::finish_row_groups(512, 128), 16);  // threads / 8: lanes stay >= 8
  EXPECT_EQ(rt::finish_row_groups(512, 256), 32);
  // M = 32 (16 CTAs of 128 threads, 16 partial rows): 4 groups of 4 rows,
  // blocks of 128 columns: N = 1024 is 8 blocks.
  EXPECT_TRUE(rt::finish_fits(16, 128, 16, 1024));
  EXPECT_TRUE(rt::finish_fits(16, 128, 16, 2048));
  EXPECT_FALSE(rt::finish_fits(16, 128, 16, 2049));
  // M = 1: one CTA of 128 threads takes 512 columns at once.
  EXPECT_TRUE(rt::finish_fits(1, 128, 1, 512));
  EXPECT_FALSE(rt::finish_fits(1, 128, 1, 513));
  // 128 CTAs of 256 threads: 32 groups of 4 rows; 129 rows would take 5,
  // so a warp per 4 columns of dW or dB (finish_by_warps): 512 items for
  // 129 * 8 warps.
  EXPECT_TRUE(rt::finish_fits(128, 256, 128, 2048));
  EXPECT_TRUE(rt::finish_fits(128, 256, 128, 1024));
  EXPECT_TRUE(rt::finish_fits(129, 256, 129, 1024));
  // M = 256, N = 1024 (128 CTAs of 128 threads): 16 groups of 8 rows, so by
  // warps: 512 items, 512 warps.
  EXPECT_TRUE(rt::finish_fits(128, 128, 128, 1024));
  EXPECT_FALSE(rt::finish_fits(128, 128, 128, 1028));  // 514 items
  // By warps at most 16 rows a lane (16-byte rows, N % 4 == 0): 512
  // partial rows; 8 rows, 256, where the columns load one by one.
  EXPECT_TRUE(rt::finish_fits(132, 256, 132, 1024));
  EXPECT_TRUE(rt::finish_fits(264, 256, 264, 1024));
  EXPECT_TRUE(rt::finish_fits(512, 128, 512, 512));
  EXPECT_FALSE(rt::finish_fits(513, 128, 513, 512));
  EXPECT_TRUE(rt::finish_fits(256, 128, 256, 1022));
  EXPECT_FALSE(rt::finish_fits(264, 128, 264, 1022));
  // CTAs of 512 threads and more: not taken (bwd_dx.cuh compiles no finish).
  EXPECT_FALSE(rt::finish_fits(64, 512, 64, 256));
  EXPECT_FALSE(rt::finish_fits(132, 512, 132, 4096));
  EXPECT_FALSE(rt::finish_fits(2, 1024, 2, 256));
  // M = 4096, N = 1024 over 1024 CTAs: never.
  EXPECT_FALSE(rt::finish_fits(1024, 128, 1024, 1024));
}

// The three paths of rt::finish_path. One CTA over rows held whole writes
// dW/dB itself (alone); a grid that fits finish_fits and the kernel's
// cooperative capacity reduces in the kernel; everything else runs bwd_dwdb.
TEST(InKernelFinish, FinishPathPicksAloneCooperativeOrSeparate) {
  using rt::FinishPath;
  rt::LoadedKernel k;  // no cooperative capacity yet: alone or separate
  rt::BwdProblem p;
  p.M = 1;
  p.N = 4096;
  p.want_dw = true;
  Config c{4096, 8, 1, 1};
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "dW not 16-byte aligned";
  p.grads_aligned = true;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::alone);
  p.want_dw = false;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "neither dW nor dB wanted";
  p.want_db = true;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::alone);
  p.N = 4097;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "rows in tiles";
  p.N = 4096;
  p.M = 3;
  c.group_size_m = 1;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::alone) << "one CTA walks the 3 rows";
  c.cluster_size = 2;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "a cluster";
  c.cluster_size = 1;
  p.traits.x_dtype = DType::bf16;
  p.traits.residual = DType::f32;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate)
      << "an fp32 residual beside bf16 x (bwd_dx.cuh, can_finish_alone), and no cooperative capacity";
  p.traits.residual = DType::bf16;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::alone);
  // Two CTAs of 256 threads over 2 partial rows of 1024 columns: cooperative
  // where the kernel's capacity holds them.
  c = Config{1024, 8, 1, 2};
  p.N = 1024;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "no cooperative capacity";
  k.cooperative_ctas = 264;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "no entry that finishes";
  int stand_in = 0;  // never called: finish_path only asks whether the entry exists
  k.finish_fn = reinterpret_cast<CUfunction>(&stand_in);
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::cooperative);
  // Beyond 256 partial rows, at most two CTAs a SM (132 SMs: 264).
  k.sm_count = 132;
  k.cooperative_ctas = 528;
  p.M = 4096;
  c = Config{1024, 4, 2, 264};
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::cooperative) << "264 CTAs of 4 warps: two a SM";
  c = Config{1024, 4, 1, 512};
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "512 CTAs: four a SM";
  k.sm_count = 108;
  c = Config{1024, 4, 2, 256};
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::cooperative) << "256 partial rows: 8 rows a lane, any grid";
  c = Config{1024, 4, 2, 257};
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "257 CTAs on 108 SMs";
  c = Config{1024, 8, 1, 2};
  p.M = 0;
  EXPECT_EQ(rt::finish_path(k, c, p), FinishPath::separate) << "no rows";
}

TEST(FitCoresident, ClipsOnlyPersistentClusterGridsToWhatRunsAtOnce) {
  rt::LoadedKernel k;
  k.max_active_clusters = 30;  // an H200's clusters of 4 at one CTA a SM
  const Config c4{16384, 16, 2, 33, 4};
  EXPECT_EQ(rt::fit_coresident(k, c4).group_size_m, 30) << "33 clusters of 4: 3 would wait for a second wave";
  Config fits = c4;
  fits.group_size_m = 29;
  EXPECT_EQ(rt::fit_coresident(k, fits), fits);
  Config per_row = c4;
  per_row.group_size_m = 0;  // one cluster a row: not persistent
  EXPECT_EQ(rt::fit_coresident(k, per_row), per_row);
  const Config plain{1024, 8, 2, 264};  // no cluster: CTAs, not clusters
  EXPECT_EQ(rt::fit_coresident(k, plain), plain);
  rt::LoadedKernel unknown;  // no cluster query (0)
  EXPECT_EQ(rt::fit_coresident(unknown, c4), c4);
  // Only group_size_m changes.
  const Config fit = rt::fit_coresident(k, c4);
  EXPECT_EQ(fit.block_size, c4.block_size);
  EXPECT_EQ(fit.num_warps, c4.num_warps);
  EXPECT_EQ(fit.rows_per_cta, c4.rows_per_cta);
  EXPECT_EQ(fit.cluster_size, c4.cluster_size);
}
