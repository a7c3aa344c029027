#include "compare/detectable.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "two_level.h"

namespace perfbench {

double DetectableShift(double se, double df, double limit, size_t family, double alpha, double power) {
  if (!(se >= 0) || !(df > 0) || !(limit >= 0) || family < 1 || !(alpha > 0 && alpha < 1) ||
      !(power >= 0.5 && power < 1))
    throw std::invalid_argument("DetectableShift: se >= 0, df > 0, limit >= 0, family >= 1, alpha in (0, 1), "
                                "power in [0.5, 1)");
  // Two-sided at alpha / m: the confidence of that interval is 1 - alpha / m.
  const double t_alpha = stats::StudentTCritical(df, 1 - alpha / static_cast<double>(family));
  // One-sided quantile `power`: the two-sided confidence 2 power - 1.
  const double t_power = power > 0.5 ? stats::StudentTCritical(df, 2 * power - 1) : 0.0;
  return std::max(t_alpha * se, limit) + t_power * se;
}

double RelativeRegression(double shift, bool higher_is_better) {
  return higher_is_better ? -std::expm1(-shift) : std::expm1(shift);
}

StandardError DifferenceStandardError(double var_a, size_t n_a, double var_b, size_t n_b, double extra,
                                      double extra_df) {
  StandardError s = DifferenceStandardError(var_a, n_a, var_b, n_b);
  if (!(extra > 0) || n_a < 2 || n_b < 2) return s;
  const double a = var_a / static_cast<double>(n_a), b = var_b / static_cast<double>(n_b), all = a + b + extra;
  s.se = std::sqrt(all);
  s.df = all * all / (a * a / static_cast<double>(n_a - 1) + b * b / static_cast<double>(n_b - 1) + extra * extra / extra_df);
  return s;
}

StandardError DifferenceStandardError(double var_a, size_t n_a, double var_b, size_t n_b) {
  if (n_a < 2 && n_b < 2) throw std::invalid_argument("DifferenceStandardError: a side needs 2 or more values");
  if (n_a < 2 || n_b < 2) {  // one value against a spread: a prediction interval
    const double var = n_a < 2 ? var_b : var_a;
    const double n = static_cast<double>(n_a < 2 ? n_b : n_a);
    return {std::sqrt(var * (1 + 1 / n)), n - 1};
  }
  const double a = var_a / static_cast<double>(n_a), b = var_b / static_cast<double>(n_b);
  StandardError s;
  s.se = std::sqrt(a + b);
  const double den = a * a / static_cast<double>(n_a - 1) + b * b / static_cast<double>(n_b - 1);
  // Both variances zero: no spread, as many degrees of freedom as values allow.
  s.df = den > 0 ? (a + b) * (a + b) / den : static_cast<double>(n_a + n_b - 2);
  return s;
}

}  // namespace perfbench
