// Joint bwd_dx + bwd_dwdb tuning (issue 10), GPU-free (ctest label "cpu"):
// which bwd_dx candidates are finalists, and which pair wins by the sum of
// the times, on fake timings.
#include <gtest/gtest.h>

#include "tuner/tuner.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;

// A bwd_dx candidate with group_size_m `g` (its partial rows), status and
// whole-backward median (none: not timed to convergence).
CandidateResult dx(int g, Status s, std::optional<double> us, bool is_default = false) {
  CandidateResult r;
  r.config = Config{1024, 4, 2, g, 1};
  r.status = s;
  r.is_default = is_default;
  if (us) {
    r.timing = Measurement{Summary{}, StopReason::converged};
    r.timing->stats.median = *us;
  }
  return r;
}

std::int64_t rows_of(const Config& c) { return c.group_size_m; }

Outcome dx_outcome() {
  Outcome o;
  o.candidates = {
      dx(512, Status::ok, 42.0, true),           // 0 default, verified
      dx(264, Status::ok, 40.0),                 // 1 the winner
      dx(528, Status::slower, 41.0),             // 2 within 5%
      dx(1056, Status::slower, 41.5),            // 3 within 5%
      dx(132, Status::slower, 43.0),             // 4 beyond 5%
      dx(264, Status::slower, 40.5),             // 5 same P as the winner
      dx(2048, Status::pruned, 40.1),            // 6 pruned: no careful time
      dx(4096, Status::screened_out, std::nullopt),  // 7
      dx(128, Status::wrong, 39.0),              // 8 wrong: never
  };
  o.winner = 1;
  return o;
}

// A finalist with its times only (the fields pick_joint reads).
JointTiming timing(std::size_t dx, double backward, std::optional<double> dflt, std::optional<double> best) {
  JointTiming t;
  t.dx = dx;
  t.backward_us = backward;
  t.dwdb_default_us = dflt;
  t.dwdb_best_us = best;
  return t;
}

TEST(JointTuning, FinalistsAreCloseCarefullyTimedAndOnePerPartialRowCount) {
  const Outcome o = dx_outcome();
  EXPECT_EQ(dx_finalists(o, rows_of, 0.05, 3), (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_EQ(dx_finalists(o, rows_of, 0.05, 2), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(dx_finalists(o, rows_of, 0.10, 10), (std::vector<std::size_t>{1, 2, 3, 0, 4}));
  EXPECT_EQ(dx_finalists(o, rows_of, 0.0, 3), (std::vector<std::size_t>{1}));
  EXPECT_EQ(dx_finalists(o, rows_of, 0.05, 0), (std::vector<std::size_t>{}));
  Outcome none = o;
  none.winner.reset();
  EXPECT_TRUE(dx_finalists(none, rows_of, 0.05, 3).empty());
}

TEST(JointTuning, TheLeastSumWinsNotTheFastestBwdDx) {
  // backward = dx + default dwdb. Finalist 0 is the fastest backward with
  // the default dwdb (40), but its partials reduce no faster with a tuned
  // dwdb; finalist 1 (41) has partials a tuned dwdb reduces in 3 us less.
  std::vector<JointTiming> t(3);
  t[0] = timing(1, 40.0, 10.0, 9.5);  // sum 39.5
  t[1] = timing(2, 41.0, 12.0, 8.0);  // sum 37.0
  t[2] = timing(3, 41.5, 9.0, 9.0);   // sum 41.5
  EXPECT_EQ(pick_joint(t), std::optional<std::size_t>(1));
  // Separately chosen (fastest bwd_dx, then its own best dwdb) would be 0.
  t[1].dwdb_best_us = 11.0;  // sum 40.0: now 0 wins
  EXPECT_EQ(pick_joint(t), std::optional<std::size_t>(0));
}

TEST(JointTuning, TiesGoToTheEarlierAndIncompleteEntriesNeverWin) {
  std::vector<JointTiming> t(3);
  t[0] = timing(1, 40.0, 10.0, std::nullopt);  // its dwdb had no winner
  t[1] = timing(2, 40.0, 10.0, 8.0);           // 38
  t[2] = timing(3, 40.0, 10.0, 8.0);           // 38: a tie with 1
  EXPECT_EQ(pick_joint(t), std::optional<std::size_t>(1));
  t[1].dwdb_default_us.reset();  // baseline failed: unknown sum
  EXPECT_EQ(pick_joint(t), std::optional<std::size_t>(2));
  EXPECT_EQ(pick_joint({}), std::nullopt);
  EXPECT_EQ(pick_joint({timing(0, 40.0, std::nullopt, 5.0)}), std::nullopt);
}

}  // namespace
