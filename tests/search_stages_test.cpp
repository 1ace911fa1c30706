// The staged search and its pure rules (ctest label "cpu"): the roofline
// bound, the screening margin and order, reuse from the previous N, the
// staged search over a scripted bench (what each stage removes, and that the
// correctness gate still holds), and the warm re-tune's decision and space.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "lntune/lntune.hpp"
#include "runtime/driver.hpp"
#include "tuner/search.hpp"
#include "tuner/stats.hpp"
#include "tuner/tuner.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;

Config cfg(int block, int warps = 1, int rows = 1, int group = 0, int cluster = 1) {
  return Config{block, warps, rows, group, cluster};
}

// ------------------------------------------------------------ pure rules
TEST(Roofline, FloorIsBytesAtCopySpeedWithHeadroom) {
  // 3e9 bytes at 3000 GB/s: 1 ms; with 1.5x headroom: 2/3 ms.
  EXPECT_DOUBLE_EQ(roofline_floor_us(3e9, 3000, 1.0), 1000.0);
  EXPECT_NEAR(roofline_floor_us(3e9, 3000, 1.5), 1000.0 / 1.5, 1e-9);
  EXPECT_NEAR(roofline_floor_us(12e6, 3000), 12e6 / (3000 * 1.15 * 1e3), 1e-12);
  // Unknown bandwidth or bytes: no bound.
  EXPECT_EQ(roofline_floor_us(3e9, 0), 0);
  EXPECT_EQ(roofline_floor_us(0, 3000), 0);
  EXPECT_EQ(roofline_floor_us(3e9, 3000, 0), 0);
}

TEST(Roofline, PrunesOnlyWhatCannotBeStrictlyFaster) {
  EXPECT_FALSE(roofline_prunes(5.0, std::nullopt));  // nothing verified yet
  EXPECT_FALSE(roofline_prunes(5.0, 5.5));
  EXPECT_TRUE(roofline_prunes(5.5, 5.5));            // equal cannot win
  EXPECT_TRUE(roofline_prunes(6.0, 5.5));
  EXPECT_FALSE(roofline_prunes(0.0, 1.0));           // no bound
}

TEST(Screening, MarginAndOrder) {
  EXPECT_TRUE(within_screen_margin(100, std::nullopt, 0.1));
  EXPECT_TRUE(within_screen_margin(110, 100, 0.1));
  EXPECT_FALSE(within_screen_margin(110.01, 100, 0.1));
  EXPECT_TRUE(within_screen_margin(90, 100, 0.0));
  EXPECT_FALSE(within_screen_margin(100.5, 100, 0.0));
  const std::vector<std::optional<double>> s = {std::nullopt, 3.0, 1.0, std::nullopt, 3.0, 2.0};
  EXPECT_EQ(careful_order(s), (std::vector<std::size_t>{2, 5, 1, 4}));  // ties by index
  EXPECT_TRUE(careful_order({}).empty());
}

// An outcome as a search at a neighbouring N left it.
Outcome neighbour_outcome() {
  Outcome o;
  auto add = [&o](Config c, Status s, std::optional<double> careful, std::optional<double> screen) {
    CandidateResult r;
    r.config = c;
    r.status = s;
    if (careful) r.timing = Measurement{summarize({*careful}), StopReason::converged};
    if (screen) r.screen = Measurement{summarize({*screen}), StopReason::max_reps};
    o.candidates.push_back(r);
  };
  add(cfg(1), Status::ok, 10.0, 10.0);                   // [0] default
  o.candidates[0].is_default = true;
  add(cfg(2), Status::ok, 8.0, 8.0);                     // [1] winner
  add(cfg(3), Status::screened_out, std::nullopt, 16.5); // [2] 2.06x by screening
  add(cfg(4), Status::screened_out, std::nullopt, 15.0); // [3] 1.875x: not plainly dominated
  add(cfg(5), Status::launch_error, std::nullopt, std::nullopt);
  add(cfg(6), Status::compile_error, std::nullopt, std::nullopt);
  add(cfg(7), Status::pruned, 30.0, std::nullopt);       // careful only (exhaustive run): 3.75x
  add(cfg(8), Status::roofline, std::nullopt, std::nullopt);
  add(cfg(9), Status::reused, std::nullopt, std::nullopt);
  add(cfg(10), Status::wrong, 5.0, 5.0);
  o.winner = 1;
  return o;
}

