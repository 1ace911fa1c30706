// A record's origin (cache/cache.hpp): the enum and its stored text.
#include <gtest/gtest.h>

#include "cache/cache.hpp"

namespace {

using namespace lntune::cache;

TEST(Origin, TextRoundTrips) {
  std::string from = "stale";
  EXPECT_EQ(parse_origin("tuned", &from), Origin::tuned);
  EXPECT_EQ(from, "");
  EXPECT_EQ(parse_origin("tuned-partial", &from), Origin::partial);
  EXPECT_EQ(parse_origin("unknown", &from), Origin::unknown);
  EXPECT_EQ(parse_origin("merged:h100.db", &from), Origin::merged);
  EXPECT_EQ(from, "h100.db");
  EXPECT_EQ(parse_origin("something else", &from), Origin::unknown);
  EXPECT_EQ(from, "");
  for (Origin o : {Origin::tuned, Origin::partial, Origin::unknown})
    EXPECT_EQ(parse_origin(origin_text(o), nullptr), o) << to_string(o);
  EXPECT_EQ(origin_text(Origin::merged, "a.db"), "merged:a.db");
  Provenance p;
  EXPECT_EQ(p.origin, Origin::tuned);
  p.origin = Origin::merged;
  p.merged_from = "b.db";
  EXPECT_EQ(p.origin_text(), "merged:b.db");
}

}  // namespace
