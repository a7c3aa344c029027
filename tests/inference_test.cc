// Inferential statistics against SciPy.
//
// Fixtures produced with SciPy 1.17.1 (NumPy 2.x, Python 3.11):
//   scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method='auto') -> (statistic, pvalue)
//   scipy.stats.false_discovery_control(p, method='bh')
// The script is tests/fixtures/make_scipy_fixtures.py; its output is pasted below.
#include "inference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace perfbench::stats {
namespace {

struct MwuCase {
  const char* name;
  std::vector<double> a, b;
  double statistic, p_value;
  bool exact;
};

const std::vector<MwuCase>& Cases() {
  static const std::vector<MwuCase> cases = {
      {"exact_small", {1.1, 2.2, 3.3, 4.4, 5.5}, {6.6, 7.7, 8.8, 9.9}, 0.0, 0.015873015873015872, true},
      {"exact_overlap", {10.0, 12.0, 14.0, 16.0, 18.0, 20.0}, {11.0, 13.5, 15.5, 17.5, 19.5, 21.5, 23.5}, 15.0,
       0.4452214452214452, true},
      {"exact_8_vs_20",
       {1.013, 1.155857, 1.298714, 1.441571, 1.584429, 1.727286, 1.870143, 2.013},
       {1.2, 1.263158, 1.326316, 1.389474, 1.452632, 1.515789, 1.578947, 1.642105, 1.705263, 1.768421,
        1.831579, 1.894737, 1.957895, 2.021053, 2.084211, 2.147368, 2.210526, 2.273684, 2.336842, 2.4},
       46.0, 0.08868941042854087, true},
      {"asymptotic_ties", {1, 2, 2, 3, 3, 3, 4, 5, 6, 7}, {2, 3, 4, 4, 5, 6, 7, 8, 8, 9}, 25.0, 0.06182675868692394,
       false},
      {"asymptotic_large",
       {12.524413, 12.727892, 10.42336, 7.729593, 7.123227, 9.161754, 11.97096, 12.968075, 11.236355, 8.367937,
        7.000029, 8.390281, 11.260501, 12.971822, 11.950864, 9.13629, 7.115808, 7.747038, 10.449632, 12.738836},
       {12.620907, 9.751559, 8.030023, 9.039069, 11.850987, 13.880511, 13.261707, 10.5635, 8.266609, 8.482785,
        11.013277, 13.531562, 13.72234, 11.410212, 8.720936, 8.127022, 10.17451, 12.98095, 13.966114, 12.224246},
       147.0, 0.1555699325877425, false},
      {"ties_small", {1, 1, 2}, {2, 3, 3, 4}, 0.5, 0.0692003544198483, false},
      {"identical", {5, 5, 5, 5, 5}, {5, 5, 5, 5, 5}, 12.5, 1.0, false},
  };
  return cases;
}

TEST(MannWhitneyU, MatchesScipyTwoSidedAuto) {
  for (const auto& c : Cases()) {
    const auto r = MannWhitneyU(c.a, c.b);
    EXPECT_DOUBLE_EQ(r.u1, c.statistic) << c.name;
    EXPECT_NEAR(r.p_value, c.p_value, 1e-12 + 1e-9 * c.p_value) << c.name;
    EXPECT_EQ(r.exact, c.exact) << c.name;
  }
}

TEST(MannWhitneyU, IsSymmetricInItsPValue) {
  for (const auto& c : Cases()) EXPECT_NEAR(MannWhitneyU(c.b, c.a).p_value, c.p_value, 1e-12) << c.name;
}

TEST(BenjaminiHochberg, MatchesScipyFalseDiscoveryControl) {
  const auto q = BenjaminiHochberg({0.01, 0.04, 0.03, 0.005, 0.5, 0.2});
  const std::vector<double> want{0.03, 0.06, 0.06, 0.03, 0.5, 0.24};
  ASSERT_EQ(q.size(), want.size());
  for (size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(q[i], want[i], 1e-12) << i;
  EXPECT_TRUE(std::isnan(BenjaminiHochberg({NAN, 0.5})[0]));
  EXPECT_DOUBLE_EQ(BenjaminiHochberg({NAN, 0.5})[1], 0.5);
}

TEST(HodgesLehmann, EstimatesAShiftAndCoversIt) {
  // b = a + 3 exactly: every pairwise difference is centred on 3.
  std::vector<double> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, b;
  for (double x : a) b.push_back(x + 3);
  const auto s = HodgesLehmannShift(a, b, 0.95);
  EXPECT_DOUBLE_EQ(s.estimate, 3);
  EXPECT_LE(s.low, 3);
  EXPECT_GE(s.high, 3);
  EXPECT_LT(s.low, s.high);
  // n1 = n2 = 10: C = floor(50 - 1.96 * sqrt(100 * 21 / 12)) = floor(24.07) = 24,
  // so the interval is [d(25), d(76)] of the 100 sorted differences.
  std::vector<double> d;
  for (double x : a)
    for (double y : b) d.push_back(y - x);
  std::sort(d.begin(), d.end());
  EXPECT_DOUBLE_EQ(s.low, d[24]);
  EXPECT_DOUBLE_EQ(s.high, d[75]);
}

TEST(Normal, QuantileInvertsTheTail) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(NormalSf(1.959963984540054), 0.025, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232306167813, 1e-10);
}

}  // namespace
}  // namespace perfbench::stats
