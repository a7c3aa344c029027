// Descriptive statistics on hand-computable values (numpy.quantile's default
// "linear" method gives the same quantiles: e.g. np.quantile(range(1, 11), .25) == 3.25).
#include "perfbench/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace perfbench::stats {
namespace {

TEST(Statistics, MedianOfEvenAndOddCounts) {
  EXPECT_DOUBLE_EQ(Median({1, 2, 3, 4}), 2.5);
  EXPECT_DOUBLE_EQ(Median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
}

TEST(Statistics, MeanAndSampleStdDev) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(Mean(v), 5);
  // sum of squared deviations 32, n - 1 = 7
  EXPECT_NEAR(StdDev(v), std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_DOUBLE_EQ(StdDev({3}), 0);
}

TEST(Statistics, QuantileIsLinearInterpolation) {
  const std::vector<double> v{10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(Quantile(v, 0.25), 3.25);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.75), 7.75);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(Quantile(v, 1.0), 10);
  EXPECT_THROW(Quantile({}, 0.5), std::invalid_argument);
}

TEST(Statistics, PercentileIsNearestRank) {
  // The classic nearest-rank example: {15, 20, 35, 40, 50}.
  const std::vector<double> v{15, 20, 35, 40, 50};
  EXPECT_DOUBLE_EQ(PercentileNearestRank(v, 0.05), 15);
  EXPECT_DOUBLE_EQ(PercentileNearestRank(v, 0.30), 20);
  EXPECT_DOUBLE_EQ(PercentileNearestRank(v, 0.40), 20);
  EXPECT_DOUBLE_EQ(PercentileNearestRank(v, 0.50), 35);
  EXPECT_DOUBLE_EQ(PercentileNearestRank(v, 1.00), 50);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_DOUBLE_EQ(PercentileNearestRank(hundred, 0.90), 90);  // ceil(0.9 * 100) = 90, no float slip
  EXPECT_DOUBLE_EQ(PercentileNearestRank(hundred, 0.99), 99);
  EXPECT_THROW(PercentileNearestRank(v, 0.0), std::invalid_argument);
}

TEST(Statistics, SummaryFlagsNoiseAtTenPercentIqr) {
  // {95, 100, 105}: q1 97.5, q3 102.5, iqr 5, median 100 -> 0.05
  Summary quiet = Summarize({95, 100, 105});
  EXPECT_DOUBLE_EQ(quiet.median, 100);
  EXPECT_DOUBLE_EQ(quiet.iqr_rel, 0.05);
  EXPECT_FALSE(quiet.noisy);
  // {90, 100, 110}: iqr 10 -> 0.10, which is noisy (>= 0.10).
  Summary noisy = Summarize({90, 100, 110});
  EXPECT_DOUBLE_EQ(noisy.iqr_rel, 0.10);
  EXPECT_TRUE(noisy.noisy);
  EXPECT_EQ(noisy.n, 3u);
  EXPECT_DOUBLE_EQ(noisy.min, 90);
  EXPECT_DOUBLE_EQ(noisy.max, 110);
  EXPECT_EQ(Summarize({}).n, 0u);
}

}  // namespace
}  // namespace perfbench::stats

namespace perfbench::stats {
namespace {

TEST(LatencyPercentiles, NearestRankWithMlperfMinimumQueryCounts) {
  std::vector<double> v;
  for (int i = 1; i <= 700; ++i) v.push_back(i);  // 1..700
  // Nearest rank: sorted[ceil(q n) - 1].
  EXPECT_DOUBLE_EQ(*LatencyPercentile(v, 0.50), 350);
  EXPECT_DOUBLE_EQ(*LatencyPercentile(v, 0.90), 630);
  EXPECT_DOUBLE_EQ(*LatencyPercentile(v, 0.99), 693);
  EXPECT_EQ(MinimumQueriesFor(0.90), 64u);
  EXPECT_EQ(MinimumQueriesFor(0.99), 662u);
  std::vector<double> few(v.begin(), v.begin() + 661);  // one short of p99's minimum
  EXPECT_FALSE(LatencyPercentile(few, 0.99).has_value());
  EXPECT_TRUE(LatencyPercentile(few, 0.90).has_value());
  std::vector<double> tiny(v.begin(), v.begin() + 63);
  EXPECT_FALSE(LatencyPercentile(tiny, 0.90).has_value());
  EXPECT_DOUBLE_EQ(*LatencyPercentile(tiny, 0.50), 32);
  // Order does not matter.
  std::vector<double> shuffled = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(*LatencyPercentile(shuffled, 0.5), 3);
}

}  // namespace
}  // namespace perfbench::stats

TEST(BinomialInterval, MatchesScipyExactInterval) {
  // scipy.stats.binomtest(k, n).proportion_ci(confidence_level=0.95,
  // method='exact') (SciPy 1.17.1, Python 3.11): Clopper-Pearson.
  struct Case {
    long long k, n;
    double lo, hi;
  };
  const Case cases[] = {{0, 2048, 0.0, 0.0017995894645376669},
                        {3, 2048, 0.00030218793271128433, 0.004274871147354257},
                        {17, 1024, 0.009699995964636712, 0.02644800790968007},
                        {50, 100, 0.39832112950330095, 0.6016788704966991},
                        {100, 100, 0.9637833073548094, 1.0},
                        {1, 10, 0.0025285785444625728, 0.44501611702819543}};
  for (const auto& c : cases) {
    const auto ci = perfbench::stats::BinomialInterval(c.k, c.n);
    EXPECT_NEAR(ci.lo, c.lo, 1e-9) << c.k << "/" << c.n;
    EXPECT_NEAR(ci.hi, c.hi, 1e-9) << c.k << "/" << c.n;
  }
  EXPECT_THROW(perfbench::stats::BinomialInterval(5, 4), std::invalid_argument);
  EXPECT_EQ(perfbench::stats::BinomialInterval(0, 0).hi, 1.0);
}
