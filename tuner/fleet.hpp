// lntune::tune — a fleet's caches: what `lntune merge --check` reports about
// cache files tuned on different machines before they are merged into one.
// Pure functions over records (no GPU, no SQLite).
//
// For every key (GPU model, canonical traits, N, M bucket) held by more than
// one file:
//   * the winner is chosen as Database::merge_from chooses it
//     (cache::record_wins: the faster median, ties by config order), so the
//     report names the config the merged file will hold, whatever the order
//     of the files;
//   * a conflict: the files' configs differ; reported with every file's
//     config and median, and the timing spread (slowest median / fastest
//     median - 1);
//   * an agreement: same config everywhere; its spread says how much the
//     machines' timings of one config differ (noise, clocks, thermals).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cache/cache.hpp"

namespace lntune::tune {

struct FleetEntry {
  std::string file;
  cache::TuneRecord record;
};

struct KeyComparison {
  cache::TuneKey key;
  std::vector<FleetEntry> entries;  // one per file holding the key, the winner first (then by record_wins, file order)
  bool conflict = false;            // configs differ
  double spread = 0;                // slowest / fastest median - 1 (0 when a median is not positive)
  const FleetEntry& winner() const { return entries.front(); }
};

struct MergeCheck {
  std::size_t files = 0;
  std::size_t keys = 0;                // distinct keys over all files
  std::vector<KeyComparison> shared;   // keys in two or more files, in key order
  std::size_t conflicts() const;
  double max_agreement_spread() const;  // over the shared keys whose configs agree
};

// The comparison of the files' records (file name, its records). A file
// listing one key twice counts once (its first record).
MergeCheck check_merge(const std::vector<std::pair<std::string, std::vector<cache::TuneRecord>>>& files);

// The report: one line per conflict (key, each file's config and median,
// the winner marked, the spread), then the totals.
void print_merge_check(std::ostream& os, const MergeCheck& c);

}  // namespace lntune::tune
