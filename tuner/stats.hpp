// lntune::tune — statistics of timing samples. Pure functions, no GPU: what
// the runner measures is summarised here, and the stop rule decides here.
//
//   quantile      linear interpolation between order statistics (Hyndman &
//                 Fan type 7, numpy's default): q = 0.5 is the usual median.
//   median_ci     distribution-free confidence interval of the median from
//                 order statistics: [x_(j), x_(n+1-j)] (1-based, sorted) with
//                 the largest j whose coverage 1 - 2 P(B <= j - 1) is at
//                 least `confidence`, B ~ Binomial(n, 1/2). It needs no
//                 assumption about the distribution (timings are skewed, with
//                 outliers), only independent repetitions. For 95% it exists
//                 from n = 6 on; below that `valid` is false and the interval
//                 is [min, max].
#pragma once

#include <cstddef>
#include <vector>

namespace lntune::tune {

struct Interval {
  double lo = 0, hi = 0;
  double coverage = 0;  // the exact coverage probability of [lo, hi]
  bool valid = false;   // false: too few samples for the requested confidence
};

struct Summary {
  int n = 0;
  double min = 0, max = 0, mean = 0;
  double median = 0, p20 = 0, p80 = 0;
  Interval median_ci;
  // max(median - lo, hi - median) / median: the half-width of the median's
  // confidence interval relative to the median (infinity when not valid).
  double ci_rel_halfwidth() const;
};

// Quantile q in [0, 1] of an ascending-sorted sample (type 7). Throws
// lntune::Error for an empty sample or q outside [0, 1].
double quantile_sorted(const double* sorted, std::size_t n, double q);
double quantile(std::vector<double> sample, double q);
double median(std::vector<double> sample);

// The median's confidence interval (see above) of an ascending-sorted sample.
Interval median_ci_sorted(const double* sorted, std::size_t n, double confidence = 0.95);
Interval median_ci(std::vector<double> sample, double confidence = 0.95);

// P(B <= k) for B ~ Binomial(n, 1/2), computed in log space (exact to double
// rounding for any n).
double binomial_half_cdf(std::size_t n, std::size_t k);

// Everything above at once. `scratch` (reused by callers that must not
// allocate in a loop) receives the sorted copy; without it one is allocated.
Summary summarize(const std::vector<double>& sample, double confidence = 0.95,
                  std::vector<double>* scratch = nullptr);

}  // namespace lntune::tune
