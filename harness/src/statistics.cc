#include "perfbench/statistics.h"

#include <boost/math/distributions/binomial.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace perfbench::stats {

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  long double sum = 0;  // long double: avoids the precision loss of long float sums
  for (double x : v) sum += x;
  return static_cast<double>(sum / v.size());
}

double StdDev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  // Welford: numerically stable in one pass.
  long double mean = 0, m2 = 0;
  size_t n = 0;
  for (double x : v) {
    ++n;
    long double d = x - mean;
    mean += d / n;
    m2 += d * (x - mean);
  }
  return static_cast<double>(std::sqrt(m2 / (n - 1)));
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("quantile of an empty sample");
  if (q < 0 || q > 1) throw std::invalid_argument("quantile q outside [0, 1]");
  std::sort(v.begin(), v.end());
  const double h = (v.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - lo) * (v[hi] - v[lo]);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  return Quantile(std::move(v), 0.5);
}

double PercentileNearestRank(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("percentile of an empty sample");
  if (q <= 0 || q > 1) throw std::invalid_argument("percentile q outside (0, 1]");
  std::sort(v.begin(), v.end());
  // A tiny epsilon keeps q*n = 90.00000000000001 from jumping a rank.
  size_t rank = static_cast<size_t>(std::ceil(q * v.size() - 1e-9));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

Summary Summarize(const std::vector<double>& v) {
  Summary s;
  if (v.empty()) return s;
  s.n = v.size();
  s.mean = Mean(v);
  s.stddev = StdDev(v);
  auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  s.min = *mn;
  s.max = *mx;
  s.median = Quantile(v, 0.5);
  s.q1 = Quantile(v, 0.25);
  s.q3 = Quantile(v, 0.75);
  s.iqr_rel = s.median != 0 ? (s.q3 - s.q1) / std::fabs(s.median) : 0;
  s.noisy = s.iqr_rel >= kNoisyIqrRel;
  return s;
}


size_t MinimumQueriesFor(double q) {
  if (q <= 0.5) return 1;
  if (q <= 0.9) return 64;
  return 662;
}

std::optional<double> LatencyPercentile(const std::vector<double>& v, double q) {
  if (v.size() < MinimumQueriesFor(q)) return std::nullopt;
  return PercentileNearestRank(v, q);
}

Interval BinomialInterval(long long successes, long long trials, double confidence) {
  if (successes < 0 || successes > trials) throw std::invalid_argument("successes outside [0, trials]");
  if (trials == 0) return {};
  using Binomial = boost::math::binomial_distribution<double>;
  const double alpha = (1 - confidence) / 2;
  const auto n = static_cast<double>(trials), k = static_cast<double>(successes);
  // Boost's bounds are Clopper-Pearson's by default; each tail gets alpha.
  return {Binomial::find_lower_bound_on_p(n, k, alpha), Binomial::find_upper_bound_on_p(n, k, alpha)};
}

}  // namespace perfbench::stats
