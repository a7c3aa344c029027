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
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/policy.h"
#include "store/store.h"

namespace perfbench {

// A metric's verdict, declared in the order summaries list them. The names
// ("regression", ...) are part of the JSON and exit-code contract.
enum class Verdict { kRegression, kImprovement, kUnchanged, kInconclusive, kMissing, kNew, kCompared, kInfo, kSkipped };
std::string_view ToString(Verdict v);
// Every verdict, in declaration order.
const std::vector<Verdict>& AllVerdicts();
// Report order, worst first: regression, inconclusive, missing, new,
// improvement, compared, unchanged, info, skipped.
int SeverityRank(Verdict v);

// A comparison's verdict: "pass" | "regression" | "inconclusive" | "report"
// (across hardware: ratios only).
enum class Overall { kPass, kRegression, kInconclusive, kReport };
std::string_view ToString(Overall o);

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
  Verdict verdict = Verdict::kInconclusive;
  std::string reason;
};

struct Comparison {
  std::vector<FieldDiff> software;  // torch, CUDA, driver, threads, build...: listed, not refused
  std::vector<FieldDiff> hardware;  // CPU, cores, memory, GPUs: incomparable unless allowed
  bool across_hardware = false;     // procurement view: ratios only, no pass/fail
  std::vector<MetricVerdict> metrics;
  Overall verdict = Overall::kPass;
  int Count(Verdict v) const;
};

// Throws std::invalid_argument when hardware differs and !across_hardware.
Comparison Compare(const RunData& baseline, const RunData& candidate, const Policy& policy, bool across_hardware);

// The verdict rules, exposed for their tests. JudgePresence decides what needs
// no test (skipped, missing, failed, new, too few samples) and returns true
// when it did; `m` holds the sample counts and medians. Judge applies the
// thresholds to a tested metric (ratio, interval and q-value set).
bool JudgePresence(MetricVerdict& m, const ResultRecord* baseline, const ResultRecord* candidate, int min_samples);
void Judge(MetricVerdict& m, double alpha);

// Reports.
std::string ComparisonTable(const Comparison& c, const RunData& a, const RunData& b, bool color, bool only_changed);
// A Markdown table cell: '|' and '\\' escaped, line breaks as spaces.
std::string MdCell(const std::string& text);
std::string ComparisonMarkdown(const Comparison& c, const RunData& a, const RunData& b, bool only_changed);
nlohmann::ordered_json ComparisonJson(const Comparison& c, const RunData& a, const RunData& b, bool only_changed);
std::string ComparisonJunit(const Comparison& c, const RunData& a, const RunData& b);

}  // namespace perfbench
