// lntune::tune — the search over one key's candidates, independent of how
// they are compiled, timed and checked (the Bench interface: a GPU in the
// tuner, a fake in tests).
//
// Two ways to search (SearchOptions::screen_reps):
//
// Exhaustive (screen_reps == 0, `lntune tune --full`), the rules in order:
//   1. The default heuristic's config is the baseline: prepared, timed to
//      convergence (never pruned) and verified against the CPU reference.
//      When it verifies it is the first "best".
//   2. Every other candidate of the space, in the order given: prepared
//      (compile failure: compile_error), timed (launch failure, e.g. too many
//      resources: launch_error), and
//        - pruned: after `prune_after` repetitions its median exceeds
//          prune_ratio x the best verified median: it cannot win, timing
//          stops there;
//        - slower: timed to convergence, not faster than the best: it cannot
//          win, so it is not verified (saves a GPU->host copy and a compare);
//        - faster than the best: verified before it may become the best
//          (ok), or recorded as wrong and never chosen.
//   3. The budget is checked before each candidate: when it is spent, the
//      remaining candidates are recorded as skipped and the outcome is
//      partial; the best verified so far still wins.
//
// Staged (screen_reps > 0, the default of `lntune tune`): the baseline is
// timed to convergence and screened first, but verified only after S2, so
// that the CPU reference (computed in the background) overlaps the
// screening; then
//   S0. reuse: a candidate that failed, or was plainly dominated, at a
//       neighbouring N (SearchOptions::reuse says so) is not run: reused;
//   S1. roofline: a candidate whose floor_us (bytes it moves at copy speed,
//       see roofline_floor_us) is not below the best median cannot win even
//       at copy speed: roofline, never run. During S2 the bound is the
//       baseline's median, provisionally: should the baseline then fail its
//       verification, those candidates are screened after all;
//   S2. screening: every remaining candidate is prepared and timed with
//       screen_reps repetitions (L2 flushed, no stop rule); with screen_cut,
//       a candidate whose first screen_cut_after repetitions have a median
//       above screen_cut x the fastest screening median so far stops there
//       (far off: its short screening still counts in S3, where it is
//       screened out unless the reference fails its verification);
//   S3. careful stage: the screened candidates in order of their screening
//       median (ties: space order); a candidate whose screening median is
//       more than (1 + screen_margin) x the screening median of the best
//       verified so far is screened_out (and so is every one after it);
//       the others go through the roofline check again (against the new
//       best) and then rule 2 (timed to convergence with pruning, verified
//       when faster). The correctness gate is unchanged: nothing becomes the
//       best without verifying.
//   The budget is checked before each candidate of S2 and S3, as in 3.
// A failed candidate is a recorded result, never an abort. Only a FatalError
// (the GPU context is unusable) ends the search, by propagating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lntune/types.hpp"
#include "tuner/stats.hpp"

