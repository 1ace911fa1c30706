#include "tuner/search.hpp"

#include <algorithm>
#include <cstdio>

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
    case Status::reused: return "reused";
    case Status::roofline: return "roofline";
    case Status::screened_out: return "screened_out";
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

SearchCounts& SearchCounts::operator+=(const SearchCounts& o) {
  candidates += o.candidates;
  failed += o.failed;
  reused += o.reused;
  roofline += o.roofline;
  screened += o.screened;
  screened_out += o.screened_out;
  careful += o.careful;
  pruned += o.pruned;
  verified += o.verified;
  skipped += o.skipped;
  finals += o.finals;
  final_changed += o.final_changed;
  return *this;
}

SearchCounts Outcome::counts() const {
  SearchCounts c;
  c.candidates = candidates.size();
  for (const CandidateResult& r : candidates) {
    if (r.screen) ++c.screened;
    if (r.timing) ++c.careful;
    switch (r.status) {
      case Status::compile_error:
      case Status::launch_error: ++c.failed; break;
      case Status::wrong: ++c.failed, ++c.verified; break;
      case Status::ok: ++c.verified; break;
      case Status::pruned: ++c.pruned; break;
      case Status::reused: ++c.reused; break;
      case Status::roofline: ++c.roofline; break;
      case Status::screened_out: ++c.screened_out; break;
      case Status::skipped: ++c.skipped; break;
      case Status::slower: break;
    }
  }
  // A final ran: did the careful medians rank another verified finalist
  // first?
  const CandidateResult* careful_best = nullptr;
  for (const CandidateResult& r : candidates)
    if (r.final && r.status == Status::ok && (!careful_best || r.timing->stats.median < careful_best->timing->stats.median))
      careful_best = &r;
  if (careful_best) {
    ++c.finals;
    if (best() && best() != careful_best) ++c.final_changed;
  }
  return c;
}

double roofline_floor_us(double bytes, double copy_gbps, double headroom) {
  if (!(bytes > 0) || !(copy_gbps > 0) || !(headroom > 0)) return 0;
  return bytes / (copy_gbps * headroom * 1e3);  // bytes / (GB/s * 1e9) s, in us
}

bool roofline_prunes(double floor_us, std::optional<double> best_median_us) {
  return best_median_us && floor_us > 0 && floor_us >= *best_median_us;
}

bool within_screen_margin(double screen_us, std::optional<double> reference_us, double margin) {
  return !reference_us || screen_us <= (1.0 + margin) * *reference_us;
}

std::vector<std::size_t> careful_order(const std::vector<std::optional<double>>& screen_us) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < screen_us.size(); ++i)
    if (screen_us[i]) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return *screen_us[a] < *screen_us[b]; });
  return idx;
}

namespace {
std::string ratio_text(double x) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.2fx", x);
  return b;
}
}  // namespace

std::optional<std::string> reuse_reason(const Outcome& prev, std::int64_t prev_n, const Config& c,
                                        double dominated_ratio) {
  const CandidateResult* mine = nullptr;
  for (const CandidateResult& r : prev.candidates)
    if (r.config == c) mine = &r;
  if (!mine || mine->is_default) return std::nullopt;
  const std::string at = " at N=" + std::to_string(prev_n);
  if (mine->status == Status::compile_error || mine->status == Status::launch_error)
    return std::string(to_string(mine->status)) + at;
  const CandidateResult* w = prev.best();
  if (!w || w == mine || mine->status == Status::wrong) return std::nullopt;
  double ratio = 0;
  if (mine->screen && w->screen && w->screen->stats.median > 0)
    ratio = mine->screen->stats.median / w->screen->stats.median;
  else if (mine->timing && w->timing && w->timing->stats.median > 0)
    ratio = mine->timing->stats.median / w->timing->stats.median;
  if (ratio > dominated_ratio) return ratio_text(ratio) + " the winner's time" + at;
  return std::nullopt;
}

