#include "tuner/search.hpp"

#include <algorithm>

namespace lntune::tune {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::none: return "none";
    case StopReason::converged: return "converged";
    case StopReason::max_reps: return "max_reps";
    case StopReason::time_limit: return "time_limit";
    case StopReason::pruned: return "pruned";
  }
  return "?";
}

const char* to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::slower: return "slower";
    case Status::pruned: return "pruned";
    case Status::compile_error: return "compile_error";
    case Status::launch_error: return "launch_error";
    case Status::wrong: return "wrong";
    case Status::skipped: return "skipped";
  }
  return "?";
}

StopReason should_stop(const std::vector<double>& samples_us, double elapsed_s, std::optional<double> best_median_us,
                       const StopRule& rule, std::vector<double>* scratch) {
  const int n = static_cast<int>(samples_us.size());
  if (n == 0) return StopReason::none;
  const Summary s = summarize(samples_us, rule.confidence, scratch);
  if (best_median_us && n >= rule.prune_after && s.median > rule.prune_ratio * *best_median_us)
    return StopReason::pruned;
  if (n >= rule.min_reps && s.ci_rel_halfwidth() <= rule.target_rel_ci) return StopReason::converged;
  if (n >= rule.max_reps) return StopReason::max_reps;
  if (elapsed_s >= rule.max_seconds && n >= 3) return StopReason::time_limit;
  return StopReason::none;
}

double Outcome::speedup() const {
  const CandidateResult* w = best();
  const CandidateResult& d = baseline();
  if (!w || !w->timing || !d.timing || !(w->timing->stats.median > 0) || !(d.timing->stats.median > 0)) return 0;
  return d.timing->stats.median / w->timing->stats.median;
}

// Runs one step of a candidate; a candidate's failure becomes its recorded
// status (CandidateError's own, else `otherwise`), never an abort. Only a
// FatalError (the context is unusable) ends the run.
template <class Step>
bool attempt(CandidateResult& r, Status otherwise, Step&& step) {
  try {
    step();
    return true;
  } catch (const FatalError&) {
    throw;
  } catch (const CandidateError& e) {
    r.status = e.status();
    r.message = e.what();
  } catch (const std::exception& e) {
    r.status = otherwise;
    r.message = e.what();
  }
  return false;
}

bool prepare_candidate(Bench& bench, CandidateResult& r) {
  return attempt(r, Status::compile_error, [&] { bench.prepare(r.config); });
}

bool prepare_and_time(Bench& bench, CandidateResult& r, std::optional<double> best) {
  return prepare_candidate(bench, r) &&
         attempt(r, Status::launch_error, [&] { r.timing = bench.time(r.config, best); });
}

bool verify_candidate(Bench& bench, CandidateResult& r) {
  std::string why;
  if (!attempt(r, Status::launch_error, [&] { why = bench.verify(r.config); })) return false;
  if (!why.empty()) {
    r.status = Status::wrong;
    r.message = std::move(why);
    return false;
  }
  r.status = Status::ok;
  return true;
}

Outcome search(Bench& bench, const Config& default_config, const std::vector<Config>& space,
               const SearchOptions& options) {
  Outcome out;
  out.candidates.reserve(space.size() + 1);
  CandidateResult base;
  base.config = default_config;
  base.is_default = true;
  out.candidates.push_back(base);
  for (const Config& c : space) {
    if (c == default_config) continue;
    CandidateResult r;
    r.config = c;
    out.candidates.push_back(r);
  }

  auto spent = [&] { return options.out_of_time && options.out_of_time(); };
  auto report = [&](std::size_t i) {
    if (options.on_result) options.on_result(i, out.candidates[i]);
  };
  auto median_of = [&](std::size_t i) { return out.candidates[i].timing->stats.median; };

  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    CandidateResult& r = out.candidates[i];
    // The baseline is always measured: without it there is nothing to compare.
    if (i > 0 && spent()) {
      for (std::size_t j = i; j < out.candidates.size(); ++j) {
        out.candidates[j].status = Status::skipped;
        out.candidates[j].message = "the time budget was spent";
        report(j);
      }
      out.partial = true;
      break;
    }
    const std::optional<double> best = out.winner ? std::optional<double>(median_of(*out.winner)) : std::nullopt;
    if (!prepare_and_time(bench, r, i == 0 ? std::nullopt : best)) {
      report(i);
      continue;
    }
    if (r.timing->stop == StopReason::pruned && best) {
      r.status = Status::pruned;
      r.message = "median after " + std::to_string(r.timing->stats.n) + " repetitions is " +
                  std::to_string(r.timing->stats.median / *best) + "x the best";
      report(i);
      continue;
    }
    if (best && !(r.timing->stats.median < *best)) {
      r.status = Status::slower;
      report(i);
      continue;
    }
    if (verify_candidate(bench, r)) out.winner = i;
    report(i);
  }
  return out;
}

}  // namespace lntune::tune
