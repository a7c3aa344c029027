// Verdicts: comparing a candidate run with a baseline, metric by metric.
//
// For every metric present in both (matched by suite, workload, params and
// metric name):
//   ratio      median(candidate) / median(baseline)
//   interval   Hodges-Lehmann (Moses) interval of the shift of log values,
//              exponentiated: an interval for the ratio (deterministic, no
//              resampling); for metrics with an absolute threshold, of the
//              difference candidate - baseline.
//   p_value    two-sided Mann-Whitney U (SciPy's definition)
//   q_value    Benjamini-Hochberg across all metrics of the comparison
//   limit      the policy's threshold, raised to the baseline's run-to-run
//              noise floor when the baseline pools several runs: (max - min)
//              of the runs' medians, relative to the pooled median (absolute
//              for absolute thresholds). Repetitions inside one run do not see
//              the drift between processes; the floor does.
// Verdicts, oriented by the metric's direction:
//   regression    q < alpha AND the change is worse than the threshold
//   improvement   q < alpha AND the change is better than the threshold
//   unchanged     the whole interval lies within +-threshold (equivalence)
//   inconclusive  none of these (too few samples, too much noise)
//   missing / new the metric has samples on one side only (a candidate
//                 failure with baseline samples is a regression; a failure
//                 on both sides is missing: it cannot pass)
//   skipped       skipped on both sides (e.g. needs a GPU): not judged
//   info          informational metric (policy): reported, never judged
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace perfbench {

struct Threshold {
  bool absolute = false;  // false: relative (0.05 = 5%); true: in the metric's unit
  double value = 0.05;
  // Reported with its change and interval but never judged, and left out of
  // the q-values: e.g. `loss`, a per-step trajectory that is not a
  // distribution of repeated measurements (loss parity is `loss_delta`).
  bool informational = false;
};

struct Policy {
  double alpha = 0.05;       // false-discovery rate for q-values
  double confidence = 0.95;  // interval coverage
  int min_samples = 5;       // per side, below which the verdict is inconclusive
  // Defaults by metric name (glob), first match wins; then overrides by
  // "suite/workload/k:v/.../metric" glob, last match wins.
  std::vector<std::pair<std::string, Threshold>> defaults;
  std::vector<std::pair<std::string, Threshold>> overrides;

  static Policy Default();
  // Reads a policy JSON file (see baselines/policy.json); throws
  // std::invalid_argument naming the problem.
  static Policy Load(const std::string& path);
  Threshold For(const ResultRecord& r) const;
};

// A run's data to compare: one run, or several runs pooled (a label naming
// several runs: samples of matching results are concatenated).
struct RunData {
  std::string source;  // "baseline main", "file baselines/x.json"; empty for a run id or label
  RunRecord run;       // the newest run when pooled; id 0 when read from a file
  std::vector<int64_t> run_ids;
  std::vector<ResultRecord> results;
};

struct FieldDiff {
  std::string field, baseline, candidate;
};

struct MetricVerdict {
  std::string suite, workload, metric, unit;
  Params params;
  bool higher_is_better = false;
  size_t n_baseline = 0, n_candidate = 0;
  double baseline_median = 0, candidate_median = 0;
  double ratio = 0, ci_low = 0, ci_high = 0;  // ratio (or difference for absolute thresholds)
  bool absolute = false;
  double threshold = 0;        // the limit applied: max(policy's, noise floor)
  double policy_threshold = 0; // the policy's limit; `unchanged` is always judged against it
  double noise_floor = 0;      // run-to-run spread of the baseline's runs (0: one run)
  size_t baseline_runs = 1;
  double p_value = 1, q_value = 1;
  bool tested = false;  // p (and q unless informational) computed
  bool informational = false;
  std::string verdict, reason;
};

struct Comparison {
  std::vector<FieldDiff> software;  // torch, CUDA, driver, threads, build...: listed, not refused
  std::vector<FieldDiff> hardware;  // CPU, cores, memory, GPUs: incomparable unless allowed
  bool across_hardware = false;     // procurement view: ratios only, no pass/fail
  std::vector<MetricVerdict> metrics;
  std::string verdict;  // "regression" | "inconclusive" | "pass" | "report" (across hardware)
  int Count(const std::string& verdict) const;
};

// Throws std::invalid_argument when hardware differs and !across_hardware.
Comparison Compare(const RunData& baseline, const RunData& candidate, const Policy& policy, bool across_hardware);

// Reports.
std::string ComparisonTable(const Comparison& c, const RunData& a, const RunData& b, bool color, bool only_changed);
std::string ComparisonMarkdown(const Comparison& c, const RunData& a, const RunData& b, bool only_changed);
nlohmann::ordered_json ComparisonJson(const Comparison& c, const RunData& a, const RunData& b, bool only_changed);
std::string ComparisonJunit(const Comparison& c, const RunData& a, const RunData& b);

}  // namespace perfbench
