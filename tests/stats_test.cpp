// Statistics of timing samples (tuner/stats.hpp): quantiles, the median's
// confidence interval, and its coverage.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "lntune/types.hpp"
#include "tuner/stats.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;

// ------------------------------------------------------------ statistics
TEST(Stats, QuantilesInterpolateLinearly) {
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.2), 1.6);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.8), 3.4);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.3), 7);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0), 1);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 1), 4);
  EXPECT_THROW(quantile({}, 0.5), Error);
  EXPECT_THROW(quantile({1}, 1.5), Error);
}

TEST(Stats, BinomialCdf) {
  EXPECT_DOUBLE_EQ(binomial_half_cdf(10, 0), 1.0 / 1024);
  EXPECT_NEAR(binomial_half_cdf(10, 1), 11.0 / 1024, 1e-15);
  EXPECT_NEAR(binomial_half_cdf(4, 2), 11.0 / 16, 1e-15);
  EXPECT_DOUBLE_EQ(binomial_half_cdf(10, 10), 1.0);
  EXPECT_NEAR(binomial_half_cdf(2000, 1000), 0.5 + 0.5 * 0.017839, 1e-4);  // symmetric: (1 + P(B = n/2)) / 2
}

TEST(Stats, MedianConfidenceIntervalFromOrderStatistics) {
  // Too few samples for 95%: P(all above the median) = 1/32 > 2.5%.
  const Interval five = median_ci({1, 2, 3, 4, 5});
  EXPECT_FALSE(five.valid);
  EXPECT_EQ(five.lo, 1);
  EXPECT_EQ(five.hi, 5);
  // n = 6: [min, max] with coverage 1 - 2/64.
  const Interval six = median_ci({6, 5, 4, 3, 2, 1});
  EXPECT_TRUE(six.valid);
  EXPECT_EQ(six.lo, 1);
  EXPECT_EQ(six.hi, 6);
  EXPECT_NEAR(six.coverage, 1 - 2.0 / 64, 1e-12);
  // n = 100: the textbook interval [x(40), x(61)] (1-based), coverage 0.9648.
  std::vector<double> v(100);
  std::iota(v.begin(), v.end(), 1.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(7));
  const Interval hundred = median_ci(v);
  EXPECT_TRUE(hundred.valid);
  EXPECT_EQ(hundred.lo, 40);
  EXPECT_EQ(hundred.hi, 61);
  EXPECT_NEAR(hundred.coverage, 0.9648, 1e-4);
  EXPECT_GE(hundred.coverage, 0.95);
}

TEST(Stats, CoverageIsHonest) {
  // For a skewed distribution the interval holds the true median at least
  // 95% of the time.
  std::mt19937_64 g(1);
  std::exponential_distribution<double> e(1.0);
  const double true_median = std::log(2.0);
  int hits = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> s(30);
    for (double& x : s) x = e(g);
    const Interval ci = median_ci(s);
    hits += ci.lo <= true_median && true_median <= ci.hi;
  }
  EXPECT_GE(hits, static_cast<int>(0.94 * trials));
}

TEST(Stats, SummaryReusesScratch) {
  std::vector<double> scratch;
  scratch.reserve(64);
  const double* before = scratch.data();
  const Summary s = summarize({10, 12, 11, 13, 9, 10, 11, 10, 12, 11}, 0.95, &scratch);
  EXPECT_EQ(scratch.data(), before);  // no reallocation
  EXPECT_EQ(s.n, 10);
  EXPECT_EQ(s.min, 9);
  EXPECT_EQ(s.max, 13);
  EXPECT_DOUBLE_EQ(s.median, 11);
  EXPECT_DOUBLE_EQ(s.mean, 10.9);
  EXPECT_TRUE(s.median_ci.valid);
  EXPECT_NEAR(s.ci_rel_halfwidth(), 1.0 / 11, 1e-12);  // CI [10, 12]
}


}  // namespace
