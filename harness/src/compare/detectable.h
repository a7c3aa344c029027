// The detectable effect: the smallest true change a comparison calls a
// regression (or an improvement) with a given power, from what the
// comparison itself knows: the standard error of its estimate and that
// estimate's degrees of freedom (the process counts on both sides and their
// spreads), the limit in force and the size of the multiple-testing family.
//
// A metric is called when q < alpha and the change exceeds the limit L.
// Benjamini-Hochberg over a family of m metrics of which one moved calls it
// when its p < alpha / m (the other metrics at the null), so the test's
// critical value is t_a = t_df(1 - alpha / (2 m)) (two-sided). An estimate
// d ~ t-distributed around the true shift D with scale SE is called when
// |d| > max(t_a SE, L); it is with probability `power` when
//     D = max(t_a SE, L) + t_df(power) SE.
// On the log scale for ratios (L = log(1 + limit), reported as
// exp(D) - 1), on values for absolute thresholds. Two consequences a user
// should read in the figure: a limit caps power at 50% for a change equal
// to it (D > L always), and more processes shrink SE but never below L.
#pragma once

#include <cstddef>

namespace perfbench {

// The shift D above, in the estimate's scale. Throws std::invalid_argument
// unless se >= 0, df > 0, limit >= 0, family >= 1, 0 < alpha < 1 and
// 0.5 <= power < 1.
double DetectableShift(double se, double df, double limit, size_t family, double alpha, double power = 0.8);

// A regression of `shift` on the log scale as a relative change: a time
// that grows by exp(shift) - 1, a throughput that drops by 1 - exp(-shift)
// (never more than 100%).
double RelativeRegression(double shift, bool higher_is_better);

// Welch's standard error and Welch-Satterthwaite degrees of freedom of a
// difference of means with variances var_a, var_b over n_a, n_b values.
// With one value on a side (n < 2) that side takes the other side's
// variance and the degrees of freedom are the other side's n - 1 (one more
// draw from its spread). Throws std::invalid_argument when both sides have
// fewer than 2 values.
struct StandardError {
  double se = 0, df = 0;
};
StandardError DifferenceStandardError(double var_a, size_t n_a, double var_b, size_t n_b);
// With a further variance `extra` on `extra_df` degrees of freedom (a run's
// moment) when both sides have 2 or more values: se^2 = a + b + extra,
// Satterthwaite over the three terms.
StandardError DifferenceStandardError(double var_a, size_t n_a, double var_b, size_t n_b, double extra,
                                      double extra_df);

}  // namespace perfbench