// Runs one step of a candidate; a candidate's failure becomes its recorded
// status (CandidateError's own, else `otherwise`), never an abort. Only a
// FatalError (the context is unusable) ends the run, and a KeyError (the
// key's reference is wrong) the key's search.
template <class Step>
bool attempt(CandidateResult& r, Status otherwise, Step&& step) {
  try {
    step();
    return true;
  } catch (const FatalError&) {
    throw;
  } catch (const KeyError&) {
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

std::vector<std::size_t> final_candidates(const Outcome& out, double margin, std::size_t most) {
  std::vector<std::size_t> fin;
  if (!out.winner) return fin;
  const double w = out.candidates[*out.winner].timing->stats.median;
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    const CandidateResult& r = out.candidates[i];
    if ((r.status == Status::ok || r.status == Status::slower) && r.timing && r.timing->stop != StopReason::pruned &&
        r.timing->stats.median <= (1.0 + margin) * w)
      fin.push_back(i);
  }
  std::stable_sort(fin.begin(), fin.end(), [&](std::size_t a, std::size_t b) {
    return out.candidates[a].timing->stats.median < out.candidates[b].timing->stats.median;
  });
  if (fin.size() > most) fin.resize(most);
  return fin;
}

namespace {

// S4 (FinalOptions): the finalists timed in turn; the least
// median of round medians wins. A finalist whose timing throws ends the
// final with nothing changed (its careful result stands).
void run_final(Bench& bench, Outcome& out, const FinalOptions& o, const std::function<bool()>& spent) {
  if (o.rounds <= 0 || !out.winner || spent()) return;
  if (!(out.candidates[*out.winner].timing->stats.median < o.max_us)) return;
  const std::vector<std::size_t> fin = final_candidates(out, o.margin, o.size);
  if (fin.size() < 2) return;
  std::vector<std::vector<double>> rounds(fin.size());
  try {
    for (int k = 0; k < o.rounds; ++k)
      for (std::size_t j = 0; j < fin.size(); ++j) {
        const std::size_t f = (j + static_cast<std::size_t>(k)) % fin.size();
        rounds[f].push_back(bench.screen(out.candidates[fin[f]].config, o.reps).stats.median);
      }
  } catch (const FatalError&) {
    throw;
  } catch (const KeyError&) {
    throw;
  } catch (const std::exception&) {
    return;
  }
  std::vector<std::size_t> order(fin.size());
  for (std::size_t f = 0; f < fin.size(); ++f) {
    out.candidates[fin[f]].final = Measurement{summarize(rounds[f]), StopReason::max_reps};
    order[f] = f;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return out.candidates[fin[a]].final->stats.median < out.candidates[fin[b]].final->stats.median;
  });
  for (std::size_t f : order) {
    CandidateResult& r = out.candidates[fin[f]];
    if (r.status == Status::ok || verify_candidate(bench, r)) {
      out.winner = fin[f];
      return;
    }
  }
}

Outcome initial_outcome(const Config& default_config, const std::vector<Config>& space) {
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
  return out;
}

// The careful step shared by both searches: time with pruning against the
// best, then verify when faster. Returns true when `r` became the best.
bool careful_step(Bench& bench, CandidateResult& r, std::optional<double> best, bool prepared) {
  const bool timed = prepared ? attempt(r, Status::launch_error, [&] { r.timing = bench.time(r.config, best); })
                              : prepare_and_time(bench, r, best);
  if (!timed) return false;
  if (r.timing->stop == StopReason::pruned && best) {
    r.status = Status::pruned;
    r.message = "median after " + std::to_string(r.timing->stats.n) + " repetitions is " +
                std::to_string(r.timing->stats.median / *best) + "x the best";
    return false;
  }
  if (best && !(r.timing->stats.median < *best)) {
    r.status = Status::slower;
    return false;
  }
  return verify_candidate(bench, r);
}

Outcome search_exhaustive(Bench& bench, const Config& default_config, const std::vector<Config>& space,
                          const SearchOptions& options) {
  Outcome out = initial_outcome(default_config, space);
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
    if (careful_step(bench, r, i == 0 ? std::nullopt : best, false)) out.winner = i;
    report(i);
  }
  if (!out.partial) run_final(bench, out, options.final, spent);
  return out;
}

