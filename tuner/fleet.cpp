#include "tuner/fleet.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "tuner/report.hpp"

namespace lntune::tune {

namespace {

// A total order of keys (the cache's listing order).
using KeyOrder = std::tuple<std::string, int, int, int, int, int, int, bool, bool, int, std::int64_t>;
KeyOrder order_of(const cache::TuneKey& k) {
  const Traits t = k.traits.canonical();
  return {k.gpu.name, k.gpu.cc_major, k.gpu.cc_minor, k.gpu.sm_count, static_cast<int>(t.kernel),
          static_cast<int>(t.x_dtype), static_cast<int>(t.w_dtype), t.has_weight, t.has_bias, k.m_bucket, k.n};
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof(b), f, v);
  return b;
}

}  // namespace

std::size_t MergeCheck::conflicts() const {
  return static_cast<std::size_t>(std::count_if(shared.begin(), shared.end(), [](const auto& k) { return k.conflict; }));
}

double MergeCheck::max_agreement_spread() const {
  double m = 0;
  for (const auto& k : shared)
    if (!k.conflict) m = std::max(m, k.spread);
  return m;
}

MergeCheck check_merge(const std::vector<std::pair<std::string, std::vector<cache::TuneRecord>>>& files) {
  MergeCheck out;
  out.files = files.size();
  std::map<KeyOrder, KeyComparison> by_key;
  for (const auto& [file, records] : files)
    for (const cache::TuneRecord& r : records) {
      KeyComparison& k = by_key[order_of(r.key)];
      if (k.entries.empty()) k.key = r.key;
      const bool seen = std::any_of(k.entries.begin(), k.entries.end(), [&](const FleetEntry& e) { return e.file == file; });
      if (!seen) k.entries.push_back(FleetEntry{file, r});
    }
  out.keys = by_key.size();
  for (auto& [order, k] : by_key) {
    if (k.entries.size() < 2) continue;
    // Winner first; stable, so equal records keep the files' order.
    std::stable_sort(k.entries.begin(), k.entries.end(),
                     [](const FleetEntry& a, const FleetEntry& b) { return cache::record_wins(a.record, b.record); });
    double lo = k.entries.front().record.timing.median_us, hi = lo;
    for (const FleetEntry& e : k.entries) {
      k.conflict = k.conflict || e.record.config != k.entries.front().record.config;
      lo = std::min(lo, e.record.timing.median_us);
      hi = std::max(hi, e.record.timing.median_us);
    }
    k.spread = lo > 0 ? hi / lo - 1 : 0;
    out.shared.push_back(std::move(k));
  }
  return out;
}

void print_merge_check(std::ostream& os, const MergeCheck& c) {
  for (const KeyComparison& k : c.shared) {
    if (!k.conflict) continue;
    os << "conflict: " << k.key.gpu.name << " " << key_label(k.key) << ": spread " << fmt("%.1f%%", 100 * k.spread)
       << "\n";
    for (std::size_t i = 0; i < k.entries.size(); ++i) {
      const FleetEntry& e = k.entries[i];
      os << "  " << (i == 0 ? "winner " : "       ") << short_config(e.record.config) << "  "
         << fmt("%.2f", e.record.timing.median_us) << " us  " << e.file << "\n";
    }
  }
  const std::size_t agree = c.shared.size() - c.conflicts();
  os << c.files << " files, " << c.keys << " keys, " << c.shared.size() << " in more than one file: " << c.conflicts()
     << " with conflicting winners, " << agree << " agreeing";
  if (agree > 0) os << " (timing spread of the same config up to " << fmt("%.1f%%", 100 * c.max_agreement_spread()) << ")";
  os << "\n";
}

}  // namespace lntune::tune
