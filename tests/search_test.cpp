// The search (tuner/search.hpp) over a scripted fake bench: the stop rule,
// pruning, the correctness gate, failures, the budget.
#include <gtest/gtest.h>

#include <vector>

#include "tuner/search.hpp"
#include "tuner_test_util.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;
using namespace lntune::testing;

// ------------------------------------------------------------ stop rule
TEST(StopRuleTest, Decisions) {
  StopRule rule;
  rule.min_reps = 10;
  rule.max_reps = 50;
  rule.max_seconds = 1.0;
  rule.prune_after = 5;
  rule.prune_ratio = 1.5;
  rule.target_rel_ci = 0.01;
  const std::vector<double> flat(10, 100.0);
  EXPECT_EQ(should_stop({}, 0, {}, rule), StopReason::none);
  EXPECT_EQ(should_stop(std::vector<double>(5, 100.0), 0, {}, rule), StopReason::none);  // < min_reps
  EXPECT_EQ(should_stop(flat, 0, {}, rule), StopReason::converged);
  // Prune after 5 when the median is > 1.5x the best, not at 1.4x, not at 4 reps.
  EXPECT_EQ(should_stop(std::vector<double>(5, 160.0), 0, 100.0, rule), StopReason::pruned);
  EXPECT_EQ(should_stop(std::vector<double>(4, 160.0), 0, 100.0, rule), StopReason::none);
  EXPECT_EQ(should_stop(std::vector<double>(5, 140.0), 0, 100.0, rule), StopReason::none);
  // Noisy samples: not converged before max_reps, then max_reps.
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 50.0 : 150.0);
  EXPECT_EQ(should_stop(noisy, 0, {}, rule), StopReason::none);
  std::vector<double> many;
  for (int i = 0; i < 50; ++i) many.push_back(i % 2 ? 50.0 : 150.0);
  EXPECT_EQ(should_stop(many, 0, {}, rule), StopReason::max_reps);
  EXPECT_EQ(should_stop(noisy, 1.5, {}, rule), StopReason::time_limit);
  EXPECT_EQ(should_stop({1.0, 2.0}, 5.0, {}, rule), StopReason::none);  // time limit needs 3 samples
}


TEST(Search, DefaultIsBaselineAndFasterCandidatesAreVerifiedBeforeWinning) {
  FakeBench b;
  b.by_block[1] = {10};   // default
  b.by_block[2] = {12};   // slower: not verified
  b.by_block[3] = {20};   // > 1.5x: pruned after 5 reps
  b.by_block[4] = {8};    // faster: verified, wins
  b.by_block[5] = {9};    // faster than the default, slower than 4: not verified
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1), cfg(1, 1), cfg(3, 1), cfg(4, 1), cfg(5, 1)});
  ASSERT_EQ(o.candidates.size(), 5u);  // the default appears once, first
  EXPECT_TRUE(o.candidates[0].is_default);
  EXPECT_EQ(o.candidates[0].status, Status::ok);
  EXPECT_EQ(o.candidates[1].status, Status::slower);
  EXPECT_EQ(o.candidates[2].status, Status::pruned);
  EXPECT_EQ(o.candidates[2].timing->stats.n, 5);
  EXPECT_EQ(o.candidates[3].status, Status::ok);
  EXPECT_EQ(o.candidates[4].status, Status::slower);
  ASSERT_TRUE(o.winner);
  EXPECT_EQ(o.best()->config.block_size, 4);
  EXPECT_EQ(b.verified, (std::vector<int>{1, 4}));
  EXPECT_NEAR(o.speedup(), 10.0 / 8.0, 1e-12);
  EXPECT_FALSE(o.partial);
}

TEST(Search, FailuresAreRecordedAndNeverChosen) {
  FakeBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {1, true};          // compile error
  b.by_block[3] = {1, false, true};   // launch error
  b.by_block[4] = {2, false, false, true};  // fastest but wrong
  b.by_block[5] = {7};
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1), cfg(3, 1), cfg(4, 1), cfg(5, 1)});
  EXPECT_EQ(o.candidates[1].status, Status::compile_error);
  EXPECT_NE(o.candidates[1].message.find("nvrtc: boom"), std::string::npos);
  EXPECT_EQ(o.candidates[2].status, Status::launch_error);
  EXPECT_NE(o.candidates[2].message.find("OUT_OF_RESOURCES"), std::string::npos);
  EXPECT_EQ(o.candidates[3].status, Status::wrong);
  EXPECT_NE(o.candidates[3].message.find("elements wrong"), std::string::npos);
  EXPECT_EQ(o.candidates[4].status, Status::ok);
  EXPECT_EQ(o.best()->config.block_size, 5);
  // A compile error is never timed.
  EXPECT_EQ(std::count(b.timed.begin(), b.timed.end(), 2), 0);
}

TEST(Search, WrongDefaultLeavesTheFirstCorrectCandidateToWin) {
  FakeBench b;
  b.by_block[1] = {10, false, false, true};
  b.by_block[2] = {30};
  b.by_block[3] = {20};
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1), cfg(3, 1)});
  EXPECT_EQ(o.candidates[0].status, Status::wrong);
  EXPECT_EQ(o.candidates[1].status, Status::ok);  // no best yet: verified
  EXPECT_EQ(o.candidates[2].status, Status::ok);
  EXPECT_EQ(o.best()->config.block_size, 3);
  EXPECT_NEAR(o.speedup(), 10.0 / 20.0, 1e-12);  // vs the (wrong) default's time
}

TEST(Search, NothingCorrectMeansNoWinner) {
  FakeBench b;
  b.by_block[1] = {10, true};
  b.by_block[2] = {10, false, false, true};
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1)});
  EXPECT_FALSE(o.winner);
  EXPECT_EQ(o.best(), nullptr);
  EXPECT_EQ(o.speedup(), 0);
}

TEST(Search, BudgetStopsAndKeepsTheBestSoFar) {
  FakeBench b;
  b.by_block[1] = {10};
  b.by_block[2] = {5};
  b.by_block[3] = {1};
  int calls = 0;
  SearchOptions so;
  so.out_of_time = [&calls] { return ++calls > 1; };  // spent after one more candidate
  std::vector<std::size_t> reported;
  so.on_result = [&](std::size_t i, const CandidateResult&) { reported.push_back(i); };
  const Outcome o = search(b, cfg(1, 1), {cfg(2, 1), cfg(3, 1)}, so);
  EXPECT_TRUE(o.partial);
  EXPECT_EQ(o.candidates[1].status, Status::ok);
  EXPECT_EQ(o.candidates[2].status, Status::skipped);
  EXPECT_EQ(o.best()->config.block_size, 2);
  EXPECT_EQ(reported, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(Search, FatalErrorPropagates) {
  FakeBench b;
  b.by_block[1] = {10};
  b.by_block[2].fatal = true;
  EXPECT_THROW(search(b, cfg(1, 1), {cfg(2, 1)}), FatalError);
}

// A reference that fails the CPU's check is the key's fault, not a
// candidate's: the search does not record it as a launch error and go on
// (every candidate would "fail" and the key would end with no winner,
// quietly); it stops, and the tuner fails the key with the message.
TEST(Search, KeyErrorPropagates) {
  FakeBench b;
  b.by_block[1] = {10};
  b.by_block[1].bad_reference = true;
  b.by_block[2] = {5};
  try {
    search(b, cfg(1, 1), {cfg(2, 1)});
    FAIL() << "expected a KeyError";
  } catch (const KeyError& e) {
    EXPECT_NE(std::string(e.what()).find("y [0, 3]"), std::string::npos) << e.what();
  }
}


}  // namespace
