// The tuner's counter-based random inputs (tuner/random_fill.hpp), no GPU:
// an element depends only on (dtype, offset, scale, seed, index), whether
// the fill tabulates every sum's rounded value (large fills) or rounds each
// element (small ones), and the returned magnitude is the largest written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "tuner/host_dtype.hpp"
#include "tuner/random_fill.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;

double value_at(const std::vector<unsigned char>& b, DType d, std::size_t i) {
  switch (d) {
    case DType::f32: {
      float f;
      std::memcpy(&f, b.data() + 4 * i, 4);
      return f;
    }
    case DType::f16: {
      std::uint16_t h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      return ref::to_double<DType::f16>(h);
    }
    case DType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      return ref::to_double<DType::bf16>(h);
    }
  }
  return 0;
}

TEST(RandomFill, TheTableAndTheDirectRoundingGiveTheSameBits) {
  for (DType d : {DType::f32, DType::f16, DType::bf16}) {
    const std::size_t es = dtype_size(d);
    const std::int64_t big = std::int64_t{4} * rnd::kSums + 70001, small = 70001;  // tabulated, and not
    std::vector<unsigned char> a(static_cast<std::size_t>(big) * es), b(static_cast<std::size_t>(small) * es);
    rnd::fill(a.data(), d, big, 0.5, 2.0, 99);
    const double mb = rnd::fill(b.data(), d, small, 0.5, 2.0, 99);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), b.size()), 0) << to_string(d);
    // The magnitude returned is the largest |value| written.
    double m = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(small); ++i) m = std::max(m, std::fabs(value_at(b, d, i)));
    EXPECT_EQ(mb, m) << to_string(d);
    // Another seed gives other values.
    const std::vector<unsigned char> t = rnd::table(d, 0.5, 2.0);
    ASSERT_EQ(t.size(), std::size_t{rnd::kSums} * es);
    std::vector<unsigned char> c(b.size());
    rnd::fill(c.data(), d, small, 0.5, 2.0, 100);
    EXPECT_NE(std::memcmp(b.data(), c.data(), b.size()), 0) << to_string(d);
    // The table is monotonic in the sum (offset + scale * normal, rounded).
    for (std::uint32_t s = 1; s < rnd::kSums; s += 997) EXPECT_LE(value_at(t, d, s - 1), value_at(t, d, s));
  }
}

// A slice drawn on its own (rnd::fill_range) is bit for bit the same slice
// of a whole fill, for every dtype, on the small (rounded per element) and
// the tabulated path, for ranges inside one generator chunk, across chunk
// boundaries, at the start and at the end; its magnitude is the slice's.
TEST(RandomFill, ARangeIsTheSameSliceOfTheWholeFill) {
  for (DType d : {DType::f32, DType::f16, DType::bf16}) {
    const std::size_t es = dtype_size(d);
    const std::int64_t total = std::int64_t{5} * rnd::kSums + 12345;  // spans 21 generator chunks
    std::vector<unsigned char> whole(static_cast<std::size_t>(total) * es);
    rnd::fill(whole.data(), d, total, 0.5, 2.0, 0xfeedULL);
    struct Range {
      std::int64_t start, count;
    };
    for (const Range r : {Range{0, 1}, Range{0, 65536}, Range{1, 7}, Range{65535, 2}, Range{65536, 1},
                          Range{12345, 4099}, Range{100000, 200001}, Range{3, std::int64_t{4} * rnd::kSums + 1},
                          Range{total - 1, 1}, Range{total - 70000, 70000}, Range{0, total}}) {
      std::vector<unsigned char> part(static_cast<std::size_t>(r.count) * es, 0xA5);
      const double m = rnd::fill_range(part.data(), d, r.start, r.count, 0.5, 2.0, 0xfeedULL);
      EXPECT_EQ(std::memcmp(part.data(), whole.data() + static_cast<std::size_t>(r.start) * es, part.size()), 0)
          << to_string(d) << " [" << r.start << ", +" << r.count << ")";
      double want = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(r.count); ++i)
        want = std::max(want, std::fabs(value_at(part, d, i)));
      EXPECT_EQ(m, want) << to_string(d) << " [" << r.start << ", +" << r.count << ")";
    }
    // Nothing to draw: nothing written, magnitude 0.
    unsigned char untouched = 0x5A;
    EXPECT_EQ(rnd::fill_range(&untouched, d, 42, 0, 0.5, 2.0, 1), 0.0);
    EXPECT_EQ(untouched, 0x5A);
  }
  unsigned char b[4];
  EXPECT_THROW(rnd::fill_range(b, DType::f32, -1, 1, 0.0, 1.0, 1), Error);
}

}  // namespace
