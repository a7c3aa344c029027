// Descriptive statistics: pure functions over samples, no state.
//
// Definitions (also in docs/metrics.md):
//   quantile       linear interpolation between order statistics (Hyndman-Fan
//                  type 7, numpy.quantile's default); used for median and IQR.
//   percentile     nearest rank, p_q = sorted[ceil(q*n) - 1] (pctl_method
//                  "nearest_rank"); used for latency percentiles.
//   stddev         sample standard deviation (n - 1 denominator).
//   iqr_rel        (q3 - q1) / median; a result is noisy when >= 0.10.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace perfbench::stats {

inline constexpr double kNoisyIqrRel = 0.10;

double Mean(const std::vector<double>& v);
double StdDev(const std::vector<double>& v);  // 0 for n < 2
double Median(std::vector<double> v);
// q in [0, 1]; type-7 interpolation. Throws std::invalid_argument on empty input.
double Quantile(std::vector<double> v, double q);
// q in (0, 1]; nearest rank. Throws std::invalid_argument on empty input.
double PercentileNearestRank(std::vector<double> v, double q);
// MLPerf LoadGen's minimum query counts for a latency percentile claim:
// 64 for p90, 662 for p99 (early-stopping minima); 1 below p90. Between, the
// next higher rule applies (p95 needs 662).
size_t MinimumQueriesFor(double q);
// The nearest-rank percentile, or nullopt when there are fewer values than
// MinimumQueriesFor(q): "unavailable", never a number from too few queries.
std::optional<double> LatencyPercentile(const std::vector<double>& v, double q);

struct Summary {
  size_t n = 0;
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0;
  double q1 = 0, q3 = 0;
  double iqr_rel = 0;  // (q3 - q1) / |median|; 0 when the median is 0
  bool noisy = false;  // iqr_rel >= kNoisyIqrRel
};
// All zeros for an empty sample.
Summary Summarize(const std::vector<double>& v);

// The exact (Clopper-Pearson) two-sided interval for a binomial proportion:
// `successes` of `trials` at `confidence` (0.95); [0, 1] for no trials.
// Throws std::invalid_argument for successes outside [0, trials].
struct Interval {
  double lo = 0, hi = 1;
};
Interval BinomialInterval(long long successes, long long trials, double confidence = 0.95);

}  // namespace perfbench::stats
