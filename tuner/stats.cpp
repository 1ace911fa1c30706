#include "tuner/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "lntune/types.hpp"

namespace lntune::tune {

double Summary::ci_rel_halfwidth() const {
  if (!median_ci.valid || !(median > 0)) return std::numeric_limits<double>::infinity();
  return std::max(median - median_ci.lo, median_ci.hi - median) / median;
}

double quantile_sorted(const double* sorted, std::size_t n, double q) {
  if (n == 0) throw Error("lntune: quantile of an empty sample");
  if (!(q >= 0.0 && q <= 1.0)) throw Error("lntune: quantile q must be in [0, 1], got " + std::to_string(q));
  const double h = q * static_cast<double>(n - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, n - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double quantile(std::vector<double> sample, double q) {
  std::sort(sample.begin(), sample.end());
  return quantile_sorted(sample.data(), sample.size(), q);
}

double median(std::vector<double> sample) { return quantile(std::move(sample), 0.5); }

double binomial_half_cdf(std::size_t n, std::size_t k) {
  if (k >= n) return 1.0;
  // log pmf(0) = -n log 2; pmf(i + 1) = pmf(i) * (n - i) / (i + 1).
  double log_pmf = -static_cast<double>(n) * std::log(2.0);
  double cdf = std::exp(log_pmf);
  for (std::size_t i = 0; i < k; ++i) {
    log_pmf += std::log(static_cast<double>(n - i)) - std::log(static_cast<double>(i + 1));
    cdf += std::exp(log_pmf);
  }
  return std::min(cdf, 1.0);
}

Interval median_ci_sorted(const double* sorted, std::size_t n, double confidence) {
  if (n == 0) throw Error("lntune: confidence interval of an empty sample");
  if (!(confidence > 0.0 && confidence < 1.0))
    throw Error("lntune: confidence must be in (0, 1), got " + std::to_string(confidence));
  Interval out;
  out.lo = sorted[0];
  out.hi = sorted[n - 1];
  const double tail = (1.0 - confidence) / 2.0;
  // Largest k (0-based rank of the lower bound) with P(B <= k) <= tail.
  double log_pmf = -static_cast<double>(n) * std::log(2.0);
  double cdf = std::exp(log_pmf);
  if (cdf > tail) {
    out.coverage = 1.0 - 2.0 * cdf;  // of [min, max]
    out.valid = false;
    return out;
  }
  std::size_t k = 0;
  double cdf_k = cdf;
  for (std::size_t i = 0; i + 1 < n / 2; ++i) {
    log_pmf += std::log(static_cast<double>(n - i)) - std::log(static_cast<double>(i + 1));
    cdf += std::exp(log_pmf);
    if (cdf > tail) break;
    k = i + 1;
    cdf_k = cdf;
  }
  out.lo = sorted[k];
  out.hi = sorted[n - 1 - k];
  out.coverage = 1.0 - 2.0 * cdf_k;
  out.valid = true;
  return out;
}

Interval median_ci(std::vector<double> sample, double confidence) {
  std::sort(sample.begin(), sample.end());
  return median_ci_sorted(sample.data(), sample.size(), confidence);
}

Summary summarize(const std::vector<double>& sample, double confidence, std::vector<double>* scratch) {
  if (sample.empty()) throw Error("lntune: summary of an empty sample");
  std::vector<double> local;
  std::vector<double>& s = scratch ? *scratch : local;
  s.assign(sample.begin(), sample.end());  // no allocation when capacity suffices
  std::sort(s.begin(), s.end());
  Summary out;
  out.n = static_cast<int>(s.size());
  out.min = s.front();
  out.max = s.back();
  double sum = 0;
  for (double v : s) sum += v;
  out.mean = sum / static_cast<double>(s.size());
  out.median = quantile_sorted(s.data(), s.size(), 0.5);
  out.p20 = quantile_sorted(s.data(), s.size(), 0.2);
  out.p80 = quantile_sorted(s.data(), s.size(), 0.8);
  out.median_ci = median_ci_sorted(s.data(), s.size(), confidence);
  return out;
}

}  // namespace lntune::tune