namespace lntune::tune {

// When the runner stops repeating a candidate.
struct StopRule {
  int min_reps = 20;            // never fewer (unless pruned or over max_seconds)
  int max_reps = 400;           // never more
  double max_seconds = 2.0;     // wall time of one candidate's repetitions
  double target_rel_ci = 0.01;  // stop when the median's CI is within +-1%
  double confidence = 0.95;
  int prune_after = 5;          // repetitions before the prune check
  double prune_ratio = 1.5;     // prune when median > prune_ratio x best
};

enum class StopReason { none, converged, max_reps, time_limit, pruned };
const char* to_string(StopReason r);

// The stop rule as a pure function of the samples so far (microseconds), the
// wall time spent on them and the best verified median (none: no pruning).
// Checks, in order: pruned (n >= prune_after and median > ratio x best),
// converged (n >= min_reps and the CI half-width <= target), max_reps,
// time_limit (elapsed >= max_seconds and n >= 3). `scratch` avoids
// allocating (see summarize).
StopReason should_stop(const std::vector<double>& samples_us, double elapsed_s,
                       std::optional<double> best_median_us, const StopRule& rule,
                       std::vector<double>* scratch = nullptr);

// One candidate's timing.
struct Measurement {
  Summary stats;  // over the repetitions, in microseconds
  StopReason stop = StopReason::none;
};

enum class Status {
  ok,             // timed and verified against the reference
  slower,         // timed, never faster than the best verified: not verified
  pruned,         // stopped early: cannot win
  compile_error,  // NVRTC failed, or the config is invalid for this N
  launch_error,   // the launch failed (e.g. too many resources requested)
  wrong,          // faster, but its outputs do not match the reference
  skipped,        // not tried: the budget was spent
  // Staged search only (see above):
  reused,         // not run: failed or plainly dominated at a neighbouring N
  roofline,       // not run: cannot beat the best even at copy speed
  screened_out,   // screened only: beyond the margin of the best
};
const char* to_string(Status s);

struct CandidateResult {
  Config config;
  bool is_default = false;
  Status status = Status::skipped;
  std::string message;  // why it failed; empty when ok
  std::optional<Measurement> timing;  // the careful measurement (stop rule)
  std::optional<Measurement> screen;  // the screening (staged search)
  // S4, the final (FinalOptions): its interleaved timing;
  // stats are over the round medians (n: rounds).
  std::optional<Measurement> final;
};

// What the search needs from a machine. Implementations throw:
//   FatalError          the machine can go on with nothing (propagated);
//   KeyError            this key cannot be tuned, e.g. its reference failed
//                       the CPU's check (propagated: the tuner fails the key);
//   CandidateError      the candidate failed with the status it carries;
//   any other exception prepare(): compile_error; time()/verify(): launch_error.
class Bench {
 public:
  virtual ~Bench() = default;
  // Makes the config runnable (waits for its compilation, loads it).
  virtual void prepare(const Config& c) = 0;
  // Times it; with prune_above_us set, the runner may stop early and report
  // StopReason::pruned.
  virtual Measurement time(const Config& c, std::optional<double> best_median_us) = 0;
  // A quick timing of exactly `reps` repetitions, no stop rule (the staged
  // search's screening). A bench without a cheaper way times to convergence.
  virtual Measurement screen(const Config& c, int reps) {
    (void)reps;
    return time(c, std::nullopt);
  }
  // The same, stopping after `first` repetitions (StopReason::pruned) when
  // their median exceeds stop_above_us. A bench without a cheaper way
  // screens all `reps`.
  virtual Measurement screen_cut(const Config& c, int reps, int first, double stop_above_us) {
    (void)first, (void)stop_above_us;
    return screen(c, reps);
  }
  // Runs it once on poisoned outputs and compares with the reference: an
  // empty string when correct, else what is wrong.
  virtual std::string verify(const Config& c) = 0;
};

class FatalError : public Error {
 public:
  using Error::Error;
};
// The key, not the candidate, is at fault: no candidate can be judged (the
// workload's reference disagrees with the CPU oracle). The search stops and
// the key fails with this message; the next key goes on.
class KeyError : public Error {
 public:
  using Error::Error;
};
class CandidateError : public Error {
 public:
  CandidateError(Status s, const std::string& what) : Error(what), status_(s) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

// S4, the final, after either search. Medians of a short kernel drift by a
// few percent over seconds (clocks, power), more than the stop rule's CI, so
// candidates timed one after the other can swap places from one run to the
// next. When the winner's median is below max_us, the candidates timed
// carefully within (1 + margin) x its median (at most `size`, fastest
// first, the winner among them) are timed again in turn: `rounds` rounds,
// each screening every finalist with `reps` repetitions, the order rotating
// from round to round. The finalist with the least median of its round
// medians wins (verified first, when it was not; a wrong one drops out).
// Not run when the budget is spent, nor with rounds = 0.
struct FinalOptions {
  int rounds = 0;
  int reps = 8;
  double margin = 0.03;
  std::size_t size = 6;
  double max_us = 200;
};

struct SearchOptions {
  // Called before each candidate; true means the budget is spent.
  std::function<bool()> out_of_time;
  // Called after each candidate (progress reporting): index, result.
  std::function<void(std::size_t, const CandidateResult&)> on_result;

