// A fleet's caches (ctest label "cpu"): the deterministic winner rule, merges
// in any order giving the same winners, and `lntune merge --check` (the pure
// comparison and the command).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cache/cache.hpp"
#include "lntune/lntune.hpp"
#include "temp_dir.hpp"
#include "tuner/fleet.hpp"

#ifndef LNTUNE_CLI
#error "LNTUNE_CLI must be the path of the lntune binary"
#endif

namespace {

using namespace lntune;
using namespace lntune::tune;
using lntune::testing::TempDir;

const cache::GpuId kH100{"NVIDIA H100 80GB HBM3", 9, 0, 132};
const cache::GpuId kA100{"NVIDIA A100-SXM4-80GB", 8, 0, 108};

cache::TuneRecord record(const cache::GpuId& gpu, std::int64_t n, Config c, double median_us) {
  cache::TuneRecord r;
  r.key.gpu = gpu;
  r.key.traits = Traits{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  r.key.n = n;
  r.key.m_bucket = 4;
  r.config = c;
  r.timing = {median_us, median_us * 0.95, median_us * 1.05, 40};
  r.gbps = 2500;
  r.copy_gbps = 3000;
  r.default_median_us = median_us * 1.25;
  r.prov = {"0123456789abcdef", "0.1.0", 12040, 12040, "2024-05-01T12:00:00Z", cache::Origin::tuned, ""};
  return r;
}

const Config kA{4096, 8, 1, 0, 1}, kB{4096, 16, 1, 0, 1}, kC{2048, 4, 1, 0, 2};

TEST(Winners, FasterMedianThenConfigOrder) {
  EXPECT_TRUE(cache::config_before(Config{1024, 8, 1, 0, 1}, Config{2048, 4, 1, 0, 1}));  // block first
  EXPECT_TRUE(cache::config_before(kA, kB));                                              // then warps
  EXPECT_TRUE(cache::config_before(Config{1024, 4, 1, 0, 1}, Config{1024, 4, 2, 0, 1}));
  EXPECT_TRUE(cache::config_before(Config{1024, 4, 1, 132, 1}, Config{1024, 4, 1, 264, 1}));
  EXPECT_TRUE(cache::config_before(Config{1024, 4, 1, 0, 1}, Config{1024, 4, 1, 0, 2}));
  EXPECT_FALSE(cache::config_before(kA, kA));
  const auto fast = record(kH100, 4096, kB, 9.0), slow = record(kH100, 4096, kA, 10.0);
  EXPECT_TRUE(cache::record_wins(fast, slow));
  EXPECT_FALSE(cache::record_wins(slow, fast));
  const auto tie_a = record(kH100, 4096, kA, 10.0), tie_b = record(kH100, 4096, kB, 10.0);
  EXPECT_TRUE(cache::record_wins(tie_a, tie_b));
  EXPECT_FALSE(cache::record_wins(tie_b, tie_a));
  EXPECT_FALSE(cache::record_wins(tie_a, tie_a));  // the same: neither
}

TEST(Winners, MergeOrderDoesNotMatter) {
  // Three machines; each key's winner must not depend on the merge order.
  std::vector<std::vector<cache::TuneRecord>> machines = {
      {record(kH100, 1024, kA, 5.0), record(kH100, 2048, kA, 7.0), record(kH100, 4096, kB, 3.0)},
      {record(kH100, 1024, kB, 5.0), record(kH100, 2048, kC, 6.5), record(kA100, 1024, kC, 9.0)},
      {record(kH100, 1024, kC, 5.0), record(kH100, 2048, kB, 6.5), record(kH100, 4096, kA, 3.0)},
  };
  std::vector<std::vector<cache::TuneRecord>> results;
  std::vector<int> order = {0, 1, 2};
  do {
    cache::Database merged = cache::Database::open(":memory:", cache::Database::Mode::read_write_create);
    for (int i : order) {
      cache::Database one = cache::Database::open(":memory:", cache::Database::Mode::read_write_create);
      for (const auto& r : machines[static_cast<std::size_t>(i)]) one.upsert(r);
      merged.merge_from(one);
    }
    auto recs = merged.records();
    for (auto& r : recs) r.prov.merged_from.clear();  // the file name differs with the order
    results.push_back(recs);
  } while (std::next_permutation(order.begin(), order.end()));
  for (const auto& r : results) EXPECT_EQ(r, results.front());
  const auto& m = results.front();
  ASSERT_EQ(m.size(), 4u);
  auto config_of = [&](const cache::GpuId& g, std::int64_t n) {
    for (const auto& r : m)
      if (r.key.gpu == g && r.key.n == n) return r.config;
    return Config{};
  };
  EXPECT_EQ(config_of(kH100, 1024), kC);  // three-way tie at 5.0: 2048 < 4096 in block order
  EXPECT_EQ(config_of(kH100, 2048), kC);  // 6.5 tie between kC and kB: kC's block is smaller
  EXPECT_EQ(config_of(kH100, 4096), kA);  // tie: kA before kB
  EXPECT_EQ(config_of(kA100, 1024), kC);
}

TEST(MergeCheck, ConflictsAgreementsAndSpread) {
  const std::vector<std::pair<std::string, std::vector<cache::TuneRecord>>> files = {
      {"a.db", {record(kH100, 1024, kA, 10.0), record(kH100, 2048, kA, 7.0), record(kA100, 1024, kA, 9.0)}},
      {"b.db", {record(kH100, 1024, kB, 9.0), record(kH100, 2048, kA, 7.35), record(kH100, 8192, kA, 20.0)}},
      {"c.db", {record(kH100, 1024, kA, 10.5), record(kA100, 1024, kB, 9.0)}},
  };
  const MergeCheck c = check_merge(files);
  EXPECT_EQ(c.files, 3u);
  EXPECT_EQ(c.keys, 4u);  // H100 1024, 2048, 8192; A100 1024 (another model: another key)
  ASSERT_EQ(c.shared.size(), 3u);
  EXPECT_EQ(c.conflicts(), 2u);
  // In key order: A100 first (name order), then the H100 keys by N.
  const KeyComparison& a100 = c.shared[0];
  EXPECT_EQ(a100.key.gpu, kA100);
  EXPECT_TRUE(a100.conflict);
  EXPECT_EQ(a100.winner().file, "a.db");  // tie at 9.0: kA before kB
  EXPECT_DOUBLE_EQ(a100.spread, 0.0);
  const KeyComparison& h1024 = c.shared[1];
  EXPECT_EQ(h1024.key.n, 1024);
  EXPECT_TRUE(h1024.conflict);
  ASSERT_EQ(h1024.entries.size(), 3u);
  EXPECT_EQ(h1024.winner().file, "b.db");
  EXPECT_EQ(h1024.entries[1].file, "a.db");
  EXPECT_EQ(h1024.entries[2].file, "c.db");
  EXPECT_NEAR(h1024.spread, 10.5 / 9.0 - 1, 1e-12);
  const KeyComparison& h2048 = c.shared[2];
  EXPECT_FALSE(h2048.conflict);
  EXPECT_NEAR(h2048.spread, 0.05, 1e-12);
  EXPECT_NEAR(c.max_agreement_spread(), 0.05, 1e-12);

  std::ostringstream os;
  print_merge_check(os, c);
  const std::string out = os.str();
  EXPECT_NE(out.find("conflict: NVIDIA H100 80GB HBM3 fwd bf16 N=1024 M-bucket 4: spread 16.7%\n"
                     "  winner b4096 w16 r1  9.00 us  b.db\n"
                     "         b4096 w8 r1  10.00 us  a.db\n"
                     "         b4096 w8 r1  10.50 us  c.db\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("3 files, 4 keys, 3 in more than one file: 2 with conflicting winners, 1 agreeing (timing spread "
                     "of the same config up to 5.0%)\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("N=2048"), std::string::npos);  // agreements are only counted
}

TEST(MergeCheck, TheWinnerIsWhatMergeKeeps) {
  const std::vector<std::pair<std::string, std::vector<cache::TuneRecord>>> files = {
      {"a.db", {record(kH100, 1024, kB, 10.0)}},
      {"b.db", {record(kH100, 1024, kA, 10.0)}},
  };
  const MergeCheck c = check_merge(files);
  ASSERT_EQ(c.shared.size(), 1u);
  cache::Database merged = cache::Database::open(":memory:", cache::Database::Mode::read_write_create);
  for (const auto& [name, recs] : files) {
    cache::Database one = cache::Database::open(":memory:", cache::Database::Mode::read_write_create);
    for (const auto& r : recs) one.upsert(r);
    merged.merge_from(one);
  }
  EXPECT_EQ(merged.records().front().config, c.shared[0].winner().record.config);
  EXPECT_EQ(c.shared[0].winner().file, "b.db");
}

// ------------------------------------------------------------ the command
struct Result {
  int code = -1;
  std::string out;
};

Result run(const TempDir& tmp, const std::string& args) {
  const std::string cmd = "env -u LNTUNE_CACHE_PATH -u XDG_CACHE_HOME HOME='" + tmp.path() + "' LNTUNE_CACHE='" +
                          (tmp / "user.db") + "' '" + LNTUNE_CLI + "' " + args + " 2>&1";
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(MergeCheckCli, ReportsAndOptionallyWrites) {
  TempDir tmp;
  {
    cache::Database a = cache::Database::open(tmp / "a.db", cache::Database::Mode::read_write_create);
    a.upsert(record(kH100, 1024, kA, 10.0));
    a.upsert(record(kH100, 2048, kA, 7.0));
    cache::Database b = cache::Database::open(tmp / "b.db", cache::Database::Mode::read_write_create);
    b.upsert(record(kH100, 1024, kB, 9.0));
    b.upsert(record(kH100, 2048, kA, 7.0));
  }
  const Result r = run(tmp, "merge --check '" + (tmp / "a.db") + "' '" + (tmp / "b.db") + "'");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("conflict: NVIDIA H100 80GB HBM3 fwd bf16 N=1024 M-bucket 4: spread 11.1%"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  winner b4096 w16 r1  9.00 us  " + (tmp / "b.db")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 files, 2 keys, 2 in more than one file: 1 with conflicting winners, 1 agreeing"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(std::ifstream(tmp / "m.db").good());  // --check alone writes nothing

  const Result w = run(tmp, "merge --check '" + (tmp / "a.db") + "' '" + (tmp / "b.db") + "' -o '" + (tmp / "m.db") + "'");
  EXPECT_EQ(w.code, 0) << w.out;
  EXPECT_NE(w.out.find("1 with conflicting winners"), std::string::npos) << w.out;
  const cache::Database m = cache::Database::open(tmp / "m.db", cache::Database::Mode::read_only);
  EXPECT_EQ(m.records().size(), 2u);
  EXPECT_EQ(m.records().front().config, kB);

  const Result u = run(tmp, "merge '" + (tmp / "a.db") + "' '" + (tmp / "b.db") + "'");
  EXPECT_NE(u.code, 0);
  EXPECT_NE(u.out.find("merge: -o/--output FILE is required (or --check to only report)"), std::string::npos) << u.out;
}

TEST(MergeCheckCli, TextFromTheFilesIsMadeSafeToPrint) {
  // A GPU name with a terminal escape, from a hostile cache file: printed
  // escaped (h14's terminal_text), never raw.
  TempDir tmp;
  cache::GpuId evil = kH100;
  evil.name = "Evil\x1b[2J GPU";
  {
    cache::Database a = cache::Database::open(tmp / "a.db", cache::Database::Mode::read_write_create);
    a.upsert(record(evil, 1024, kA, 10.0));
    cache::Database b = cache::Database::open(tmp / "b.db", cache::Database::Mode::read_write_create);
    b.upsert(record(evil, 1024, kB, 9.0));
  }
  const Result r = run(tmp, "merge --check '" + (tmp / "a.db") + "' '" + (tmp / "b.db") + "'");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("conflict: Evil\\x1b[2J GPU fwd bf16 N=1024"), std::string::npos) << r.out;
}

}  // namespace
