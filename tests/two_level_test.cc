// Two-level statistics and paired tests against hand-computed values and
// SciPy fixtures (SciPy 1.17.1, numpy 2.4.6; the calls are in
// fixtures/make_paired_fixtures.py and quoted at each value).
#include <gtest/gtest.h>

#include <cmath>

#include "signed_rank.h"
#include "two_level.h"

namespace perfbench::stats {
namespace {

TEST(VarianceComponents, HandComputedBalancedExample) {
  // Processes {1,2,3} and {4,5,6}: within each the variance is 1; the
  // process means 2 and 5 have variance 4.5; T2^2 = 4.5 - 1/3.
  const auto c = EstimateComponents({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(c.processes, 2u);
  EXPECT_DOUBLE_EQ(c.within, 1.0);
  EXPECT_NEAR(c.between, 4.5 - 1.0 / 3, 1e-12);
  EXPECT_TRUE(c.has_within && c.has_between);
}

TEST(VarianceComponents, UnbalancedUsesMeanOfInverseSizes) {
  // {1,3} (var 2, mean 2) and {2,4,6} (var 4, mean 4): pooled within
  // (2*1 + 4*2) / 3 = 10/3; means' variance 2; T2^2 = 2 - 10/3 * (1/2 + 1/3) / 2.
  const auto c = EstimateComponents({{1, 3}, {2, 4, 6}});
  EXPECT_NEAR(c.within, 10.0 / 3, 1e-12);
  EXPECT_NEAR(c.between, 2 - 10.0 / 3 * (0.5 + 1.0 / 3) / 2, 1e-12);
}

TEST(VarianceComponents, BetweenClampsAtZeroAndNeedsTwoProcesses) {
  // Process means equal: all the variance is within.
  auto c = EstimateComponents({{1, 3}, {3, 1}});
  EXPECT_DOUBLE_EQ(c.between, 0.0);
  c = EstimateComponents({{1, 2, 3}});
  EXPECT_FALSE(c.has_between);
  EXPECT_TRUE(c.has_within);
  c = EstimateComponents({{1}, {2}});
  EXPECT_FALSE(c.has_within);
  EXPECT_DOUBLE_EQ(c.between, 0.5);
}

TEST(VarianceComponents, GroupsFollowProcessIndices) {
  const auto g = Groups({1, 2, 3, 4, 5}, {0, 1, 0, 1, 2});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0], (std::vector<double>{1, 3}));
  EXPECT_EQ(g[1], (std::vector<double>{2, 4}));
  EXPECT_EQ(g[2], (std::vector<double>{5}));
  EXPECT_EQ(Groups({1, 2}, {}).size(), 1u);
  EXPECT_THROW(Groups({1, 2}, {0}), std::invalid_argument);
  EXPECT_EQ(ProcessMedians(g), (std::vector<double>{2, 3, 5}));
}

TEST(VarianceComponents, KaliberaJonesAllocation) {
  VarianceComponents c;
  c.within = 4;
  c.between = 1;
  // sqrt(c_p / c_i * T1^2 / T2^2) = sqrt(9 * 4) = 6.
  EXPECT_EQ(OptimalRepetitions(c, 9, 1, 2, 50), 6);
  EXPECT_EQ(OptimalRepetitions(c, 0.01, 1, 2, 50), 2);  // cheap processes: the minimum
  c.between = 0;  // no process-to-process variance: repetitions are as good
  EXPECT_EQ(OptimalRepetitions(c, 9, 1, 2, 50), 50);
}

TEST(Welch, MatchesScipyTtestInd) {
  // scipy.stats.ttest_ind(a, b, equal_var=False): statistic -4.0 (a - b),
  // pvalue 0.007848427008566094, df 5.7206703910614545; the 95% interval of
  // mean(a) - mean(b) is (-0.43174450487599636, -0.10158882845733685).
  const std::vector<double> a = {1.0, 1.2, 0.9, 1.1, 1.05}, b = {1.3, 1.25, 1.4};
  const auto r = WelchT(a, b, 0.95);
  EXPECT_NEAR(r.t, 4.0, 1e-9);
  EXPECT_NEAR(r.df, 5.7206703910614545, 1e-9);
  EXPECT_NEAR(r.p_value, 0.007848427008566094, 1e-9);
  EXPECT_NEAR(r.low, 0.10158882845733685, 1e-9);
  EXPECT_NEAR(r.high, 0.43174450487599636, 1e-9);
  // scipy.stats.t.ppf(0.975, 5.7206703910614545) = 2.476167573139947
  EXPECT_NEAR(StudentTCritical(5.7206703910614545, 0.95), 2.476167573139947, 1e-9);
}

TEST(Welch, LogRatioAndDegenerateCases) {
  const auto r = WelchLogRatio({100, 102, 98}, {110, 112, 108}, 0.95);
  EXPECT_GT(r.low, 1.0);
  EXPECT_NEAR(r.difference, std::exp((std::log(110.0) + std::log(112.0) + std::log(108.0)) / 3 -
                                     (std::log(100.0) + std::log(102.0) + std::log(98.0)) / 3),
              1e-12);
  EXPECT_LT(r.p_value, 0.01);
  EXPECT_DOUBLE_EQ(WelchT({1, 1}, {1, 1}, 0.95).p_value, 1.0);
  EXPECT_DOUBLE_EQ(WelchT({1, 1}, {2, 2}, 0.95).p_value, 0.0);
  EXPECT_THROW(WelchT({1}, {1, 2}, 0.95), std::invalid_argument);
  EXPECT_THROW(WelchLogRatio({1, 0}, {1, 2}, 0.95), std::invalid_argument);
}

TEST(Welch, ARunsMomentWidensTheTestAndItsDegreesOfFreedomFollowSatterthwaite) {
  const std::vector<double> a = {1.0, 1.2, 0.9, 1.1, 1.05}, b = {1.3, 1.25, 1.4};
  const auto plain = WelchT(a, b, 0.95);
  const auto same = WelchT(a, b, 0.95, 0, 1);  // no moment: Welch as SciPy computes it
  EXPECT_DOUBLE_EQ(same.t, plain.t);
  EXPECT_DOUBLE_EQ(same.df, plain.df);
  EXPECT_DOUBLE_EQ(same.p_value, plain.p_value);
  // By hand: mean(b) - mean(a) = 4/15; var(a) / 5 = 0.0125 / 5 = 0.0025,
  // var(b) / 3 = (42 / 3600 / 2) / 3 = 7 / 3600; with extra 0.01 on 4 df:
  // se^2 = 0.0125 + 7 / 3600, df = se^4 / (0.0025^2 / 4 + (7 / 3600)^2 / 2 + 0.01^2 / 4).
  const double vb = 7.0 / 3600, se2 = 0.0025 + vb + 0.01;
  const auto wide = WelchT(a, b, 0.95, 0.01, 4);
  EXPECT_NEAR(wide.t, (4.0 / 15) / std::sqrt(se2), 1e-9);
  EXPECT_NEAR(wide.df, se2 * se2 / (0.0025 * 0.0025 / 4 + vb * vb / 2 + 0.0001 / 4), 1e-9);
  EXPECT_GT(wide.p_value, plain.p_value);
  EXPECT_GT(wide.high - wide.low, plain.high - plain.low);
  EXPECT_THROW(WelchT(a, b, 0.95, -0.1, 4), std::invalid_argument);
  EXPECT_THROW(WelchT(a, b, 0.95, 0.1, 0), std::invalid_argument);
}

TEST(Welch, OneVersusManyIsAPredictionTest) {
  // One value against {1, 2, 3} in log space: s = 1, se = sqrt(1 + 1/3), df 2.
  const std::vector<double> many = {std::exp(1.0), std::exp(2.0), std::exp(3.0)};
  const auto r = OneVersusManyLogRatio({std::exp(0.0)}, many, 0.95);
  EXPECT_DOUBLE_EQ(r.df, 2.0);
  EXPECT_NEAR(std::log(r.difference), 2.0, 1e-12);
  EXPECT_NEAR(r.t, 2.0 / std::sqrt(4.0 / 3), 1e-12);
  // 2 * scipy.stats.t.sf(2 / math.sqrt(4 / 3), 2) (SciPy 1.17.1) = 0.22540333075851665
  EXPECT_NEAR(r.p_value, 0.22540333075851665, 1e-9);
  EXPECT_THROW(OneVersusManyLogRatio({1.0}, {2.0}, 0.95), std::invalid_argument);
}

TEST(Wilcoxon, ExactWithoutTies) {
  // scipy.stats.wilcoxon([0.031, -0.012, 0.044, 0.027, 0.019, -0.005, 0.038, 0.022])
  // -> statistic 3.0, pvalue 0.0390625 (exact)
  const auto r = WilcoxonSignedRank({0.031, -0.012, 0.044, 0.027, 0.019, -0.005, 0.038, 0.022});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.statistic, 3.0);
  EXPECT_NEAR(r.p_value, 0.0390625, 1e-12);
}

TEST(Wilcoxon, SmallSampleWithTiesUsesEverySignAssignment) {
  // scipy.stats.wilcoxon([0.5, 1.5, -0.25, 2.0, 1.0, 1.5, -0.75, 3.0, 0.5, 1.25])
  // -> statistic 5.0, pvalue 0.01953125 (ties, n <= 13: permutation)
  const auto r = WilcoxonSignedRank({0.5, 1.5, -0.25, 2.0, 1.0, 1.5, -0.75, 3.0, 0.5, 1.25});
  EXPECT_DOUBLE_EQ(r.statistic, 5.0);
  EXPECT_NEAR(r.p_value, 0.01953125, 1e-12);
}

TEST(Wilcoxon, LargeSampleWithTiesAndZeroIsNormal) {
  // x[i] = ((i*37) % 101 - 40) / 1000, i < 60: scipy.stats.wilcoxon(x)
  // -> statistic 583.0, pvalue 0.02263320893600752 (asymptotic; one zero dropped)
  std::vector<double> x;
  for (int i = 0; i < 60; ++i) x.push_back(((i * 37) % 101 - 40) / 1000.0);
  const auto r = WilcoxonSignedRank(x);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.n, 59);
  EXPECT_DOUBLE_EQ(r.statistic, 583.0);
  EXPECT_NEAR(r.p_value, 0.02263320893600752, 1e-9);
}

TEST(Wilcoxon, AllZeroDifferencesAreNoEvidence) {
  const auto r = WilcoxonSignedRank({0, 0, 0});
  EXPECT_EQ(r.n, 0);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
}

TEST(HodgesLehmannPaired, WalshAverages) {
  // Walsh averages of {1, 2, 4}: 1, 1.5, 2.5, 2, 3, 4 -> median 2.25.
  const auto s = HodgesLehmannPaired({1, 2, 4}, 0.5);
  EXPECT_DOUBLE_EQ(s.estimate, 2.25);
  EXPECT_LE(s.low, s.estimate);
  EXPECT_GE(s.high, s.estimate);
  const auto wide = HodgesLehmannPaired({1, 2, 4}, 0.99);  // too few for 99%: the full range
  EXPECT_DOUBLE_EQ(wide.low, 1.0);
  EXPECT_DOUBLE_EQ(wide.high, 4.0);
}

}  // namespace
}  // namespace perfbench::stats
