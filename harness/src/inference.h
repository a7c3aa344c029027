// Inferential statistics for comparing two runs: pure functions, no state.
//
//   MannWhitneyU        two-sided test, defined exactly as SciPy's
//                       scipy.stats.mannwhitneyu(a, b, alternative='two-sided',
//                       method='auto', use_continuity=True): the exact null
//                       distribution when there are no ties and either sample
//                       has <= 8 values; else the normal approximation with tie
//                       and continuity corrections.
//   BenjaminiHochberg   q-values (step-up adjusted p-values) controlling the
//                       false-discovery rate across the metrics of one comparison.
//   HodgesLehmannShift  Hodges-Lehmann estimate of the shift b - a with the
//                       distribution-free (Moses) confidence interval from the
//                       order statistics of all pairwise differences. Applied to
//                       logarithms it is an interval for the ratio b / a.
#pragma once

#include <vector>

namespace perfbench::stats {

struct MannWhitneyResult {
  double u1 = 0;       // U statistic of the first sample (SciPy's `statistic`)
  double p_value = 1;  // two-sided
  bool exact = false;  // which method `auto` chose
};
MannWhitneyResult MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b);

// q-values in the input order; NaN p-values stay NaN and are not counted.
std::vector<double> BenjaminiHochberg(const std::vector<double>& p_values);

struct ShiftInterval {
  double estimate = 0, low = 0, high = 0;
};
// Interval for the location shift (b - a) at `confidence` (e.g. 0.95).
// Falls back to the full range of differences when the samples are too small
// for the requested confidence.
ShiftInterval HodgesLehmannShift(const std::vector<double>& a, const std::vector<double>& b, double confidence);

// Standard normal upper tail and quantile.
double NormalSf(double z);
double NormalQuantile(double p);

}  // namespace perfbench::stats
