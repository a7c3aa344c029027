// Paired comparisons (perfbench ab): the Wilcoxon signed-rank test and the
// one-sample Hodges-Lehmann estimate, on the differences of pairs (pair log
// ratios). Pure functions, no state.
//
//   WilcoxonSignedRank   two-sided, defined as SciPy's scipy.stats.wilcoxon(d)
//                        with its defaults (zero_method='wilcox': zero
//                        differences are dropped; correction=False;
//                        method='auto', SciPy 1.17): the exact null
//                        distribution when there are at most 50 differences,
//                        none zero or tied in magnitude; with ties or zeros
//                        and at most 13 differences, all 2^n sign
//                        assignments of the mid-ranks (SciPy's permutation
//                        method); otherwise the normal approximation with
//                        the tie correction of the variance. `statistic` is min(R+, R-), as SciPy
//                        reports for a two-sided test.
//   HodgesLehmannPaired  median of the Walsh averages (d_i + d_j) / 2, i <= j,
//                        with the distribution-free interval from their order
//                        statistics: [w_(C+1), w_(N-C)], N = n(n+1)/2,
//                        C = floor(N/2 - z sqrt(n(n+1)(2n+1)/24)).
#pragma once

#include <vector>

#include "inference.h"

namespace perfbench::stats {

struct SignedRankResult {
  double statistic = 0;
  double p_value = 1;
  bool exact = false;
  int n = 0;  // non-zero differences used
};
SignedRankResult WilcoxonSignedRank(const std::vector<double>& d);

ShiftInterval HodgesLehmannPaired(const std::vector<double>& d, double confidence);

}  // namespace perfbench::stats