TEST(Reuse, FailuresAndPlainlyDominatedConfigsOnly) {
  const Outcome prev = neighbour_outcome();
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(1)), std::nullopt);  // the default is never skipped
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(2)), std::nullopt);  // the winner
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(3)), "2.06x the winner's time at N=4608");
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(4)), std::nullopt);
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(4), 1.5), "1.88x the winner's time at N=4608");
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(5)), "launch_error at N=4608");
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(6)), "compile_error at N=4608");
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(7)), "3.75x the winner's time at N=4608");
  // No evidence: not run there, or wrong (a correctness problem stays visible).
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(8)), std::nullopt);
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(9)), std::nullopt);
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(10)), std::nullopt);
  EXPECT_EQ(reuse_reason(prev, 4608, cfg(99)), std::nullopt);  // not in that space
  Outcome none = prev;
  none.winner.reset();
  EXPECT_EQ(reuse_reason(none, 4608, cfg(3)), std::nullopt);  // no winner there: no yardstick
  EXPECT_EQ(reuse_reason(none, 4608, cfg(5)), "launch_error at N=4608");
}

// ------------------------------------------------------------ the staged search
// A bench whose behaviour per config (by block_size) is scripted: its true
// time, the screening's error, a failure; records every call.
class StagedBench : public Bench {
 public:
  struct Script {
    double us = 10;
    double screen_us = 0;  // 0: the screening sees `us`
    bool compile_fails = false, launch_fails = false, wrong = false;
  };
  std::map<int, Script> by_block;
  std::vector<int> prepared, timed, screened, verified;

  void prepare(const Config& c) override {
    prepared.push_back(c.block_size);
    if (by_block[c.block_size].compile_fails) throw Error("nvrtc: boom");
  }
  Measurement time(const Config& c, std::optional<double> best) override {
    timed.push_back(c.block_size);
    const Script& s = by_block[c.block_size];
    if (s.launch_fails) throw Error("too many resources");
    StopRule rule;
    rule.min_reps = 10;
    std::vector<double> samples;
    StopReason r = StopReason::none;
    while (r == StopReason::none) {
      samples.push_back(s.us);
      r = should_stop(samples, 0, best, rule);
    }
    return Measurement{summarize(samples), r};
  }
  Measurement screen(const Config& c, int reps) override {
    screened.push_back(c.block_size);
    const Script& s = by_block[c.block_size];
    if (s.launch_fails) throw Error("too many resources");
    return Measurement{summarize(std::vector<double>(static_cast<std::size_t>(reps), s.screen_us > 0 ? s.screen_us : s.us)),
                       StopReason::max_reps};
  }
  std::string verify(const Config& c) override {
    verified.push_back(c.block_size);
    return by_block[c.block_size].wrong ? "y: wrong" : "";
  }
  // Records the screenings cut short (the runner's rule on constant samples).
  std::vector<int> cut;
  double last_stop_above = 0;
  Measurement screen_cut(const Config& c, int reps, int first, double stop_above_us) override {
    last_stop_above = stop_above_us;
    Measurement m = screen(c, reps);
    if (m.stats.median > stop_above_us) {
      cut.push_back(c.block_size);
      m = Measurement{summarize(std::vector<double>(static_cast<std::size_t>(first), m.stats.median)),
                      StopReason::pruned};
    }
    return m;
  }
};

SearchOptions staged(int reps = 5, double margin = 0.10) {
  SearchOptions so;
  so.screen_reps = reps;
  so.screen_margin = margin;
  return so;
}

