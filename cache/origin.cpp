// Origin <-> its stored text.
#include "cache/cache.hpp"

namespace lntune::cache {
namespace {
constexpr std::string_view kMergedPrefix = "merged:";
}  // namespace

std::string_view to_string(Origin o) {
  switch (o) {
    case Origin::tuned: return "tuned";
    case Origin::partial: return "tuned-partial";
    case Origin::merged: return "merged";
    case Origin::unknown: return "unknown";
  }
  return "unknown";
}

std::string origin_text(Origin o, const std::string& merged_from) {
  if (o == Origin::merged) return std::string(kMergedPrefix) + merged_from;
  return std::string(to_string(o));
}

Origin parse_origin(std::string_view text, std::string* merged_from) {
  if (merged_from) merged_from->clear();
  if (text == "tuned") return Origin::tuned;
  if (text == "tuned-partial") return Origin::partial;
  if (text.substr(0, kMergedPrefix.size()) == kMergedPrefix) {
    if (merged_from) *merged_from = std::string(text.substr(kMergedPrefix.size()));
    return Origin::merged;
  }
  return Origin::unknown;
}

}  // namespace lntune::cache
