// Two-level statistics: processes are the independent samples, repetitions
// inside a process are not. Pure functions, no state.
//
//   Groups             samples split by process index (a run with
//                      --processes K, or runs pooled: every run a process).
//   EstimateComponents one-way random-effects estimate (Kalibera & Jones,
//                      "Rigorous benchmarking in reasonable time", ISMM 2013,
//                      with libkalibera's bias-corrected between term):
//                        within  T1^2 = pooled sample variance inside processes
//                        between T2^2 = max(0, S2^2 - T1^2 * mean(1/n_i)),
//                        S2^2 the sample variance of the process means.
//   OptimalRepetitions sqrt((c_process / c_repetition) * T1^2 / T2^2),
//                      rounded up, clamped to [min, max] (max when T2^2 is 0).
//   WelchT             Welch's t test of mean(b) - mean(a): t,
//                      Welch-Satterthwaite df, the two-sided p as
//                      scipy.stats.ttest_ind(a, b, equal_var=False) (which
//                      reports t of a - b), and the t interval of the
//                      difference. On the logarithms of process summaries
//                      (LogRatio) it is an interval for the ratio whose
//                      degrees of freedom come from the number of processes,
//                      not of samples.
#pragma once

#include <cstddef>
#include <vector>

namespace perfbench::stats {

// Samples grouped by process, in order of first appearance. `process` is
// parallel to `samples`; empty means one process.
std::vector<std::vector<double>> Groups(const std::vector<double>& samples, const std::vector<int>& process);

// One summary per process: the median of its samples.
std::vector<double> ProcessMedians(const std::vector<std::vector<double>>& groups);

struct VarianceComponents {
  size_t processes = 0;
  double within = 0;   // T1^2: repetition-to-repetition variance inside a process
  double between = 0;  // T2^2: process-to-process variance of the true means (>= 0)
  bool has_within = false, has_between = false;  // enough data for each estimate
};
VarianceComponents EstimateComponents(const std::vector<std::vector<double>>& groups);

// Repetitions per process that minimise the variance of the grand mean for a
// fixed cost, given the cost of starting a process (set-up and warm-up) and of
// one repetition.
int OptimalRepetitions(const VarianceComponents& c, double cost_process, double cost_repetition, int min_reps,
                       int max_reps);

struct WelchResult {
  double t = 0, df = 0, p_value = 1;
  double difference = 0, low = 0, high = 0;  // mean(b) - mean(a) and its interval
};
// Needs >= 2 values per side. Zero variance on both sides gives p = 1 when
// the means agree, 0 otherwise, and a degenerate interval.
WelchResult WelchT(const std::vector<double>& a, const std::vector<double>& b, double confidence);
// WelchT with a further variance `extra` (on `extra_df` degrees of freedom)
// in the standard error of the difference: a random effect all of b's values
// share and neither side's spread shows (a run's moment, estimated from
// earlier runs). se^2 = s_a^2 / n_a + s_b^2 / n_b + extra, Satterthwaite's
// df over the three terms; extra = 0 is WelchT.
WelchResult WelchT(const std::vector<double>& a, const std::vector<double>& b, double confidence, double extra,
                   double extra_df);
// WelchT on logarithms (values must be positive), exponentiated: difference,
// low and high become the ratio b / a and its interval.
WelchResult WelchLogRatio(const std::vector<double>& a, const std::vector<double>& b, double confidence,
                          double extra = 0, double extra_df = 1);

// One side has a single value (a run of one process), the other n >= 2: the
// single value is one more draw from the same process-to-process spread, so
// the t statistic uses the larger side's variance for both,
// t = (mean(b) - mean(a)) / (s sqrt(1/n_a + 1/n_b)), with n - 1 degrees of
// freedom (a prediction interval for one new process). WelchLogRatio's
// conventions.
WelchResult OneVersusManyLogRatio(const std::vector<double>& a, const std::vector<double>& b, double confidence);

// Natural logarithms; std::invalid_argument for a value that is not positive.
std::vector<double> Logs(const std::vector<double>& v);

// Two-sided quantile of Student's t: t such that P(|T| <= t) = confidence.
double StudentTCritical(double df, double confidence);

}  // namespace perfbench::stats
