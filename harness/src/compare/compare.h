// Verdicts: comparing a candidate run with a baseline, metric by metric.
//
// For every metric present in both (matched by suite, workload, params and
// metric name):
// Processes are the independent samples (repetitions inside one process
// share its luck and its moment). Two levels:
//   process level  when both sides have >= 2 processes (a run with
//              --processes, a baseline of several runs, a label's runs
//              pooled): each process is summarised by its median; the ratio
//              is that of the geometric means of the process medians, with
//              Welch's t interval and test on their logarithms (degrees of
//              freedom from the processes, not the samples). With one
//              process on a side and two or more on the other (a baseline
//              of one run, a gate of several processes), the single process
//              is one more draw from the other side's spread: a t test with
//              that spread and n - 1 degrees of freedom. Deterministic: the
//              same inputs give the same verdict.
//   within-process  one process on both sides: median(candidate) /
//              median(baseline), the Hodges-Lehmann (Moses) interval of the
//              shift of log values and a two-sided Mann-Whitney U (SciPy's
//              definition). The reason says the verdict rests on
//              within-process samples only.
// For metrics with an absolute threshold the same on values, not logs.
//   q_value    Benjamini-Hochberg across all metrics of the comparison
//   mde        the detectable effect at 80% power (compare/detectable.h):
//              from the process summaries' spread on both sides, the limit
//              in force and the family of judged metrics
//   limit      max(the policy's threshold, the metric's noise floor from
//              history): with >= 5 earlier runs (History), F = Q3 + 3 IQR
//              of the absolute relative changes between consecutive runs'
//              medians, the last 30 (rustc-perf's significance threshold).
//              F is the change one run can show against the next, and the
//              equivalence margin: `unchanged` claims no change beyond
//              max(policy, F). For regressions and improvements, within
//              processes the floor is F; at the process level the test
//              already sees process-to-process variation, and a comparison
//              of n_a with n_b processes varies less than one of single runs:
//              F sqrt(k (1/n_a + 1/n_b) / 2), k the processes of a history
//              run (at most F). The reason says which applied. A paired
//              comparison (ComparePaired: ab, advise) keeps the policy's
//              limit: its pairs cancel the run-to-run wandering F measures,
//              and the pairs' own spread is in the signed-rank test and its
//              interval; F is reported beside it (what an unpaired
//              comparison could resolve here).
// Verdicts, oriented by the metric's direction:
//   regression    q < alpha AND the change is worse than the threshold
//   improvement   q < alpha AND the change is better than the threshold
//   unchanged     the (1 - 2 alpha) interval lies within +-limit: two one-sided
//                 tests at alpha (TOST, Schuirmann 1987): equivalence at the
//                 policy's threshold, or at the noise floor when history
//                 raised the limit: a change below the floor cannot be told
//                 from the machine's run-to-run noise, and the reason says so)
//   inconclusive  none of these (too few samples, too much noise), or a side
//                 has one process and no noise floor from history applies:
//                 one process cannot tell the code from the moment it ran
//                 in, so its between-process noise is unknown (the reason
//                 names the command that resolves it)
//   missing / new the metric has samples on one side only (a candidate
//                 failure with baseline samples is a regression; a failure
//                 on both sides is missing: it cannot pass)
//   skipped       skipped on both sides (e.g. needs a GPU): not judged
//   info          informational metric (policy): reported, never judged
// The control (suite `control`: a pinned GEMM and copy every run measures
// at its start and end) is judged the same way, with its own BH family, and
// then reported as `info`: when it reads a regression or an improvement the
// machine moved between the runs ("the machine changed: control/gemm flops
// -12%"), listed in Comparison::machine_changes; it never counts against the
// code. Not judged across hardware (the machines differ by design).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/policy.h"
#include "store/store.h"