// Every candidate is reported exactly once (progress counts them).
void expect_each_reported_once(Bench& b, const Config& def, const std::vector<Config>& space, SearchOptions so) {
  std::vector<std::size_t> seen;
  so.on_result = [&](std::size_t i, const CandidateResult&) { seen.push_back(i); };
  const Outcome o = search(b, def, space, so);
  std::sort(seen.begin(), seen.end());
  std::vector<std::size_t> want(o.candidates.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = i;
  EXPECT_EQ(seen, want);
}

Status status_of(const Outcome& o, int block) {
  for (const auto& c : o.candidates)
    if (c.config.block_size == block) return c.status;
  ADD_FAILURE() << "no candidate " << block;
  return Status::skipped;
}

TEST(StagedSearch, ScreensAllCarefullyTimesOnlyThoseWithinTheMargin) {
  StagedBench b;
  b.by_block[1] = {10};   // default
  b.by_block[2] = {9.5};  // beyond 1.1 x the best's screening (8.8): screened out
  b.by_block[3] = {8};    // the best
  b.by_block[4] = {8.9};  // 1.1125x: screened out
  b.by_block[5] = {30};   // screened out
  b.by_block[6] = {1, 0, true};  // compile error: neither screened nor timed
  const Outcome o = search(b, cfg(1), {cfg(2), cfg(3), cfg(4), cfg(5), cfg(6)}, staged());
  ASSERT_TRUE(o.winner);
  EXPECT_EQ(o.best()->config.block_size, 3);
  EXPECT_EQ(status_of(o, 1), Status::ok);
  EXPECT_EQ(status_of(o, 2), Status::screened_out);  // 9.5 > 1.1 * 8 = 8.8
  EXPECT_EQ(status_of(o, 3), Status::ok);
  EXPECT_EQ(status_of(o, 4), Status::screened_out);
  EXPECT_EQ(status_of(o, 5), Status::screened_out);
  EXPECT_EQ(status_of(o, 6), Status::compile_error);
  // The default is timed carefully and screened (the margin's first reference).
  EXPECT_EQ(b.timed, (std::vector<int>{1, 3}));
  EXPECT_EQ(b.screened, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(b.verified, (std::vector<int>{1, 3}));
  const SearchCounts c = o.counts();
  EXPECT_EQ(c.candidates, 6u);
  EXPECT_EQ(c.screened, 5u);
  EXPECT_EQ(c.screened_out, 3u);
  EXPECT_EQ(c.careful, 2u);
  EXPECT_EQ(c.verified, 2u);
  EXPECT_EQ(c.failed, 1u);
  EXPECT_EQ(c.roofline + c.reused + c.pruned + c.skipped, 0u);
  EXPECT_NEAR(o.speedup(), 10.0 / 8.0, 1e-12);
  StagedBench again = b;
  expect_each_reported_once(again, cfg(1), {cfg(2), cfg(3), cfg(4), cfg(5), cfg(6)}, staged());
}

TEST(StagedSearch, ScreeningsFarOffTheFastestStopEarlyWithTheSameOutcome) {
  StagedBench b;
  b.by_block[1] = {10};  // default: the first reference (10 x 1.5 = 15)
  b.by_block[2] = {30};  // far off: cut after 2 repetitions
  b.by_block[3] = {8};   // the best: the reference becomes 12
  b.by_block[4] = {14};  // beyond 12: cut
  b.by_block[5] = {11};  // within: screened fully (then screened out by the margin)
  SearchOptions so = staged();
  so.screen_cut = 1.5;
  so.screen_cut_after = 2;
  const std::vector<Config> space = {cfg(2), cfg(3), cfg(4), cfg(5)};
  const Outcome o = search(b, cfg(1), space, so);
  EXPECT_EQ(b.cut, (std::vector<int>{2, 4}));
  EXPECT_DOUBLE_EQ(b.last_stop_above, 12.0);
  ASSERT_TRUE(o.winner);
  EXPECT_EQ(o.best()->config.block_size, 3);
  EXPECT_EQ(status_of(o, 2), Status::screened_out);
  EXPECT_EQ(status_of(o, 4), Status::screened_out);
  EXPECT_EQ(o.candidates[1].screen->stats.n, 2);  // block 2: its short screening
  EXPECT_EQ(o.candidates[1].screen->stop, StopReason::pruned);
  // Without the cut: the same outcome, every screening full.
  StagedBench full = b;
  full.cut.clear();
  const Outcome f = search(full, cfg(1), space, staged());
  EXPECT_TRUE(full.cut.empty());
  ASSERT_TRUE(f.winner);
  EXPECT_EQ(f.best()->config, o.best()->config);
  for (std::size_t i = 0; i < o.candidates.size(); ++i) EXPECT_EQ(o.candidates[i].status, f.candidates[i].status);
}

TEST(StagedSearch, CandidatesWithinTheMarginAreTimedFastestFirst) {
  StagedBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {9.6, 9.3};  // screening says 9.3, careful 9.6
  b.by_block[3] = {9.2, 9.6};  // screening says 9.6, careful 9.2: the true best
  const Outcome o = search(b, cfg(1), {cfg(2), cfg(3)}, staged());
  EXPECT_EQ(b.timed, (std::vector<int>{1, 2, 3}));  // by screening median
  EXPECT_EQ(b.verified, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(o.best()->config.block_size, 3);
}

TEST(StagedSearch, CorrectnessGateHolds) {
  // The fastest is wrong: it never wins, and the margin is measured from the
  // best *verified* candidate, so the correct ones behind it are still timed.
  StagedBench b;
  b.by_block[1] = {10, 0, false, false, true};  // default wrong too
  b.by_block[2] = {2, 0, false, false, true};   // fastest, wrong
  b.by_block[3] = {6};
  b.by_block[4] = {6.3};  // within 10% of 6: careful, slower
  b.by_block[5] = {7};    // beyond: screened out
  const Outcome o = search(b, cfg(1), {cfg(2), cfg(3), cfg(4), cfg(5)}, staged());
  ASSERT_TRUE(o.winner);
  EXPECT_EQ(o.best()->config.block_size, 3);
  EXPECT_EQ(status_of(o, 1), Status::wrong);
  EXPECT_EQ(status_of(o, 2), Status::wrong);
  EXPECT_EQ(status_of(o, 4), Status::slower);
  EXPECT_EQ(status_of(o, 5), Status::screened_out);
  for (const auto& c : o.candidates)
    if (c.status == Status::ok) {
      EXPECT_NE(std::find(b.verified.begin(), b.verified.end(), c.config.block_size), b.verified.end());
    }
}

TEST(StagedSearch, RooflineRemovesBeforeAnythingRuns) {
  StagedBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {8};
  b.by_block[3] = {9};   // floor 9.5 >= default's 10? no: 9.5 < 10, screened; then floor >= best 8: roofline in S3
  b.by_block[4] = {12};  // floor 11 >= 10: never prepared
  SearchOptions so = staged(5, 0.5);
  so.floor_us = [](const Config& c) { return c.block_size == 4 ? 11.0 : c.block_size == 3 ? 9.5 : 1.0; };
  const Outcome o = search(b, cfg(1), {cfg(2), cfg(3), cfg(4)}, so);
  EXPECT_EQ(o.best()->config.block_size, 2);
  EXPECT_EQ(status_of(o, 4), Status::roofline);
  EXPECT_EQ(std::count(b.prepared.begin(), b.prepared.end(), 4), 0);
  EXPECT_EQ(status_of(o, 3), Status::roofline);  // second check, against the new best
  EXPECT_EQ(std::count(b.timed.begin(), b.timed.end(), 3), 0);
  EXPECT_EQ(o.counts().roofline, 2u);
  StagedBench again = b;
  expect_each_reported_once(again, cfg(1), {cfg(2), cfg(3), cfg(4)}, so);
}

TEST(StagedSearch, AWrongBaselineVoidsItsRooflineBound) {
  StagedBench b;
  b.by_block[1] = {10, 0, false, false, true};  // fast enough to bound the others, but wrong
  b.by_block[2] = {12};  // floor 11 >= 10: removed provisionally, screened after all; the winner
  b.by_block[3] = {14};
  SearchOptions so = staged(5, 0.5);
  so.floor_us = [](const Config& c) { return c.block_size == 2 ? 11.0 : 1.0; };
  const Outcome o = search(b, cfg(1), {cfg(2), cfg(3)}, so);
  EXPECT_EQ(status_of(o, 1), Status::wrong);
  ASSERT_TRUE(o.winner);
  EXPECT_EQ(o.best()->config.block_size, 2);
  EXPECT_EQ(status_of(o, 3), Status::slower);
  EXPECT_EQ(o.counts().roofline, 0u);
  EXPECT_EQ(b.screened, (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(b.verified, (std::vector<int>{1, 2}));
  StagedBench again = b;
  expect_each_reported_once(again, cfg(1), {cfg(2), cfg(3)}, so);
}

TEST(StagedSearch, ReuseSkipsWhatTheNeighbourRuledOut) {
  StagedBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {8};
  b.by_block[3] = {1};  // would win, but the neighbour says it failed
  SearchOptions so = staged();
  std::vector<int> asked;
  so.reuse = [&](const Config& c) -> std::optional<std::string> {
    asked.push_back(c.block_size);
    if (c.block_size == 3) return std::string("launch_error at N=4608");
    return std::nullopt;
  };
  const Outcome o = search(b, cfg(1), {cfg(2), cfg(3)}, so);
  EXPECT_EQ(asked, (std::vector<int>{2, 3}));  // never the default
  EXPECT_EQ(status_of(o, 3), Status::reused);
  EXPECT_EQ(o.candidates[2].message, "launch_error at N=4608");
  EXPECT_EQ(o.best()->config.block_size, 2);
  EXPECT_EQ(o.counts().reused, 1u);
}

TEST(StagedSearch, BudgetSkipsTheRestAndKeepsTheBest) {
  StagedBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {8};
  b.by_block[3] = {7};
  int calls = 0;
  SearchOptions so = staged();
  so.out_of_time = [&calls] { return ++calls > 2; };  // S2 of 2 and 3, then spent
  const Outcome o = search(b, cfg(1), {cfg(2), cfg(3)}, so);
  EXPECT_TRUE(o.partial);
  EXPECT_EQ(status_of(o, 2), Status::skipped);
  EXPECT_EQ(status_of(o, 3), Status::skipped);
  EXPECT_EQ(o.best()->config.block_size, 1);
  EXPECT_EQ(o.counts().skipped, 2u);
  StagedBench again = b;
  calls = 0;
  expect_each_reported_once(again, cfg(1), {cfg(2), cfg(3)}, so);
}

TEST(StagedSearch, ZeroRepsIsTheExhaustiveSearch) {
  StagedBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {12};
  b.by_block[3] = {8};
  const Outcome o = search(b, cfg(1), {cfg(2), cfg(3)}, staged(0));
  EXPECT_TRUE(b.screened.empty());
  EXPECT_EQ(b.timed, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(status_of(o, 2), Status::slower);
  EXPECT_EQ(o.best()->config.block_size, 3);
}

// ------------------------------------------------------------ warm re-tune
cache::TuneRecord record_with(const std::string& hash, int nvrtc, int driver,
                              cache::Origin origin = cache::Origin::tuned, const std::string& merged_from = {}) {
  cache::TuneRecord r;
  r.config = cfg(4096, 8);
  r.prov.template_hash = hash;
  r.prov.nvrtc_version = nvrtc;
  r.prov.driver_version = driver;
  r.prov.origin = origin;
  r.prov.merged_from = merged_from;
  return r;
}

TEST(WarmRetune, ModeFromProvenance) {
  cache::Provenance now;
  now.template_hash = "new";
  now.nvrtc_version = 12040;
  now.driver_version = 12050;
  EXPECT_EQ(retune_mode(std::nullopt, now, false, false), Retune::full);
  EXPECT_EQ(retune_mode(record_with("new", 12040, 12050), now, false, false), Retune::skip);
  EXPECT_EQ(retune_mode(record_with("new", 12040, 12050), now, false, true), Retune::skip);  // --full alone resumes
  EXPECT_EQ(retune_mode(record_with("new", 12040, 12050), now, true, false), Retune::warm);   // --force
  EXPECT_EQ(retune_mode(record_with("new", 12040, 12050), now, true, true), Retune::full);    // --force --full
  EXPECT_EQ(retune_mode(record_with("old", 12040, 12050), now, false, false), Retune::warm);  // only the code changed
  EXPECT_EQ(retune_mode(record_with("old", 12040, 12050), now, false, true), Retune::full);
  EXPECT_EQ(retune_mode(record_with("old", 12030, 12050), now, false, false), Retune::full);  // NVRTC changed
  EXPECT_EQ(retune_mode(record_with("old", 12040, 12040), now, false, false), Retune::full);  // driver changed
  EXPECT_EQ(retune_mode(record_with("new", 12040, 12050, cache::Origin::partial), now, false, false), Retune::full);
  // A merged record is as good as a tuned one.
  EXPECT_EQ(retune_mode(record_with("old", 12040, 12050, cache::Origin::merged, "a.db"), now, false, false), Retune::warm);
  EXPECT_STREQ(to_string(Retune::warm), "warm");
}

TEST(WarmRetune, PreviousWinnerAndItsCloseRivals) {
  const Config prev = cfg(4096, 8, 1, 264, 2);
  const std::vector<Config> space = {
      cfg(4096, 4, 1, 264, 2),   // one field halved: rival
      cfg(4096, 8, 1, 132, 2),   // group halved: rival
      prev,
      cfg(8192, 16, 1, 264, 2),  // block and warps doubled (same elements per thread): rival
      cfg(8192, 16, 1, 132, 2),  // three fields: not
      cfg(4096, 2, 1, 264, 2),   // num_warps / 4: not
      cfg(2048, 8, 1, 264, 4),   // block halved, cluster doubled: two fields, not
      cfg(4096, 8, 1, 0, 2),     // group 0 vs 264: not
      cfg(8192, 4, 1, 264, 2),   // block doubled, warps halved: not
      cfg(4096, 8, 2, 264, 2),   // rows doubled: rival
  };
  const Config def = cfg(1024, 4, 2, 512, 1);  // the default: not in the space
  EXPECT_EQ(warm_space(space, prev, def),
            (std::vector<Config>{prev, space[0], space[1], space[3], space[9]}));
  // A previous winner the space no longer lists is still re-timed, first.
  EXPECT_EQ(warm_space(space, cfg(1024, 1), def), (std::vector<Config>{cfg(1024, 1)}));
  EXPECT_EQ(warm_space({prev}, prev, def), (std::vector<Config>{prev}));
  // The previous winner is the default: the baseline, with its rivals
  // (group_size_m within a factor of two: 264 and 528 for 512).
  const std::vector<Config> around_default = {cfg(1024, 4, 2, 132, 1), cfg(1024, 4, 2, 264, 1),
                                              cfg(1024, 4, 2, 528, 1), cfg(1024, 4, 2, 1056, 1),
                                              cfg(1024, 8, 2, 528, 1), cfg(1024, 16, 2, 528, 1)};
  EXPECT_EQ(warm_space(around_default, def, def),
            (std::vector<Config>{around_default[1], around_default[2]}));  // [4]: two fields
  EXPECT_TRUE(warm_space({}, def, def).empty());
}

TEST(RelatedKeys, TheRelatedWinnerWithWiderRivalsAndTheDefaultsNeighbours) {
  // The case that a factor of two missed (H100, bwd_dx bf16 RMSNorm + residual,
  // N = 16384): the related key won with 8 warps, this one wants 32.
  const Config related = cfg(8192, 8, 3, 66, 2);
  const Config def = cfg(8192, 8, 2, 66, 2);
  const std::vector<Config> space = {
      cfg(8192, 32, 4, 66, 2),   // warps x4, rows +1: rival (factor 4)
      cfg(8192, 16, 3, 66, 2),   // warps x2: rival
      related,
      cfg(8192, 8, 3, 66, 16),   // cluster x8: not
      cfg(4096, 32, 3, 66, 2),   // block / 2, warps x4: rival
      cfg(2048, 8, 3, 264, 2),   // block / 4, group x4: rival
      cfg(2048, 32, 12, 66, 2),  // three fields: not
      cfg(8192, 8, 1, 66, 2),    // rows / 3: rival (factor 4)
      cfg(8192, 8, 2, 33, 2),    // rows and group within 2x: rival
      def,
  };
  EXPECT_EQ(related_space(space, related, def),
            (std::vector<Config>{related, space[0], space[1], space[4], space[5], space[7], space[8]}));
  // warm_space keeps to a factor of two and one field.
  EXPECT_EQ(warm_space(space, related, def), (std::vector<Config>{related, space[1]}));
  // The default's own neighbours come after the related winner's.
  const std::vector<Config> two = {cfg(512, 4, 1, 264), cfg(4096, 4, 1, 66)};
  EXPECT_EQ(related_space(two, cfg(4096, 4, 1, 132), cfg(1024, 4, 1, 132)),
            (std::vector<Config>{cfg(4096, 4, 1, 132), two[1], two[0]}));
  // The related winner is the default: the default's neighbours within 4x.
  EXPECT_EQ(related_space({cfg(1024, 16, 1), cfg(1024, 64, 1)}, cfg(1024, 4, 1), cfg(1024, 4, 1)),
            (std::vector<Config>{cfg(1024, 16, 1)}));
  EXPECT_TRUE(related_space({}, def, def).empty());
  // group_size_m does not count among the two fields (the joint choice may
  // want another partial-row count): H100, bwd_dx bf16 RMSNorm + residual,
  // N = 1024, where the related key won with b1024 w8 r2 g528.
  const Config rms = cfg(1024, 8, 2, 528, 1), own = cfg(1024, 4, 2, 512, 1);
  const std::vector<Config> small = {
      cfg(1024, 4, 1, 1056, 1),  // warps, rows and groups: rival
      cfg(1024, 4, 1, 132, 1),   // groups / 4: rival
      cfg(1024, 4, 1, 4224, 1),  // groups x8: not (the factor still holds)
      cfg(4096, 2, 1, 528, 1),   // block, warps, rows: not (nor near the default)
  };
  EXPECT_EQ(related_space(small, rms, own), (std::vector<Config>{rms, small[0], small[1]}));
}

}  // namespace
