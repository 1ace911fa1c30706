// The tuner's reports (tuner/report.hpp): JSON, configs, the summary table.
#include <gtest/gtest.h>

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


}  // namespace