Outcome search_staged(Bench& bench, const Config& default_config, const std::vector<Config>& space,
                      const SearchOptions& options) {
  Outcome out = initial_outcome(default_config, space);
  const std::size_t n = out.candidates.size();
  auto spent = [&] { return options.out_of_time && options.out_of_time(); };
  auto report = [&](std::size_t i) {
    if (options.on_result) options.on_result(i, out.candidates[i]);
  };
  auto best_median = [&]() -> std::optional<double> {
    if (!out.winner) return std::nullopt;
    return out.candidates[*out.winner].timing->stats.median;
  };
  // The reference of S3: the best verified candidate's screening median.
  auto best_screen = [&]() -> std::optional<double> {
    if (!out.winner || !out.candidates[*out.winner].screen) return std::nullopt;
    return out.candidates[*out.winner].screen->stats.median;
  };
  auto skip = [&](std::size_t j) {
    out.candidates[j].status = Status::skipped;
    out.candidates[j].message = "the time budget was spent";
    report(j);
    out.partial = true;
  };
  auto roofline_check = [&](CandidateResult& r, std::optional<double> bound) {
    if (!options.floor_us) return false;
    const double floor = options.floor_us(r.config);
    if (!roofline_prunes(floor, bound)) return false;
    r.status = Status::roofline;
    r.message = "needs at least " + std::to_string(floor) + " us at copy speed; the best takes " +
                std::to_string(*bound) + " us";
    return true;
  };
  std::vector<std::optional<double>> screen_us(n);
  std::optional<double> fastest_screen;  // S2's reference for cutting a screening short
  const bool cut = options.screen_cut > 1 && options.screen_cut_after > 0 &&
                   options.screen_cut_after < options.screen_reps;
  // S2 for one candidate: prepare and screen; false when it failed.
  auto screen_one = [&](std::size_t i) {
    CandidateResult& r = out.candidates[i];
    if (!prepare_candidate(bench, r) || !attempt(r, Status::launch_error, [&] {
          r.screen = cut && fastest_screen
                         ? bench.screen_cut(r.config, options.screen_reps, options.screen_cut_after,
                                            options.screen_cut * *fastest_screen)
                         : bench.screen(r.config, options.screen_reps);
        }))
      return false;
    screen_us[i] = r.screen->stats.median;
    if (!fastest_screen || *screen_us[i] < *fastest_screen) fastest_screen = screen_us[i];
    return true;
  };

  // The baseline: timed carefully and screened first; verified after S2, so
  // that the CPU reference (computed in the background) overlaps the
  // screening. Until then its median bounds S1 provisionally.
  CandidateResult& d = out.candidates[0];
  const bool base_timed = prepare_and_time(bench, d, std::nullopt);
  if (base_timed) {
    CandidateResult scratch;  // a failed screening leaves the baseline unscreened, nothing else
    attempt(scratch, Status::launch_error, [&] { d.screen = bench.screen(d.config, options.screen_reps); });
    if (d.screen) fastest_screen = d.screen->stats.median;
  }
  // (Assigned, not built with ?:, which GCC 12 at -O2 flags as a false
  // maybe-uninitialized.)
  std::optional<double> provisional;
  if (base_timed) provisional.emplace(d.timing->stats.median);

  // S0-S2.
  std::vector<std::size_t> provisional_roofline;
  std::size_t next = 1;
  bool out_of_time = false;
  for (; next < n; ++next) {
    CandidateResult& r = out.candidates[next];
    if (spent()) {
      out_of_time = true;
      break;
    }
    if (options.reuse) {
      if (auto why = options.reuse(r.config)) {
        r.status = Status::reused;
        r.message = *why;
        report(next);
        continue;
      }
    }
    if (roofline_check(r, provisional)) {
      provisional_roofline.push_back(next);
      continue;  // reported once the baseline is verified
    }
    if (!screen_one(next)) report(next);
  }

  // The baseline's verification; when it fails, the provisional roofline
  // decisions are void and those candidates are screened after all.
  if (base_timed && verify_candidate(bench, d)) out.winner = 0;
  report(0);
  for (std::size_t i : provisional_roofline) {
    CandidateResult& r = out.candidates[i];
    if (out.winner) {
      report(i);
      continue;
    }
    r.status = Status::skipped;
    r.message.clear();
    if (out_of_time || spent()) {
      out_of_time = true;
      skip(i);
    } else if (!screen_one(i)) {
      report(i);
    }
  }
  for (std::size_t j = next; j < n; ++j) skip(j);

  // S3, fastest screening first.
  const std::vector<std::size_t> order = careful_order(screen_us);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    CandidateResult& r = out.candidates[i];
    if (out_of_time || spent()) {
      out_of_time = true;
      skip(i);
      continue;
    }
    const std::optional<double> ref = best_screen();
    if (!within_screen_margin(*screen_us[i], ref, options.screen_margin)) {
      r.status = Status::screened_out;
      r.message = "screening median " + ratio_text(*screen_us[i] / *ref) + " the best's";
      report(i);
      continue;
    }
    if (roofline_check(r, best_median())) {
      report(i);
      continue;
    }
    if (careful_step(bench, r, best_median(), true)) out.winner = i;
    report(i);
  }
  if (!out_of_time) run_final(bench, out, options.final, spent);
  return out;
}

}  // namespace

Outcome search(Bench& bench, const Config& default_config, const std::vector<Config>& space,
               const SearchOptions& options) {
  return options.screen_reps > 0 ? search_staged(bench, default_config, space, options)
                                 : search_exhaustive(bench, default_config, space, options);
}

}  // namespace lntune::tune