namespace perfbench {

// Two runs that cannot be compared: other hardware (without
// --across-hardware), or a baseline that pools runs of several machines or
// conditions. The CLI's exit code 5, apart from bad usage (2).
class IncomparableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
// (across hardware: ratios only). Pass: no regression, nothing missing, and
// every inconclusive metric has a known detectable effect (a pass states it;
// UnresolvedNote when it exceeds the policy's mde). Inconclusive: a metric
// missing, or inconclusive with its between-process noise unknown.
enum class Overall { kPass, kRegression, kInconclusive, kReport };
std::string_view ToString(Overall o);

// What a verdict compares, and so what it can resolve on a machine that
// moves (docs/verdicts.md). The names are part of the JSON contract.
// - interleaved: the reference and the candidate ran now, in alternating
//   processes (ab, gate --reference-bin/--reference-model): the machine's
//   slow periods cancel in each pair's ratio;
// - stored baseline: a baseline stored earlier (a name or an export file);
// - rolling baseline: the last runs of a label on this machine (gate/compare
//   label:NAME), after its last change point;
// - stored runs: two stored runs, labels or files (compare v1 v2).
// The last three set numbers from another moment against this one: they
// resolve what the machine's run-to-run spread allows (each verdict's mde).
enum class VerdictKind { kStoredRuns, kStoredBaseline, kRolling, kInterleaved };
std::string_view ToString(VerdictKind k);  // "stored_runs", "stored_baseline", "rolling_baseline", "interleaved"
// One line for reports, under 115 characters: "interleaved: the reference
// and the candidate ran now, in alternating processes (slow periods cancel)".
std::string KindNote(VerdictKind k);

// A run's data to compare: one run, or several runs pooled (a label naming
// several runs: samples of matching results are concatenated).
struct RunData {
  std::string source;  // "baseline main", "file baselines/x.json"; empty for a run id or label
  RunRecord run;       // the newest run when pooled; id 0 when read from a file
  std::vector<int64_t> run_ids;  // stored runs, newest first (empty for a file)
  size_t run_count = 1;          // runs pooled (a file may hold several)
  // One record per run and result; pooled, each run's processes count as
  // further processes.
  std::vector<ResultRecord> results;
};

// Earlier runs' medians per result key (ResultKey), each series in time
// order, for the noise floor. Built by the caller from the store.
struct History {
  std::map<std::string, std::vector<std::vector<double>>> series;
  // Median processes per history run, per key (1 when absent).
  std::map<std::string, double> processes_per_run;
  // Mean variance of the log process medians within a history run (runs of
  // 2+ processes), per key: what a run's processes explain of its median.
  std::map<std::string, double> process_var;
};

// Which samples a metric's test rests on.
enum class Level { kWithinProcess, kProcess };

struct FieldDiff {
  std::string field, baseline, candidate;
};

struct MetricVerdict {
  std::string suite, workload, metric, unit;
  Params params;
  bool higher_is_better = false;
  size_t n_baseline = 0, n_candidate = 0;
  double baseline_median = 0, candidate_median = 0;
  double ratio = 0, ci_low = 0, ci_high = 0;  // ratio; the interval is of the difference for absolute thresholds
  // Absolute thresholds: the estimate of candidate - baseline the test and
  // its interval belong to (difference of medians, of process-median means,
  // or the paired Hodges-Lehmann estimate).
  double difference = 0;
  // The (1 - 2 alpha) interval the equivalence claim rests on (TOST); when
  // unset, `unchanged` is judged on ci_low/ci_high.
  double eq_low = 0, eq_high = 0, eq_confidence = 0;
  bool has_eq = false;
  bool absolute = false;
  double threshold = 0;        // regression/improvement limit: max(policy's, floor_for_test)
  double policy_threshold = 0; // the policy's limit
  double margin = 0;           // equivalence margin: max(policy's, noise_floor); 0: the threshold
  double noise_floor = 0;      // F from history (0: fewer than kMinHistoryRuns earlier runs)
  double floor_for_test = 0;   // F, scaled to this comparison's processes at the process level
  double Margin() const { return margin > 0 ? margin : threshold; }
  size_t history_runs = 0;     // earlier runs the floor was learned from
  // The variance (log scale) of a run's moment, shared by all its processes:
  // of earlier runs' log medians, less what their processes explain
  // (RunMomentVariance). Added to a process-level test's standard error,
  // as run_var (1 + 1 / baseline_runs) on run_var_runs - 1 degrees of
  // freedom: the candidate's processes are one run, the baseline's mean
  // pools baseline_runs. 0: no history.
  double run_var = 0;
  size_t run_var_runs = 0;
  size_t baseline_runs = 1;  // runs the baseline pools: its mean carries run_var / baseline_runs
  Level level = Level::kWithinProcess;
  size_t processes_baseline = 0, processes_candidate = 0;
  size_t pairs = 0;  // paired comparison (ab): pairs the test used
  double p_value = 1, q_value = 1;
  bool tested = false;  // p (and q unless informational) computed
  bool informational = false;
  bool control = false;  // suite `control`: a machine change, never a code verdict
  // The detectable effect (compare/detectable.h): the smallest true change
  // this comparison calls with 80% power, relative for ratios (0.094: 9.4%),
  // in the unit for absolute thresholds; known at the process level only
  // (has_mde). se and df: the estimate's standard error (log scale for
  // ratios) and degrees of freedom. policy_mde: the policy's bound on it
  // (Threshold::mde); a pass whose mde exceeds it cannot resolve that much.
  double mde = 0, se = 0, df = 0, policy_mde = 0;
  bool has_mde = false;
  // A side has one process and no noise floor from history applies: the
  // between-process noise is unknown, so no verdict but inconclusive.
  bool between_unknown = false;
  // compare (require_known_moment): one run on a side, no earlier runs to
  // learn the run-to-run spread from (neither a run moment nor a noise
  // floor), and samples that vary: a change could be the moment the runs
  // happened in, so it is inconclusive and the detectable effect unknown.
  bool moment_unknown = false;
  bool Resolves() const { return has_mde && mde <= policy_mde; }
  Verdict verdict = Verdict::kInconclusive;
  std::string reason;
};

// The power the detectable effect is stated at.
inline constexpr double kMdePower = 0.8;

struct Comparison {
  std::vector<FieldDiff> software;  // torch, CUDA, driver, threads, build...: listed, not refused
  std::vector<FieldDiff> hardware;  // CPU, cores, memory, GPUs: incomparable unless allowed
  bool across_hardware = false;     // procurement view: ratios only, no pass/fail
  std::vector<MetricVerdict> metrics;
  // "the machine changed: control/gemm flops -12.1% [-14%, -10%]": controls
  // that moved beyond their noise between the two sides ("the control moved
  // (the settings differ: settings.threads)" when the settings differ, "the
  // control moved between A and B" in a paired comparison).
  std::vector<std::string> machine_changes;
  Overall verdict = Overall::kPass;
  VerdictKind kind = VerdictKind::kStoredRuns;  // ComparePaired: interleaved; callers set the others
  int Count(Verdict v) const;
  // Judged metrics (tested, neither informational nor control) whose
  // detectable effect is unknown or above the policy's mde.
  std::vector<const MetricVerdict*> Unresolved() const;
};

// "catches throughput regressions of 9.4% or more (80% power)": the largest
// detectable effect among the judged metrics named like `metric` (a glob;
// the first of throughput*, step_time*, * that has any), or what keeps it
// unknown. `who`: "this gate", "this comparison".
std::string DetectableHeadline(const Comparison& c, const std::string& who);
// "pass, but cannot resolve 12.0% (throughput of amp/mlp/...; policy mde
// 10%)" when a pass has unresolved metrics; "" otherwise.
std::string UnresolvedNote(const Comparison& c);
// One line per judged workload variant, in report order: "amp/mlp fp32/quick:
// throughput 1.23x [1.19, 1.27] slower: regression". The headline metric is
// its throughput (else step time, else its first judged metric); the verdict
// is the variant's worst, naming the metric when it is not the headline.
std::vector<std::string> WorkloadSummaries(const Comparison& c);

// The variance of a run's moment (see MetricVerdict::run_var) for `key`:
// the sample variance of the logs of the last kMaxHistoryRuns run medians
// within 4 robust sd (1.4826 MAD) of their median, so a wild run or two
// does not blind the test, less the within-run variance of log process medians
// (History::process_var, else `process_var`) over the median processes per
// run; at least 0. 0 with fewer than kMinHistoryRuns runs or a median that
// is not positive. `runs` gets the runs used.
double RunMomentVariance(const History& h, const std::string& key, double process_var, size_t* runs);

// Fewest earlier runs a noise floor is learned from, and most used.
inline constexpr size_t kMinHistoryRuns = 5, kMaxHistoryRuns = 30;
// Q3 + 3 IQR of |x[i] - x[i-1]| / |x[i]| within each series (the last
// kMaxHistoryRuns runs overall); quartiles as medians of the lower and upper
// halves (the middle value of an odd count in neither). 0 with fewer than
// kMinHistoryRuns runs. `runs` gets the number of runs used.
double NoiseFloor(const std::vector<std::vector<double>>& series, size_t* runs);

// The overall verdict of judged metrics: regression when any is one;
// inconclusive when one is missing, or inconclusive without a detectable
// effect; else pass (report across hardware). Compare sets it; a gate that
// changes metrics' verdicts afterwards (a confirmation round) recomputes it.
Overall OverallVerdict(const Comparison& c);

// Throws IncomparableError when hardware differs and !across_hardware.
// require_known_moment (compare v1 v2): a metric measured in one run on a
// side, with no history to learn the machine's run-to-run spread from and
// samples that vary, is never called a change (MetricVerdict::moment_unknown).
Comparison Compare(const RunData& baseline, const RunData& candidate, const Policy& policy, bool across_hardware,
                   const History& history = {}, bool require_known_moment = false);

// Paired runs (perfbench ab): pair i is a_pairs[i] and b_pairs[i], run back
// to back; `a` and `b` pool each side (presence, medians, fingerprints).
struct PairedData {
  RunData a, b;
  std::vector<std::vector<ResultRecord>> a_pairs, b_pairs;
};
// Each metric is judged on its pair log ratios log(median(B_i) / median(A_i))
// (differences B_i - A_i for absolute thresholds): Wilcoxon signed-rank
// (SciPy's wilcoxon) and the paired Hodges-Lehmann estimate and interval,
// exponentiated into a ratio; BH across metrics and the usual verdicts at
// the policy's limits, raised by noise floors from `history` as Compare
// does (each side's N processes). Needs >= kMinPairs pairs with samples on
// both sides: with fewer the signed-rank test can never reach p < 0.05 and the
// paired interval falls back to the full range.
inline constexpr size_t kMinPairs = 6;
Comparison ComparePaired(const PairedData& d, const Policy& policy, const History& history = {});

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
