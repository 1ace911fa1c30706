// The warm re-tune's decision, GPU-free (ctest label "cpu"): a record made by
// the tuner survives the cache file (provenance included) and is found again
// under the tuner's own key; retune_mode/plan_retune then choose a warm
// re-tune whose space holds the previous winner, also when that winner is the
// default config that the search space does not list (the bug that made
// `lntune tune --force` search everything on an H100: the default bwd_dx
// config's group_size_m, e.g. 512, is not one of the space's 132/264/528/1056,
// so warm_space returned nothing and the key fell back to a full search).
#include <gtest/gtest.h>

#include <algorithm>

#include "cache/cache.hpp"
#include "generator/space.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/selector.hpp"
#include "temp_dir.hpp"
#include "tuner/tuner.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;
using lntune::testing::TempDir;

rt::DeviceInfo h100() {
  rt::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 50 << 20;
  d.driver_version = 13000;
  return d;
}

// A tuner outcome whose winner is `winner` (the default when equal).
Outcome outcome_won_by(const Config& def, const Config& winner) {
  Outcome o;
  CandidateResult d;
  d.config = def;
  d.is_default = true;
  d.status = Status::ok;
  d.timing = Measurement{Summary{}, StopReason::converged};
  d.timing->stats.median = 20;
  d.timing->stats.n = 40;
  o.candidates.push_back(d);
  o.winner = 0;
  if (winner != def) {
    CandidateResult w;
    w.config = winner;
    w.status = Status::ok;
    w.timing = Measurement{Summary{}, StopReason::converged};
    w.timing->stats.median = 10;
    w.timing->stats.n = 40;
    o.candidates.push_back(w);
    o.winner = 1;
  }
  return o;
}

struct Key {
  Traits traits;
  std::int64_t n, m;
};

std::vector<Key> test_keys() {
  // What tuner_devices_gpu_test tunes, plus variants and fp32.
  std::vector<Key> keys;
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (DType d : {DType::bf16, DType::f32})
      for (std::int64_t n : {1024, 1536, 4096, 16384, 65536}) keys.push_back({Traits{k, d, d, true, true}, n, 4096});
  Traits rms{Kernel::bwd_dx, DType::f16, DType::f16, true, false};
  rms.norm = Norm::rms;
  rms.residual = DType::f16;
  keys.push_back({rms, 2048, 4096});
  return keys;
}

TEST(WarmRetuneRoundTrip, ProvenanceSurvivesTheCacheFileAndTheKeyFindsIt) {
  TempDir tmp;
  const std::string path = tmp / "c.db";
  const rt::DeviceInfo dev = h100();
  const cache::Provenance cold = make_provenance(12080, 13000, false);
  std::vector<std::pair<cache::TuneKey, Config>> stored;
  const std::vector<Key> keys = test_keys();
  {
    cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
    for (const Key& k : keys) {
      const auto q = rt::space_query(dev, k.traits.kernel, k.traits.x_dtype, k.n, k.m);
      const Config def = gen::default_config(q);
      const cache::TuneKey key = rt::tune_key(dev, k.traits, k.n, k.m);
      db.upsert(make_record(key, outcome_won_by(def, def), 1e6, 3000, cold));
      stored.emplace_back(key, def);
    }
  }
  cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
  cache::Provenance now = make_provenance(12080, 13000, false);
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const Key& k = keys[i];
    // The key as the next run builds it, from traits given non-canonically.
    Traits t = k.traits;
    t.y_dtype = t.x_dtype;
    const auto rec = db.find(rt::tune_key(dev, t, k.n, k.m));
    ASSERT_TRUE(rec) << to_string(stored[i].second);
    EXPECT_EQ(rec->prov.nvrtc_version, 12080);
    EXPECT_EQ(rec->prov.driver_version, 13000);
    EXPECT_EQ(rec->prov.template_hash, now.template_hash);
    EXPECT_EQ(rec->prov.origin, cache::Origin::tuned);
    EXPECT_EQ(rec->config, stored[i].second);
    EXPECT_EQ(retune_mode(rec, now, true, false), Retune::warm);   // --force
    EXPECT_EQ(retune_mode(rec, now, false, false), Retune::skip);  // resume
    cache::Provenance other = now;
    other.driver_version = 13010;
    EXPECT_EQ(retune_mode(rec, other, true, false), Retune::full);
  }
}

