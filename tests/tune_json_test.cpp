// `lntune tune --json` (tuner/cli/tune_json.hpp) without a GPU: summaries
// fed in, the document read back (ctest label "cpu"). The tuned-over-default
// gain per key, and per M bucket and kernel.
#include <gtest/gtest.h>

#include <stdio.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "temp_dir.hpp"
#include "tuner/cli/tune_json.hpp"
#include "tuner_test_util.hpp"

namespace {

using namespace lntune;
using namespace lntune::testing;

tune::KeyResult key(Kernel kernel, std::int64_t n, int bucket, double median, double default_median,
                    tune::KeyResult::State state = tune::KeyResult::State::tuned) {
  tune::KeyResult k;
  k.record = sample_record(n, bucket, cache::Origin::tuned);
  k.record->key.traits.kernel = kernel;
  k.record->timing.median_us = median;
  k.record->default_median_us = default_median;
  k.key = k.record->key;
  k.m = 4096;
  k.state = state;
  k.device = 0;
  k.seconds = 0.25;
  return k;
}

tune::TuneSummary summary() {
  tune::TuneSummary s;
  s.gpu = kGpu;
  s.copy_gbps = 3000;
  s.keys.push_back(key(Kernel::fwd, 4096, 4, 10, 12.5));    // 1.25x
  s.keys.push_back(key(Kernel::bwd_dx, 4096, 5, 20, 20));   // 1x
  s.keys.push_back(key(Kernel::fwd, 1024, 5, 8, 10, tune::KeyResult::State::cached));  // 1.25x, cached
  s.keys.push_back(key(Kernel::fwd, 2048, 4, 10, 0));       // default time unknown
  tune::KeyResult failed;
  failed.key = s.keys[0].key;
  failed.key.n = 8192;
  failed.state = tune::KeyResult::State::failed;
  failed.message = "out of memory";
  s.keys.push_back(failed);
  return s;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(TuneJson, GainPerKeyAndPerBucket) {
  std::ostringstream os;
  cli::write_tune_json(os, {summary()}, false, "/tmp/c.db");
  const std::string j = os.str();
  // Per key, in key order: the measured ratio, null where unknown.
  const std::size_t k0 = j.find("\"n\": 4096, \"m_bucket\": 4"), k1 = j.find("\"n\": 4096, \"m_bucket\": 5"),
                    k2 = j.find("\"n\": 1024"), k3 = j.find("\"n\": 2048"), k4 = j.find("\"n\": 8192");
  ASSERT_TRUE(k0 < k1 && k1 < k2 && k2 < k3 && k3 < k4 && k4 != std::string::npos) << j;
  auto between = [&](std::size_t a, std::size_t b) { return j.substr(a, b - a); };
  EXPECT_TRUE(contains(between(k0, k1), "\"default_median_us\": 12.5, \"speedup_vs_default\": 1.25")) << j;
  EXPECT_TRUE(contains(between(k1, k2), "\"speedup_vs_default\": 1,")) << j;
  EXPECT_TRUE(contains(between(k2, k3), "\"state\": \"cached\"")) << j;
  EXPECT_TRUE(contains(between(k2, k3), "\"speedup_vs_default\": 1.25")) << j;
  EXPECT_TRUE(contains(between(k3, k4), "\"default_median_us\": null, \"speedup_vs_default\": null")) << j;
  // No record: the same fields, null.
  EXPECT_TRUE(contains(j.substr(k4), "\"config\": null, \"median_us\": null, \"gbps\": null, \"copy_gbps\": null, "
                                     "\"default_median_us\": null, \"speedup_vs_default\": null"))
      << j;
  // Summaries: the keys measured in this run (tuned, partial) with both times.
  EXPECT_TRUE(contains(j, "\"geomean_speedup_vs_default\": 1.11803")) << j;  // sqrt(1.25)
  EXPECT_TRUE(contains(j, "\"speedup_vs_default_by_bucket\": [{\"m_bucket\": 4, \"kernel\": \"fwd\", \"keys\": 1, "
                          "\"geomean\": 1.25, \"min\": 1.25, \"max\": 1.25}, {\"m_bucket\": 4, \"kernel\": null, "
                          "\"keys\": 1, \"geomean\": 1.25, \"min\": 1.25, \"max\": 1.25}, {\"m_bucket\": 5, \"kernel\": "
                          "\"bwd_dx\", \"keys\": 1, \"geomean\": 1, \"min\": 1, \"max\": 1}, {\"m_bucket\": 5, "
                          "\"kernel\": null, \"keys\": 1, \"geomean\": 1, \"min\": 1, \"max\": 1}]"))
      << j;
  EXPECT_TRUE(contains(j, "\"counts\": {\"tuned\": 3, \"partial\": 0, \"cached\": 1, \"skipped_budget\": 0, "
                          "\"no_winner\": 0, \"failed\": 1}"))
      << j;

  // Nothing measured: null and an empty list.
  tune::TuneSummary none;
  none.gpu = kGpu;
  std::ostringstream on;
  cli::write_tune_json(on, {none}, false, "c.db");
  EXPECT_TRUE(contains(on.str(), "\"geomean_speedup_vs_default\": null, \"speedup_vs_default_by_bucket\": []"))
      << on.str();
}

TEST(TuneJson, SeveralSummariesEachCarryTheirGains) {
  std::ostringstream os;
  cli::write_tune_json(os, {summary(), summary()}, true, "c.db");
  const std::string j = os.str();
  EXPECT_TRUE(contains(j, "\"summaries\": ["));
  std::size_t count = 0;
  for (std::size_t at = j.find("\"speedup_vs_default_by_bucket\""); at != std::string::npos;
       at = j.find("\"speedup_vs_default_by_bucket\"", at + 1))
    ++count;
  EXPECT_EQ(count, 2u);
  EXPECT_TRUE(contains(j, "\"counts\": {\"tuned\": 6,")) << j;
}

TEST(TuneJson, IsValidJson) {
  // Parsed by Python's json module where there is one.
  const int has_python = std::system("python3 -c 'import json' >/dev/null 2>&1");
  if (has_python != 0) GTEST_SKIP() << "no python3";
  TempDir tmp;
  const std::string path = tmp / "tune.json";
  {
    std::ofstream f(path);
    cli::write_tune_json(f, {summary()}, false, "c.db");
  }
  const std::string cmd =
      "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
      "assert [k[\"speedup_vs_default\"] for k in d[\"keys\"]] == [1.25, 1, 1.25, None, None], d[\"keys\"]; "
      "assert len(d[\"speedup_vs_default_by_bucket\"]) == 4' " +
      path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace
