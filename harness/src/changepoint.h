// Change points in a series of run medians: E-divisive means as Apache Otava
// 0.8 does it (otava/analysis.py compute_change_points; Matteson & James
// 2014; Daly et al., "Creating a Virtuous Cycle in Performance Testing at
// MongoDB", ICPE 2021), deterministic, with one addition: a minimum segment
// length. Per window of `window` points (windows start every window/2, the
// next at the last change found if later):
//   1. the candidate: the split tau (and end kappa) of an interval between
//      change points found so far where the energy statistic peaks,
//      q = 2/(m+n) sum|X-Y| - 2m/((m+n)(n-1)) sum_{i<k}|X_i-X_k|
//          - 2n/((m+n)(m-1)) sum_{j<k}|Y_j-Y_k|   (alpha = 1),
//      X = x[lo, tau), Y = x[tau, kappa), ties to the smallest tau then kappa;
//   2. kept when Student's t-test (pooled variance, fed population standard
//      deviations as Otava's ttest_ind_from_stats call is) between the two
//      segments the split makes gives p <= p1 (10x max_pvalue below 0.05,
//      2x below 0.5); the first candidate that fails ends the window.
// Then the weakest points are dropped one at a time (largest p while one is
// >= max_pvalue, else smallest magnitude while one is <= min_magnitude), the
// statistics of both neighbours recomputed (Otava 0.8 recomputes only the
// right one: a stale p-value and mean, fixed here). Our addition,
// `min_segment`: every segment a candidate makes has at least that many
// points (1 is Otava), so that one spike cannot become two steps around it.
#pragma once

#include <cstddef>
#include <vector>

namespace perfbench {

struct ChangePointOptions {
  size_t window = 50;         // Otava's default
  double max_pvalue = 0.001;  // Otava's default
  double min_magnitude = 0;   // Otava's default: max(|b/a - 1|, |a/b - 1|) a change must exceed
  size_t min_segment = 2;     // points on each side of a change point, at least (Otava: 1)
};

struct ChangePoint {
  size_t index = 0;  // the first point after the change
  double change = 0;  // mean_after / mean_before - 1
  double p_value = 1;
  double mean_before = 0, mean_after = 0;  // of the segments between neighbouring change points
};

std::vector<ChangePoint> FindChangePoints(const std::vector<double>& x, const ChangePointOptions& options = {});

// The two-sided p of Student's pooled t-test from means, standard
// deviations and counts (scipy.stats.ttest_ind_from_stats, equal_var=True):
// 1 when n1 + n2 <= 2; 0 (or NaN for equal means) when both spreads are 0.
double PooledTTestP(double m1, double s1, double n1, double m2, double s2, double n2);

}  // namespace perfbench
