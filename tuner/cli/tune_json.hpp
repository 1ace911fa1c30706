// lntune CLI: `lntune tune --json`, the summary of a tune as one JSON
// document. Apart from the command so that tests can feed it summaries
// (tests/tune_json_test.cpp) without a GPU.
//
// Without --devices: {"lntune_version", "cache", then one summary's fields:
// "gpu", "driver_version", "copy_gbps", "devices", "keys" (one object per
// key: the key's fields, "m", "state", "message", "device", "warm",
// "config" (null without a record), "median_us", "gbps", "copy_gbps",
// "default_median_us", "speedup_vs_default", "seconds"), "counts" (per
// state), "geomean_speedup_vs_default", "speedup_vs_default_by_bucket"
// ([{"m_bucket", "kernel" (null: the whole bucket), "keys", "geomean",
// "min", "max"}]), "compile", "wall_s", "budget_spent", "fatal"}. With
// --devices: "summaries" (one such object per GPU model), "counts" and
// "fatal" over all of them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tuner/tuner.hpp"

namespace lntune::cli {

// A key's state as an identifier, for tools: "tuned", "partial", "cached",
// "skipped_budget", "no_winner", "failed".
const char* state_id(tune::KeyResult::State st);

// `several`: --devices was given (the "summaries" form even for one model).
void write_tune_json(std::ostream& os, const std::vector<tune::TuneSummary>& summaries, bool several,
                     const std::string& cache_path);

}  // namespace lntune::cli
