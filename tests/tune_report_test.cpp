// Reporting of a tune at scale (ctest label "cpu"): the --trace JSON lines,
// bench/compare_winners.py reading two traces (pruned vs exhaustive), the
// per-GPU progress lines, and the summary's search line.
#include <gtest/gtest.h>

#include <stdio.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "temp_dir.hpp"
#include "tuner/report.hpp"
#include "tuner/stats.hpp"
#include "tuner/tuner.hpp"

#ifndef LNTUNE_SOURCE_DIR
#error "LNTUNE_SOURCE_DIR must be the source tree"
#endif

namespace {

using namespace lntune;
using namespace lntune::tune;
using lntune::testing::TempDir;

cache::TuneKey key(std::int64_t n) {
  cache::TuneKey k;
  k.gpu = {"NVIDIA H100 80GB HBM3", 9, 0, 132};
  k.traits = Traits{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  k.n = n;
  k.m_bucket = 4;
  return k;
}

CandidateResult candidate(Config c, Status s, std::optional<double> careful, std::optional<double> screen,
                          bool is_default = false) {
  CandidateResult r;
  r.config = c;
  r.status = s;
  r.is_default = is_default;
  if (careful) r.timing = Measurement{summarize({*careful, *careful}), StopReason::converged};
  if (screen) r.screen = Measurement{summarize({*screen}), StopReason::max_reps};
  return r;
}

KeyResult key_result(std::int64_t n, Config winner, double median, int device) {
  KeyResult kr;
  kr.key = key(n);
  kr.m = 4096;
  kr.state = KeyResult::State::tuned;
  kr.device = device;
  kr.seconds = 0.5;
  cache::TuneRecord r;
  r.key = kr.key;
  r.config = winner;
  r.timing = {median, median, median, 20};
  kr.record = r;
  return kr;
}

const Config kA{1024, 4, 1, 0, 1}, kB{2048, 4, 1, 0, 1}, kC{1024, 8, 1, 0, 1};

TEST(Trace, OneJsonLinePerCandidateAndKey) {
  std::ostringstream os;
  TraceWriter t(os, nullptr);
  t.candidate_done(key(1024), 0, candidate(kA, Status::ok, 10.0, 10.5, true));
  t.candidate_done(key(1024), 1, candidate(kB, Status::screened_out, std::nullopt, 12.25));
  t.key_done(key_result(1024, kA, 10.0, 1));
  EXPECT_EQ(os.str(),
            "{\"event\": \"candidate\", \"gpu\": \"NVIDIA H100 80GB HBM3\", \"sm_count\": 132, \"kernel\": \"fwd\", "
            "\"x_dtype\": \"bf16\", \"w_dtype\": \"bf16\", \"has_weight\": true, \"has_bias\": true, \"n\": 1024, "
            "\"m_bucket\": 4, \"config\": {\"block_size\": 1024, \"num_warps\": 4, \"rows_per_cta\": 1, "
            "\"group_size_m\": 0, \"cluster_size\": 1}, \"default\": true, \"status\": \"ok\", \"median_us\": 10, "
            "\"reps\": 2, \"screen_us\": 10.5, \"message\": \"\"}\n"
            "{\"event\": \"candidate\", \"gpu\": \"NVIDIA H100 80GB HBM3\", \"sm_count\": 132, \"kernel\": \"fwd\", "
            "\"x_dtype\": \"bf16\", \"w_dtype\": \"bf16\", \"has_weight\": true, \"has_bias\": true, \"n\": 1024, "
            "\"m_bucket\": 4, \"config\": {\"block_size\": 2048, \"num_warps\": 4, \"rows_per_cta\": 1, "
            "\"group_size_m\": 0, \"cluster_size\": 1}, \"default\": false, \"status\": \"screened_out\", "
            "\"median_us\": null, \"reps\": 0, \"screen_us\": 12.25, \"message\": \"\"}\n"
            "{\"event\": \"key\", \"gpu\": \"NVIDIA H100 80GB HBM3\", \"sm_count\": 132, \"kernel\": \"fwd\", "
            "\"x_dtype\": \"bf16\", \"w_dtype\": \"bf16\", \"has_weight\": true, \"has_bias\": true, \"n\": 1024, "
            "\"m_bucket\": 4, \"state\": \"tuned\", \"config\": {\"block_size\": 1024, \"num_warps\": 4, "
            "\"rows_per_cta\": 1, \"group_size_m\": 0, \"cluster_size\": 1}, \"median_us\": 10, \"device\": 1, "
            "\"warm\": false, \"prior\": false, \"seconds\": 0.5, \"setup_s\": 0, \"t_s\": 0, "
            "\"phases\": {\"compile_wait_s\": 0, \"load_s\": 0, "
            "\"verify_s\": 0, \"reference_wait_s\": 0, \"compare_s\": 0, \"warmup_s\": 0, \"rewarm_s\": 0, "
            "\"rewarms\": 0, \"reps_s\": 0}}\n");
}

TEST(Trace, VariantsAreNamedAndLayerNormKeepsItsFields) {
  std::ostringstream os;
  TraceWriter t(os, nullptr);
  cache::TuneKey k = key(2048);
  k.traits.norm = Norm::rms;
  k.traits.has_bias = false;
  k.traits.residual = DType::f32;
  t.candidate_done(k, 0, candidate(kA, Status::ok, 10.0, 10.5, true));
  EXPECT_NE(os.str().find("\"m_bucket\": 4, \"variant\": \"rmsnorm+residual_fp32\", \"config\""), std::string::npos)
      << os.str();
  std::ostringstream plain;
  TraceWriter t2(plain, nullptr);
  t2.candidate_done(key(2048), 0, candidate(kA, Status::ok, 10.0, 10.5, true));
  EXPECT_EQ(plain.str().find("variant"), std::string::npos) << plain.str();
}

std::string run_command(const std::string& cmd, int* code) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

bool have_python() {
  int code = -1;
  run_command("python3 -c 'import json'", &code);
  return code == 0;
}

// bench/compare_winners.py [extra] on tmp's pruned.trace and full.trace.
std::string compare_winners(const TempDir& tmp, int* code, const std::string& extra = "") {
  return run_command("python3 '" + std::string(LNTUNE_SOURCE_DIR) + "/bench/compare_winners.py' " + extra + " '" +
                         (tmp / "pruned.trace") + "' '" + (tmp / "full.trace") + "'",
                     code);
}

// A bwd_dx key (or its bwd_dwdb key, M bucket 2) at N, tuned to `winner`.
KeyResult bwd_result(Kernel k, std::int64_t n, Config winner, double median) {
  KeyResult kr = key_result(n, winner, median, 0);
  kr.key.traits.kernel = k;
  kr.record->key = kr.key;
  if (k == Kernel::bwd_dwdb) kr.key.m_bucket = kr.record->key.m_bucket = 2;
  return kr;
}

JointTiming finalist(Config dx, std::int64_t p, double backward, double dflt, double best, bool won) {
  JointTiming j;
  j.config = dx;
  j.partial_rows = p;
  j.backward_us = backward;
  j.dwdb_default_us = dflt;
  j.dwdb_best_us = best;
  j.dwdb = Config{32, 16, 1, 1, 1};
  j.chosen = won;
  return j;
}

// A joint finalist names its bwd_dwdb key's form (as the text report
// prints it) and whether the launcher finishes dW/dB in its dx kernel, so
// that bench/tune_gaps.py can tell a bwd_dwdb record that only serves as
// the fallback from one the backward runs.
TEST(Trace, JointFinalistsNameTheirDwdbFormAndFinish) {
  std::ostringstream os;
  TraceWriter t(os, nullptr);
  KeyResult dx = bwd_result(Kernel::bwd_dx, 1536, Config{1536, 6, 2, 264, 1}, 20.0);
  dx.key.traits.has_bias = false;  // RMSNorm's affine: the reduction's key is "bf16 noB"
  JointTiming in = finalist(Config{1536, 6, 2, 264, 1}, 264, 20.0, 8.0, 8.0, true);
  in.finishes_in_kernel = true;
  dx.joint = {in, finalist(Config{2048, 8, 2, 132, 1}, 132, 21.0, 8.0, 7.0, false)};
  t.key_done(dx);
  const std::string line = os.str();
  EXPECT_NE(line.find("\"dwdb_form\": \"bf16 noB\", \"joint\": [{\"config\""), std::string::npos) << line;
  EXPECT_NE(line.find("\"partial_rows\": 264, \"backward_us\": 20, \"dwdb_default_us\": 8, \"dwdb_best_us\": 8, "
                      "\"dwdb_config\": {\"block_size\": 32, \"num_warps\": 16, \"rows_per_cta\": 1, "
                      "\"group_size_m\": 1, \"cluster_size\": 1}, \"chosen\": true, \"finishes_in_kernel\": true}"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("\"chosen\": false, \"finishes_in_kernel\": false}"), std::string::npos) << line;
}

// The backward is compared by its objective, dx + dW/dB (the joint
// finalists in the bwd_dx key events), and a bwd_dwdb key whose two runs
// reduced different partial-row counts is shown but not judged.
TEST(Trace, CompareWinnersComparesTheBackwardJointly) {
  if (!have_python()) GTEST_SKIP() << "no python3";
  int code = -1;
  const Config dx132{2048, 8, 2, 132, 1}, dx264{2048, 16, 1, 264, 1};
  const Config r9{128, 16, 1, 9, 1}, r1{32, 16, 1, 1, 1};
  TempDir tmp;
  {
    // Pruned: dx132 (P = 132) won jointly: 50 - 10 + 8 = 48 against 49 - 10 + 9.5 = 48.5.
    std::ofstream pf(tmp / "pruned.trace");
    TraceWriter p(pf, nullptr);
    KeyResult dx = bwd_result(Kernel::bwd_dx, 2048, dx132, 50.0);
    dx.joint = {finalist(dx132, 132, 50.0, 10.0, 8.0, true), finalist(dx264, 264, 49.0, 10.0, 9.5, false)};
    p.key_done(dx);
    p.key_done(bwd_result(Kernel::bwd_dwdb, 2048, r1, 8.0));
    // Exhaustive: dx264 won (49.2 - 10 + 9 = 48.2); dx132's pair there: 50.4 - 10 + 8.2 = 48.6 (0.8% slower).
    std::ofstream ff(tmp / "full.trace");
    TraceWriter f(ff, nullptr);
    f.candidate_done(key(2048), 0, candidate(kA, Status::ok, 10.0, std::nullopt, true));
    KeyResult fdx = bwd_result(Kernel::bwd_dx, 2048, dx264, 49.2);
    fdx.joint = {finalist(dx264, 264, 49.2, 10.0, 9.0, true), finalist(dx132, 132, 50.4, 10.0, 8.2, false)};
    f.key_done(fdx);
    f.key_done(bwd_result(Kernel::bwd_dwdb, 2048, r9, 9.0));
  }
  const std::string out = compare_winners(tmp, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("b2048 w8 r2 g132       b2048 w16 r1 g264        1.008  joint  ok"), std::string::npos) << out;
  EXPECT_NE(out.find("other P (P = 132 and 264: not judged"), std::string::npos) << out;
  EXPECT_NE(out.find("pruned vs exhaustive: 1 keys compared, 1 within 2%"), std::string::npos) << out;
}

TEST(Trace, CompareWinnersReadsTwoTraces) {
  if (!have_python()) GTEST_SKIP() << "no python3";
  int code = -1;
  TempDir tmp;
  {
    // The pruned run chose kA at N=1024 (exhaustive: kB, kA measured at
    // 1.01x there) and kC at N=2048 (the same as exhaustive).
    std::ofstream pf(tmp / "pruned.trace");
    TraceWriter p(pf, nullptr);
    p.key_done(key_result(1024, kA, 10.0, 0));
    p.key_done(key_result(2048, kC, 20.0, 0));
    std::ofstream ff(tmp / "full.trace");
    TraceWriter f(ff, nullptr);
    f.candidate_done(key(1024), 0, candidate(kA, Status::slower, 10.1, std::nullopt, true));
    f.candidate_done(key(1024), 1, candidate(kB, Status::ok, 10.0, std::nullopt));
    f.key_done(key_result(1024, kB, 10.0, 0));
    f.candidate_done(key(2048), 0, candidate(kC, Status::ok, 19.0, std::nullopt, true));
    f.key_done(key_result(2048, kC, 19.0, 0));
  }
  const std::string out = compare_winners(tmp, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("fwd bf16 N=1024 M-bucket 4         b1024 w4 r1            b2048 w4 r1              1.010  slower"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("fwd bf16 N=2048 M-bucket 4         b1024 w8 r1            b1024 w8 r1              1.000  same"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("pruned vs exhaustive: 2 keys compared, 2 within 2% of the exhaustive winner's median, worst "
                     "1.0% (fwd bf16 N=1024 M-bucket 4); FAIL (target: all of >= 30 keys)"),
            std::string::npos)
      << out;
  const std::string strict = compare_winners(tmp, &code, "--limit 0.005");
  EXPECT_NE(strict.find("1.010  slower SLOWER"), std::string::npos) << strict;
}

// Where the exhaustive run's final timed both configs in turn, those
// medians are compared (its careful medians drifted: kA looked 4% slower).
TEST(Trace, CompareWinnersUsesTheExhaustiveRunsFinal) {
  if (!have_python()) GTEST_SKIP() << "no python3";
  int code = -1;
  TempDir tmp;
  {
    std::ofstream pf(tmp / "pruned.trace");
    TraceWriter p(pf, nullptr);
    p.key_done(key_result(1024, kA, 10.0, 0));
    std::ofstream ff(tmp / "full.trace");
    TraceWriter f(ff, nullptr);
    f.candidate_done(key(1024), 0, candidate(kA, Status::slower, 10.4, std::nullopt, true));
    f.candidate_done(key(1024), 1, candidate(kB, Status::ok, 10.0, std::nullopt));
    KeyResult kr = key_result(1024, kB, 10.0, 0);
    CandidateResult a = candidate(kA, Status::slower, 10.4, std::nullopt, true);
    CandidateResult b = candidate(kB, Status::ok, 10.0, std::nullopt);
    a.final = Measurement{summarize({10.06, 10.05, 10.04, 10.05, 10.05, 10.05}), StopReason::max_reps};
    b.final = Measurement{summarize({10.0, 10.0, 10.0, 10.0, 10.0, 10.0}), StopReason::max_reps};
    kr.outcome.candidates = {a, b};
    kr.outcome.winner = 1;
    f.key_done(kr);
  }
  std::ifstream in(tmp / "full.trace");
  const std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(full.find("\"final\": [{\"config\": {\"block_size\": 1024"), std::string::npos) << full;
  EXPECT_NE(full.find("\"median_us\": 10.05, \"rounds\": 6}"), std::string::npos) << full;
  const std::string out = compare_winners(tmp, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("1.005  final  ok"), std::string::npos) << out;
}

TEST(Progress, LinesNameTheGpuWithSeveral) {
  char* buf = nullptr;
  std::size_t size = 0;
  FILE* f = ::open_memstream(&buf, &size);
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar(f, false);
    bar.set_devices({0, 1});
    bar.begin(2, 10);
    bar.key_begin(key(1024), 5, 0);
    bar.key_begin(key(2048), 5, 1);
    KeyResult k = key_result(2048, kC, 20.0, 1);
    k.warm = true;
    k.outcome.candidates = {candidate(kC, Status::ok, 20.0, 20.0, true), candidate(kA, Status::screened_out, std::nullopt, 30.0)};
    bar.key_done(k);
  }
  std::fclose(f);
  const std::string out(buf, size);
  std::free(buf);
  EXPECT_NE(out.find("tuning 2 keys, 10 candidate configs\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpu 1 (1): [1/2] fwd bf16 N=2048 M-bucket 4 (M=4096): tuned b1024 w8 r1, 20.00 us, 0 GB/s, "
                     "1/2 timed carefully [warm] (0.5 s)\n"),
            std::string::npos)
      << out;
}

TEST(Summary, SearchLineSaysWhatEachStageRemoved) {
  SearchCounts c;
  c.candidates = 100;
  c.reused = 3;
  c.roofline = 4;
  c.screened = 90;
  c.screened_out = 80;
  c.careful = 12;
  c.pruned = 1;
  c.verified = 5;
  c.failed = 2;
  EXPECT_EQ(search_counts_line(c),
            "search: 100 candidates; removed before timing: 3 reused from the previous N, 4 by the roofline bound; 90 "
            "screened, 80 of them screened out; 12 timed carefully (1 pruned early), 5 verified, 2 failed");
  c.skipped = 7;
  EXPECT_NE(search_counts_line(c).find(", 7 skipped (budget)"), std::string::npos);
  c.finals = 3;
  c.final_changed = 1;
  EXPECT_NE(search_counts_line(c).find(", 7 skipped (budget); 3 finals (close finalists timed in turn), 1 of them "
                                       "changing the winner"),
            std::string::npos)
      << search_counts_line(c);
}

}  // namespace