  // The staged search (see above); 0: exhaustive.
  int screen_reps = 0;
  // S3: careful timing for screening medians within (1 + margin) x the
  // best verified candidate's.
  double screen_margin = 0.10;
  // S2: screen_cut > 1: stop a screening after screen_cut_after repetitions
  // when its median is above screen_cut x the fastest screening so far
  // (0: every screening takes screen_reps).
  double screen_cut = 0;
  int screen_cut_after = 2;
  // S1: a lower bound of a config's time in microseconds (the roofline
  // model); unset: no roofline pruning.
  std::function<double(const Config&)> floor_us;
  // S0: why a config need not run (its result at a neighbouring N), or
  // nothing; unset: no reuse. Never asked about the default.
  std::function<std::optional<std::string>(const Config&)> reuse;
  // S4, the final (FinalOptions); none unless final.rounds > 0.
  FinalOptions final;
};

// How many candidates each stage removed (counted from the statuses).
struct SearchCounts {
  std::size_t candidates = 0;  // the default included
  std::size_t failed = 0;      // compile_error, launch_error, wrong
  std::size_t reused = 0, roofline = 0, screened = 0, screened_out = 0;
  std::size_t careful = 0;     // timed with the stop rule
  std::size_t pruned = 0;      // of those, stopped early by the prune rule
  std::size_t verified = 0;    // verify ran (ok or wrong)
  std::size_t skipped = 0;     // budget
  // S4: searches that ran a final, and of those, where it chose another
  // winner than the careful medians had.
  std::size_t finals = 0, final_changed = 0;
  SearchCounts& operator+=(const SearchCounts& o);
};

// The roofline model: the time `bytes` take at `headroom` x the copy
// bandwidth (GB/s, read + written), in microseconds; 0 (no bound) when the
// bandwidth is unknown. headroom > 1 leaves room for kernels that beat a
// plain device-to-device copy.
double roofline_floor_us(double bytes, double copy_gbps, double headroom = 1.15);

// S1 as a pure rule: true when a candidate with this floor cannot beat the
// best verified median (strictly faster is needed to win).
bool roofline_prunes(double floor_us, std::optional<double> best_median_us);

// S3 as a pure rule: whether a screening median is within the margin of the
// reference (the best verified candidate's screening median; none: every
// candidate is within).
bool within_screen_margin(double screen_us, std::optional<double> reference_us, double margin);

// S3's order: indices of `screen_us` that have a value, by value, ties by
// index.
std::vector<std::size_t> careful_order(const std::vector<std::optional<double>>& screen_us);

struct Outcome {
  std::vector<CandidateResult> candidates;  // [0] is the default (baseline)
  std::optional<std::size_t> winner;        // index of the best verified
  bool partial = false;                     // the budget ended the search
  const CandidateResult* best() const { return winner ? &candidates[*winner] : nullptr; }
  const CandidateResult& baseline() const { return candidates.front(); }
  // default median / winner median; 0 when either is unknown.
  double speedup() const;
  SearchCounts counts() const;
};

// S4's finalists: indices of the candidates timed carefully to the end (ok
// or slower) with medians within (1 + margin) x the winner's, fastest first
// (ties: index), at most `most`; empty without a winner.
std::vector<std::size_t> final_candidates(const Outcome& out, double margin, std::size_t most);

// S0 as a pure rule over the outcome at a neighbouring N (prev_n): a reason
// to skip `c` when it failed to compile or launch there, or was plainly
// dominated there (its median > dominated_ratio x the winner's, comparing
// screening medians when both have one, else careful medians); else none.
// The caller checks the config compiles to the same kind of kernel at both
// N (see tuner.cpp). Candidates skipped there (reused, roofline, budget)
// give no evidence.
std::optional<std::string> reuse_reason(const Outcome& prev, std::int64_t prev_n, const Config& c,
                                        double dominated_ratio = 2.0);

// The steps for one candidate, failures classified as described for Bench:
// each returns false when the candidate failed (r.status and r.message set).
// verify_candidate sets ok, wrong, or the failure's status.
bool prepare_candidate(Bench& bench, CandidateResult& r);
bool prepare_and_time(Bench& bench, CandidateResult& r, std::optional<double> best_median_us);
bool verify_candidate(Bench& bench, CandidateResult& r);

// Runs the rules above over `space` (duplicates of the default are skipped).
Outcome search(Bench& bench, const Config& default_config, const std::vector<Config>& space,
               const SearchOptions& options = {});

}  // namespace lntune::tune
