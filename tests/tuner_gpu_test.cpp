// The tuner on a GPU (ctest label "gpu"): tune small keys into a temporary
// cache, then launch through that cache and check the launcher reports the
// tuned config. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "temp_dir.hpp"
#include "gpu_util.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/runtime.hpp"
#include "tuner/report.hpp"
#include "tuner/tuner.hpp"
#include "tuner/workload.hpp"

namespace {

namespace fs = std::filesystem;
using namespace lntune;

using lntune::testing::TempDir;

tune::TuneOptions quick_options() {
  tune::TuneOptions o;
  o.budget_s = 120;
  o.runner.rule.min_reps = 10;
  o.runner.rule.max_reps = 60;
  o.runner.rule.max_seconds = 0.5;
  o.runner.warmup_ms = 5;
  return o;
}

TEST(TunerGpu, TunesAKeyAndTheLauncherUsesIt) {
  LNTUNE_REQUIRE_GPU();
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  cache::Database* db = stack->writable();
  ASSERT_NE(db, nullptr);
  const auto targets = tune::make_targets({1024}, {4096}, {DType::bf16}, {Kernel::fwd, Kernel::bwd_dx});
  const tune::TuneSummary s =
      tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), quick_options());
  ASSERT_TRUE(s.fatal.empty()) << s.fatal;
  EXPECT_GT(s.copy_gbps, 100);
  ASSERT_EQ(s.keys.size(), 3u);  // fwd, bwd_dx, bwd_dwdb
  for (const auto& k : s.keys) {
    EXPECT_EQ(k.state, tune::KeyResult::State::tuned) << tune::key_label(k.key) << ": " << k.message;
    ASSERT_TRUE(k.record);
    EXPECT_EQ(*db->find(k.key), *k.record);
    EXPECT_EQ(k.outcome.best()->status, tune::Status::ok);
    EXPECT_GT(k.record->gbps, 0);
    EXPECT_GT(k.record->default_median_us, 0);
    EXPECT_EQ(k.record->prov.origin, cache::Origin::tuned);
  }
  EXPECT_GT(db->binary_count(), 0u);

  // Resume: nothing left to tune.
  const tune::TuneSummary again =
      tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), quick_options());
  for (const auto& k : again.keys) EXPECT_EQ(k.state, tune::KeyResult::State::cached) << tune::key_label(k.key);
  EXPECT_EQ(again.compile.compiled, 0u);

  // A runtime with this cache installed picks the tuned configs.
  rt::Runtime launcher;
  launcher.install_cache(stack);
  tune::Workload fw(targets[0].traits, 4096, 1024, 1);
  const Choice cf = launcher.explain_forward(fw.forward_args());
  EXPECT_EQ(cf.reason, "tuned (exact)");
  EXPECT_EQ(cf.config, s.keys[0].record->config);
  tune::Workload bw(targets[1].traits, 4096, 1024, 1);
  const Choice cb = launcher.explain_backward(bw.backward_args());
  EXPECT_EQ(cb.reason, "tuned (exact)");
  EXPECT_EQ(cb.config, s.keys[1].record->config);
  // Same bucket, another N: the nearest tuned N.
  tune::Workload near(targets[0].traits, 4096, 1536, 1);
  EXPECT_EQ(launcher.explain_forward(near.forward_args()).reason, "tuned (nearest N=1024)");
  // Warm calls compile nothing.
  const auto before = launcher.kernel_cache_stats();
  for (int i = 0; i < 5; ++i) launcher.forward(fw.forward_args());
  launcher.backward(bw.backward_args());
  rt::check(rt::driver().CtxSynchronize(), "synchronize");
  EXPECT_EQ(launcher.kernel_cache_stats().compiled, before.compiled);
  launcher.set_tuned(false);
  EXPECT_EQ(launcher.explain_forward(fw.forward_args()).reason, "default heuristic");
  // The default runtime (the public API's) was never touched by the tuner.
  EXPECT_NE(rt::default_runtime().cache_stack(), stack);
}

TEST(TunerGpu, SpentBudgetSkipsKeysAndResumeTunesThem) {
  LNTUNE_REQUIRE_GPU();
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  cache::Database* db = stack->writable();
  const auto targets = tune::make_targets({4096}, {4096}, {DType::f16}, {Kernel::fwd});
  tune::TuneOptions o = quick_options();
  o.budget_s = 1e-6;  // spent before the first key
  const tune::TuneSummary s = tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), o);
  ASSERT_EQ(s.keys.size(), 1u);
  EXPECT_TRUE(s.budget_spent);
  const auto& k = s.keys[0];
  EXPECT_EQ(k.state, tune::KeyResult::State::skipped_budget) << k.message;
  EXPECT_FALSE(k.record);
  EXPECT_FALSE(db->find(k.key));
  o.budget_s = 0;
  const tune::TuneSummary s2 = tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), o);
  ASSERT_EQ(s2.keys.size(), 1u);
  EXPECT_EQ(s2.keys[0].state, tune::KeyResult::State::tuned) << s2.keys[0].message;
  EXPECT_TRUE(tune::is_tuned(*db, k.key));
  // Every candidate of the space was tried (or pruned), and none failed.
  for (const auto& c : s2.keys[0].outcome.candidates) {
    EXPECT_NE(c.status, tune::Status::skipped);
    EXPECT_NE(c.status, tune::Status::wrong) << to_string(c.config) << ": " << c.message;
    EXPECT_NE(c.status, tune::Status::compile_error) << to_string(c.config) << ": " << c.message;
  }
}

TEST(TunerGpu, RunnerMeasuresTheCopyBandwidth) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  tune::Runner runner(dev);
  const double gbps = runner.copy_gbps();
  EXPECT_GT(gbps, 100) << dev.name;
  EXPECT_LT(gbps, 20000) << dev.name;
}

}  // namespace
