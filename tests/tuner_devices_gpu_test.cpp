// Tuning on several GPUs, the staged search and the warm re-tune on a real
// GPU (ctest label "gpu"): `--devices` with one GPU, and with every GPU when
// there are two or more of one model. Skips, saying why, without a GPU (or
// without a second one).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gpu_util.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/nvrtc.hpp"
#include "temp_dir.hpp"
#include "tuner/report.hpp"
#include "tuner/tuner.hpp"

namespace {

using namespace lntune;
using lntune::testing::TempDir;

tune::TuneOptions quick_options() {
  tune::TuneOptions o;
  o.budget_s = 240;
  o.runner.rule.min_reps = 10;
  o.runner.rule.max_reps = 60;
  o.runner.rule.max_seconds = 0.5;
  o.runner.warmup_ms = 5;
  return o;
}

int device_count() {
  int n = 0;
  rt::check(rt::driver().DeviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

void expect_all_tuned(const tune::TuneSummary& s, cache::Database& db) {
  ASSERT_TRUE(s.fatal.empty()) << s.fatal;
  for (const auto& k : s.keys) {
    EXPECT_EQ(k.state, tune::KeyResult::State::tuned) << tune::key_label(k.key) << ": " << k.message;
    ASSERT_TRUE(k.record) << tune::key_label(k.key);
    EXPECT_EQ(*db.find(k.key), *k.record);
    ASSERT_NE(k.outcome.best(), nullptr);
    EXPECT_EQ(k.outcome.best()->status, tune::Status::ok);  // the correctness gate
    for (const auto& c : k.outcome.candidates) {
      EXPECT_NE(c.status, tune::Status::wrong) << to_string(c.config) << ": " << c.message;
      EXPECT_NE(c.status, tune::Status::compile_error) << to_string(c.config) << ": " << c.message;
    }
  }
}

TEST(TunerDevicesGpu, OneGpuStagedThenWarmThenFull) {
  LNTUNE_REQUIRE_GPU();
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  cache::Database* db = stack->writable();
  ASSERT_NE(db, nullptr);
  const auto targets = tune::make_targets({1024, 1536, 4096}, {4096}, {DType::bf16}, {Kernel::fwd, Kernel::bwd_dx});
  auto store = [&] { return std::make_shared<rt::CacheBinaryStore>(stack); };

  // Cold, staged, through --devices 0.
  const auto cold = tune::run_tuning_on({0}, targets, *db, store(), quick_options());
  ASSERT_EQ(cold.size(), 1u);
  const tune::TuneSummary& s = cold.front();
  ASSERT_EQ(s.keys.size(), 9u);  // 3 fwd, 3 bwd_dx, 3 bwd_dwdb
  expect_all_tuned(s, *db);
  for (const auto& k : s.keys) EXPECT_EQ(k.device, 0);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].ordinal, 0);
  EXPECT_EQ(s.devices[0].keys, 9u);
  EXPECT_GT(s.devices[0].copy_gbps, 100);
  EXPECT_GT(s.search.screened, 0u);
  EXPECT_LT(s.search.careful, s.search.candidates);  // the screening removed some
  EXPECT_EQ(s.warm_keys, 0u);
  std::ostringstream os;
  tune::print_summary(os, s);
  EXPECT_NE(os.str().find("search: " + std::to_string(s.search.candidates) + " candidates"), std::string::npos)
      << os.str();

  // Warm re-tune (--force, same GPU, driver and NVRTC): previous winners and
  // their rivals only, re-verified, nothing compiled. First the decision
  // itself, from the stored records (with what differs when it is not warm).
  const cache::Provenance now = tune::make_provenance(rt::nvrtc_version(), s.device.driver_version, false);
  for (const auto& k : s.keys) {
    const auto rec = db->find(k.key);
    ASSERT_TRUE(rec) << tune::key_label(k.key);
    EXPECT_EQ(tune::retune_mode(rec, now, true, false), tune::Retune::warm)
        << tune::key_label(k.key) << ": stored NVRTC " << rec->prov.nvrtc_version << ", driver "
        << rec->prov.driver_version << ", origin " << rec->prov.origin_text() << "; now NVRTC " << now.nvrtc_version
        << ", driver " << now.driver_version;
  }
  tune::TuneOptions o = quick_options();
  o.force = true;
  const auto warm = tune::run_tuning_on({0}, targets, *db, store(), o);
  const tune::TuneSummary& w = warm.front();
  expect_all_tuned(w, *db);
  EXPECT_EQ(w.compile.compiled, 0u);
  EXPECT_LT(w.search.candidates, s.search.candidates);
  std::size_t warm_main = 0;
  for (const auto& k : w.keys)
    if (k.key.traits.kernel != Kernel::bwd_dwdb) {
      EXPECT_TRUE(k.warm) << tune::key_label(k.key) << ": " << k.outcome.candidates.size() << " candidates";
      warm_main += k.warm;
    }
  EXPECT_EQ(warm_main, 6u);

  // --full: the exhaustive search, no screening.
  o.full = true;
  const auto full = tune::run_tuning_on({0}, targets, *db, store(), o);
  const tune::TuneSummary& f = full.front();
  expect_all_tuned(f, *db);
  EXPECT_EQ(f.search.screened, 0u);
  EXPECT_EQ(f.warm_keys, 0u);
  EXPECT_GT(f.search.careful, s.search.careful);
}

TEST(TunerDevicesGpu, EveryGpuTakesItsShareIntoOneCache) {
  LNTUNE_REQUIRE_GPU();
  const int count = device_count();
  if (count < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << count;
  const std::vector<int> all = tune::parse_devices("all", count);
  std::vector<cache::GpuId> ids;
  for (int d : all) {
    CUdevice dev = 0;
    rt::check(rt::driver().DeviceGet(&dev, d), "cuDeviceGet");
    ids.push_back(rt::gpu_id(rt::device_info(dev)));
  }
  const auto models = tune::group_by_model(ids);
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  cache::Database* db = stack->writable();
  const auto targets =
      tune::make_targets({1024, 2048, 3072, 4096, 6144, 8192}, {4096}, {DType::f16}, {Kernel::fwd});
  const auto out = tune::run_tuning_on(all, targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), quick_options());
  ASSERT_EQ(out.size(), models.size());
  std::size_t records = 0;
  for (std::size_t g = 0; g < out.size(); ++g) {
    const tune::TuneSummary& s = out[g];
    expect_all_tuned(s, *db);
    ASSERT_EQ(s.keys.size(), targets.size());
    EXPECT_EQ(s.gpu, ids[models[g].front()]);
    // The deterministic partition decided who measured what.
    std::vector<double> costs;
    for (const auto& t : targets) costs.push_back(tune::target_cost(t));
    const auto shares = tune::partition_keys(costs, models[g].size());
    for (std::size_t w = 0; w < shares.size(); ++w)
      for (std::size_t i : shares[w]) EXPECT_EQ(s.keys[i].device, all[models[g][w]]) << tune::key_label(s.keys[i].key);
    std::set<int> used;
    for (const auto& k : s.keys) used.insert(k.device);
    EXPECT_EQ(used.size(), std::min(models[g].size(), targets.size()));
    records += s.keys.size();
  }
  EXPECT_EQ(db->records().size(), records);  // one record per key and model, in one cache
}

}  // namespace
