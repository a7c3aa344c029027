// Simulated comparisons for judging the verdict rules: A/A false alarms and
// A/B detection power under realistic benchmark noise. Used by the
// verdict_quality program (figures) and by tests (fixed seeds, margins).
//
// Noise model, per metric (a time: lower is better, true value 1):
//   - a coefficient of variation drawn uniformly from [cv_min, cv_max]
//     (fixed_cv > 0 overrides it);
//   - log-normal samples, exp(sigma * e) with sigma = sqrt(log(1 + cv^2));
//     for a `heavy_share` of the metrics e is Student-t with `t_dof` degrees
//     of freedom scaled to unit variance (heavy tails) instead of normal;
//   - each sample independently, with probability `outlier_prob`, is an
//     outlier: multiplied by 1 + U(outlier_min, outlier_max) (a stall, a
//     page-cache miss, another job on the machine).
// A/B: a `regressed_share` of the metrics (at least one) get the candidate
// multiplied by 1 + regression.
#pragma once

#include <cstdint>

#include "compare/compare.h"

namespace perfbench::sim {

struct Config {
  int metrics = 200;
  int comparisons = 300;
  int samples = 10;  // per side
  double cv_min = 0.01, cv_max = 0.05, fixed_cv = 0;
  double heavy_share = 0.5, t_dof = 3;
  double outlier_prob = 0.02, outlier_min = 0.2, outlier_max = 1.0;
  double regression = 0;          // 0: A/A
  double regressed_share = 0.05;  // of the metrics, in A/B
  uint64_t seed = 1;
  Policy policy = Policy::Default();
};

struct Outcome {
  int comparisons = 0;
  int comparisons_with_false_regression = 0;  // any null metric called a regression
  long long null_metrics = 0, false_regressions = 0, false_improvements = 0;
  long long regressed_metrics = 0, detected = 0;  // regressed metrics called a regression
  long long unchanged_claims_on_regressed = 0;    // a regressed metric called unchanged
  double FalseAlarmShare() const { return comparisons ? double(comparisons_with_false_regression) / comparisons : 0; }
  double Power() const { return regressed_metrics ? double(detected) / regressed_metrics : 0; }
};

Outcome Simulate(const Config& config);

// One pair of runs with `metrics` metrics of `samples` samples each (for timing).
void MakeRuns(const Config& config, RunData* baseline, RunData* candidate);

// Simulated metric i: sim/w<i> step_time (s, lower is better), no samples.
ResultRecord Metric(int i);

// A policy with one relative threshold for every metric.
Policy PolicyWithThreshold(double relative, double alpha);

}  // namespace perfbench::sim
