// The tuner's reports (tuner/report.hpp): JSON, configs, the summary table.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "tuner/report.hpp"
#include "tuner_test_util.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;
using namespace lntune::testing;

// ------------------------------------------------------------ reports
TEST(Report, JsonAndConfigs) {
  EXPECT_EQ(records_json({}), "[]\n");
  EXPECT_EQ(json_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(short_config(cfg(4096, 8)), "b4096 w8 r1");
  Config c = cfg(4096, 8, 1, 264);
  c.cluster_size = 2;
  EXPECT_EQ(short_config(c), "b4096 w8 r1 g264 c2");
  const std::string j = records_json({sample_record(4096, 4, cache::Origin::tuned)}, nullptr);
  for (const char* part : {"\"n\": 4096", "\"m_bucket\": 4", "\"kernel\": \"fwd\"", "\"x_dtype\": \"bf16\"",
                           "\"block_size\": 4096", "\"median_us\": 10", "\"speedup_vs_default\": 1.2",
                           "\"pct_of_copy\": 33.33333333", "\"origin\": \"tuned\"", "\"name\": \"Test GPU\""})
    EXPECT_NE(j.find(part), std::string::npos) << part << " in " << j;
  // The norm variant is part of the key, so part of each record.
  for (const char* part : {"\"norm\": \"layernorm\"", "\"residual_dtype\": null", "\"zero_centered\": false",
                           "\"y_dtype\": \"bf16\""})
    EXPECT_NE(j.find(part), std::string::npos) << part << " in " << j;
  cache::TuneRecord v = sample_record(4096, 4, cache::Origin::tuned);
  v.key.traits.norm = Norm::rms;
  v.key.traits.residual = DType::f32;
  v.key.traits.zero_centered = true;
  v.key.traits.y_dtype = DType::f32;
  const std::string jv = records_json({v}, nullptr);
  for (const char* part : {"\"norm\": \"rmsnorm\"", "\"residual_dtype\": \"fp32\"", "\"zero_centered\": true",
                           "\"y_dtype\": \"fp32\""})
    EXPECT_NE(jv.find(part), std::string::npos) << part << " in " << jv;
}

TEST(Report, SummaryTableHasEveryColumn) {
  TuneSummary s;
  s.gpu = kGpu;
  s.copy_gbps = 3000;
  KeyResult k;
  k.key = sample_record(4096, 4, cache::Origin::tuned).key;
  k.m = 4096;
  k.state = KeyResult::State::tuned;
  k.record = sample_record(4096, 4, cache::Origin::tuned);
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

// A measured key of `kernel` in `bucket` with the default `ratio` times
// slower than the winner.
KeyResult gain_key(Kernel kernel, int bucket, double ratio, KeyResult::State state = KeyResult::State::tuned) {
  KeyResult k;
  k.record = sample_record(4096, bucket, cache::Origin::tuned);
  k.record->key.traits.kernel = kernel;
  k.record->default_median_us = k.record->timing.median_us * ratio;
  k.key = k.record->key;
  k.m = 4096;
  k.state = state;
  return k;
}

TEST(Report, GainsPerBucketAndKernel) {
  std::vector<KeyResult> keys{gain_key(Kernel::fwd, 4, 1.0),       gain_key(Kernel::fwd, 4, 1.21),
                              gain_key(Kernel::bwd_dx, 4, 2.0),    gain_key(Kernel::bwd_dwdb, 2, 1.5),
                              gain_key(Kernel::fwd, 5, 0.8),       gain_key(Kernel::fwd, 5, 9.0, KeyResult::State::cached),
                              gain_key(Kernel::bwd_dx, 5, 1.25)};
  KeyResult no_default = gain_key(Kernel::fwd, 4, 1.0);
  no_default.record->default_median_us = 0;  // unknown: left out
  keys.push_back(no_default);
  KeyResult none;  // no record
  none.key = keys[0].key;
  none.state = KeyResult::State::failed;
  keys.push_back(none);

  EXPECT_DOUBLE_EQ(*speedup_vs_default(keys[1]), 1.21);
  EXPECT_FALSE(speedup_vs_default(no_default));
  EXPECT_FALSE(speedup_vs_default(none));
  EXPECT_DOUBLE_EQ(*speedup_vs_default(keys[5]), 9.0);  // per key, whatever its state

  const auto g = gains_by_bucket(keys);
  ASSERT_EQ(g.size(), 8u);
  auto check = [](const GainGroup& x, int bucket, std::optional<Kernel> k, int n, double geomean, double lo, double hi) {
    EXPECT_EQ(x.m_bucket, bucket);
    EXPECT_EQ(x.kernel, k);
    EXPECT_EQ(x.keys, n);
    EXPECT_NEAR(x.geomean, geomean, 1e-12);
    EXPECT_DOUBLE_EQ(x.min, lo);
    EXPECT_DOUBLE_EQ(x.max, hi);
  };
  check(g[0], 2, Kernel::bwd_dwdb, 1, 1.5, 1.5, 1.5);
  check(g[1], 2, std::nullopt, 1, 1.5, 1.5, 1.5);
  check(g[2], 4, Kernel::fwd, 2, 1.1, 1.0, 1.21);
  check(g[3], 4, Kernel::bwd_dx, 1, 2.0, 2.0, 2.0);
  check(g[4], 4, std::nullopt, 3, std::cbrt(1.21 * 2.0), 1.0, 2.0);
  check(g[5], 5, Kernel::fwd, 1, 0.8, 0.8, 0.8);  // the cached key is not counted
  check(g[6], 5, Kernel::bwd_dx, 1, 1.25, 1.25, 1.25);
  check(g[7], 5, std::nullopt, 2, 1.0, 0.8, 1.25);
  const auto all = overall_gain(keys);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->keys, 6);
  EXPECT_NEAR(all->geomean, std::pow(1.21 * 2.0 * 1.5 * 0.8 * 1.25, 1.0 / 6), 1e-12);
  EXPECT_TRUE(gains_by_bucket({}).empty());
  EXPECT_FALSE(overall_gain({none}));

  TuneSummary s;
  s.gpu = kGpu;
  s.keys = keys;
  std::ostringstream os;
  print_summary(os, s);
  const std::string out = os.str();
  for (const char* part : {"speed-up over the default (geometric mean, min-max), per M bucket:",
                           "  M-bucket 2: 1.500x (1 key); bwd_dwdb 1.500x (1 key)\n",
                           "  M-bucket 4: 1.343x (3 keys, 1.00-2.00x); fwd 1.100x (2 keys, 1.00-1.21x), bwd_dx 2.000x (1 key)\n",
                           "  M-bucket 5: 1.000x (2 keys, 0.80-1.25x); fwd 0.800x (1 key), bwd_dx 1.250x (1 key)\n"})
    EXPECT_NE(out.find(part), std::string::npos) << part << " in\n" << out;
}

}  // namespace