TEST(WarmRetunePlan, TheDefaultWinnerOutsideTheSpaceStaysWarm) {
  const rt::DeviceInfo dev = h100();
  // bwd_dx fp32 N=1024 M=4096: the default (b1024 w4 r1) has group_size_m
  // 512 (at least 8 rows a CTA), the space 132, 264, 528 and 1056.
  const auto q = rt::space_query(dev, Kernel::bwd_dx, DType::f32, 1024, 4096);
  const Config def = gen::default_config(q);
  const std::vector<Config> space = gen::search_space(q);
  ASSERT_EQ(def, (Config{1024, 4, 1, 512, 1}));
  ASSERT_EQ(std::find(space.begin(), space.end(), def), space.end()) << "the case this test is about";
  cache::TuneRecord rec;
  rec.config = def;
  rec.prov = make_provenance(12080, 13000, false);
  const cache::Provenance now = make_provenance(12080, 13000, false);
  const RetunePlan p = plan_retune(rec, now, true, false, def, space);
  EXPECT_EQ(p.mode, Retune::warm);
  ASSERT_FALSE(p.space.empty());
  EXPECT_LT(p.space.size(), space.size() / 2) << "a warm space is small";
  // The default itself is the search's baseline, not listed again; its
  // neighbours in group_size_m are.
  EXPECT_EQ(std::count(p.space.begin(), p.space.end(), def), 0);
  EXPECT_NE(std::find(p.space.begin(), p.space.end(), Config{1024, 4, 1, 528, 1}), p.space.end());
  EXPECT_NE(std::find(p.space.begin(), p.space.end(), Config{1024, 4, 1, 264, 1}), p.space.end());
  // --full: the whole space; resume without --force: nothing to search.
  EXPECT_EQ(plan_retune(rec, now, true, true, def, space).space, space);
  EXPECT_EQ(plan_retune(rec, now, false, false, def, space).mode, Retune::skip);
  EXPECT_TRUE(plan_retune(rec, now, false, false, def, space).space.empty());
}

TEST(WarmRetunePlan, EveryKeyOfTheGridRetunesWarmAroundItsDefaultOrAnyCandidate) {
  // Whatever won (the default or any candidate), a --force re-tune with the
  // same NVRTC and driver is warm, its space holds the winner (or the
  // default is the baseline), and it is smaller than the full space.
  const rt::DeviceInfo dev = h100();
  const cache::Provenance now = make_provenance(12080, 13000, false);
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx, Kernel::bwd_dwdb})
    for (DType d : {DType::f16, DType::f32})
      for (std::int64_t n : gen::default_n_grid()) {
        const std::int64_t m = k == Kernel::bwd_dwdb ? 264 : 4096;
        const auto q = rt::space_query(dev, k, d, n, m);
        const Config def = gen::default_config(q);
        const std::vector<Config> space = gen::search_space(q);
        std::vector<Config> winners = {def};
        winners.insert(winners.end(), space.begin(), space.end());
        for (const Config& w : winners) {
          cache::TuneRecord rec;
          rec.config = w;
          rec.prov = now;
          const RetunePlan p = plan_retune(rec, now, true, false, def, space);
          ASSERT_EQ(p.mode, Retune::warm);
          if (w != def) {
            ASSERT_FALSE(p.space.empty());
            EXPECT_EQ(p.space.front(), w) << to_string(k) << " " << n;
          }
          EXPECT_LE(p.space.size(), space.size()) << to_string(k) << " " << n << " " << to_string(w);
        }
      }
}

}  // namespace
