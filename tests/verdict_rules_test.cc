// Every branch of the verdict rules, table-driven: what needs no test
// (JudgePresence) and what the thresholds decide (Judge), plus the verdicts
// only Compare gives (info, compared) and the one result identity.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

#include "compare/compare.h"

namespace perfbench {
namespace {

ResultRecord Rec(ResultStatus status, std::vector<double> samples, std::string reason = "") {
  ResultRecord r;
  r.suite = "s";
  r.workload = "w";
  r.metric = "throughput";
  r.unit = "samples/s";
  r.higher_is_better = true;
  r.status = status;
  r.reason = std::move(reason);
  r.samples = std::move(samples);
  return r;
}

struct PresenceCase {
  const char* name;
  std::optional<ResultRecord> baseline, candidate;
  bool decided;
  Verdict verdict;
  const char* reason_part;
};

TEST(VerdictRules, PresenceBranches) {
  const auto ok5 = Rec(ResultStatus::kOk, {1, 2, 3, 4, 5});
  const auto ok3 = Rec(ResultStatus::kOk, {1, 2, 3});
  const auto skip = Rec(ResultStatus::kSkipped, {}, "needs cuda");
  const auto fail_empty = Rec(ResultStatus::kFailed, {}, "boom");
  const auto fail_some = Rec(ResultStatus::kFailed, {1, 2}, "boom");
  const std::vector<PresenceCase> cases = {
      {"skipped on both sides", skip, skip, true, Verdict::kSkipped, "skipped in both: needs cuda"},
      {"absent from the candidate", ok5, std::nullopt, true, Verdict::kMissing, "not in the candidate"},
      {"skipped in the candidate", ok5, skip, true, Verdict::kMissing, "skipped in the candidate: needs cuda"},
      {"failed after working", ok5, fail_empty, true, Verdict::kRegression, "failed in the candidate: boom"},
      {"failed with some samples", ok5, fail_some, true, Verdict::kRegression, "failed in the candidate"},
      {"failed on both sides", fail_empty, fail_empty, true, Verdict::kMissing, "no baseline samples either (failed)"},
      {"absent from the baseline", std::nullopt, ok5, true, Verdict::kNew, "not in the baseline"},
      {"baseline skipped", skip, ok5, true, Verdict::kNew, "no baseline samples (skipped: needs cuda)"},
      {"too few samples", ok5, ok3, true, Verdict::kInconclusive, "5 vs 3 samples, need >= 5 per side"},
      {"enough samples: a test decides", ok5, ok5, false, Verdict::kInconclusive, ""},
  };
  for (const auto& c : cases) {
    MetricVerdict m;
    m.n_baseline = c.baseline ? c.baseline->samples.size() : 0;
    m.n_candidate = c.candidate ? c.candidate->samples.size() : 0;
    const bool decided =
        JudgePresence(m, c.baseline ? &*c.baseline : nullptr, c.candidate ? &*c.candidate : nullptr, 5);
    EXPECT_EQ(decided, c.decided) << c.name;
    if (!decided) continue;
    EXPECT_EQ(m.verdict, c.verdict) << c.name << ": " << ToString(m.verdict);
    EXPECT_NE(m.reason.find(c.reason_part), std::string::npos) << c.name << ": " << m.reason;
  }
}

struct JudgeCase {
  const char* name;
  bool higher_is_better, absolute;
  double baseline, candidate, ci_low, ci_high, q;
  double threshold, noise_floor;
  Verdict verdict;
  const char* reason_part;
};

TEST(VerdictRules, ThresholdBranches) {
  // ratio = candidate / baseline; the interval is of the ratio (or of the
  // difference when absolute). Limit 5% unless raised by a noise floor.
  const std::vector<JudgeCase> cases = {
      {"significant drop of a higher-is-better metric", true, false, 100, 90, 0.88, 0.92, 0.001, 0.05, 0,
       Verdict::kRegression, "throughput -10.0% [-12.0%, -8.0%], q=0.001; within-process samples only"},
      {"significant rise of a lower-is-better metric", false, false, 100, 110, 1.08, 1.12, 0.001, 0.05, 0,
       Verdict::kRegression, "limit ±5%"},
      {"significant rise of a higher-is-better metric", true, false, 100, 110, 1.08, 1.12, 0.001, 0.05, 0,
       Verdict::kImprovement, "+10.0%"},
      {"significant drop of a lower-is-better metric", false, false, 100, 90, 0.88, 0.92, 0.001, 0.05, 0,
       Verdict::kImprovement, "-10.0%"},
      {"interval within the limit", true, false, 100, 101, 0.98, 1.03, 0.5, 0.05, 0, Verdict::kUnchanged,
       "interval within ±5%"},
      {"significant but within the limit", true, false, 100, 98, 0.97, 0.99, 0.001, 0.05, 0, Verdict::kUnchanged,
       "interval within"},
      {"beyond the limit, not significant", true, false, 100, 90, 0.80, 1.01, 0.2, 0.05, 0, Verdict::kInconclusive,
       "but not significant (q >= 0.05)"},
      {"interval crossing the limit", true, false, 100, 97, 0.93, 1.01, 0.2, 0.05, 0, Verdict::kInconclusive,
       "interval crosses the ±5% (policy) margin"},
      {"a noise floor raises the limit", true, false, 100, 92, 0.88, 0.96, 0.001, 0.10, 0.10,
       Verdict::kInconclusive, "±10% (noise floor from 6 earlier runs; policy 5%) margin"},
      {"equivalence at a raised limit says so", true, false, 100, 97, 0.93, 1.01, 0.5, 0.10, 0.10,
       Verdict::kUnchanged, "interval within ±10% (noise floor from 6 earlier runs"},
      {"absolute threshold, regression", false, true, 0.01, 0.05, 0.035, 0.045, 0.001, 0.02, 0, Verdict::kRegression,
       "+0.04 [+0.035, +0.045]"},
      {"absolute threshold, unchanged", false, true, 0.01, 0.011, -0.005, 0.006, 0.6, 0.02, 0, Verdict::kUnchanged,
       "interval within ±0.02"},
  };
  for (const auto& c : cases) {
    MetricVerdict m;
    m.metric = "throughput";
    m.unit = c.absolute ? "1" : "samples/s";
    m.higher_is_better = c.higher_is_better;
    m.absolute = c.absolute;
    m.baseline_median = c.baseline;
    m.candidate_median = c.candidate;
    m.ratio = c.candidate / c.baseline;
    m.difference = c.candidate - c.baseline;
    m.ci_low = c.ci_low;
    m.ci_high = c.ci_high;
    m.q_value = c.q;
    m.policy_threshold = 0.05 * (c.absolute ? 0.4 : 1);  // 0.02 absolute
    m.threshold = std::max(c.threshold, m.policy_threshold);
    m.noise_floor = m.floor_for_test = c.noise_floor;
    m.history_runs = c.noise_floor > 0 ? 6 : 0;
    Judge(m, 0.05);
    EXPECT_EQ(m.verdict, c.verdict) << c.name << ": " << ToString(m.verdict) << " " << m.reason;
    EXPECT_NE(m.reason.find(c.reason_part), std::string::npos) << c.name << ": " << m.reason;
  }
}

// Five identical earlier runs per metric: a noise floor of 0, so that one
// process a side is judged on its repetitions at the policy's limits.
History Quiet(const RunData& d) {
  History h;
  for (const auto& r : d.results) h.series[ResultKey(r)] = {std::vector<double>(kMinHistoryRuns, 1.0)};
  return h;
}

RunData Side(std::vector<ResultRecord> results, const std::string& cpu = "x") {
  RunData d;
  d.run.fingerprint = {{"cpu_model", cpu}};
  d.results = std::move(results);
  return d;
}

TEST(VerdictRules, InformationalMetricsAreReportedNotJudged) {
  auto a = Rec(ResultStatus::kOk, {1, 1.1, 1.2, 1.3, 1.4});
  auto b = Rec(ResultStatus::kOk, {2, 2.1, 2.2, 2.3, 2.4});
  a.metric = b.metric = "loss";
  const Comparison c = Compare(Side({a}), Side({b}), Policy::Default(), false);
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(c.metrics[0].verdict, Verdict::kInfo);
  EXPECT_EQ(c.verdict, Overall::kPass);
}

// The harness's own time (run_cost.h): one sample per process, so fewer
// than a verdict needs, and on one side only against an older run. Never
// judged, never undecided, whatever a policy file matches.
TEST(VerdictRules, TheHarnesssOwnTimeIsInformationWithItsFewSamples) {
  const auto code = Rec(ResultStatus::kOk, {1, 1, 1, 1, 1});
  auto time = Rec(ResultStatus::kOk, {10, 11, 12});
  time.suite = "harness";
  time.workload = "time";
  time.metric = "wall_time";
  time.higher_is_better = false;
  auto slower = time;
  slower.samples = {20, 21, 22};
  Policy judged = Policy::Default();
  judged.overrides.push_back({"*", {false, 0.05}});
  for (const Policy& policy : {Policy::Default(), judged}) {
    const Comparison c = Compare(Side({code, time}), Side({code, slower}), policy, false, Quiet(Side({code})));
    EXPECT_EQ(c.verdict, Overall::kPass);
    const Comparison older = Compare(Side({code, time}), Side({code}), policy, false, Quiet(Side({code})));
    EXPECT_EQ(older.verdict, Overall::kPass);
    for (const auto& m : c.metrics)
      if (m.suite == "harness") EXPECT_EQ(m.verdict, Verdict::kInfo) << m.reason;
  }
}

ResultRecord Control(std::vector<double> samples) {
  auto r = Rec(ResultStatus::kOk, std::move(samples));
  r.suite = "control";
  r.workload = "gemm";
  r.metric = "flops";
  return r;
}

// The control moved a lot while the code's metric held: a machine change is
// named, the control is `info`, and the comparison passes.
TEST(VerdictRules, AControlThatMovedNamesTheMachineAndIsNeverARegression) {
  const auto code = Rec(ResultStatus::kOk, {10, 10.1, 9.9, 10.05, 9.95, 10, 10.02});
  const auto slow = Control({1, 1.01, 0.99, 1.02, 0.98, 1, 1.01, 0.99, 1, 1});
  const auto fast = Control({2, 2.02, 1.98, 2.01, 1.99, 2, 2.03, 1.97, 2, 2});
  const Comparison c = Compare(Side({code, fast}), Side({code, slow}), Policy::Default(), false, Quiet(Side({code})));
  ASSERT_EQ(c.metrics.size(), 2u);
  EXPECT_EQ(c.verdict, Overall::kPass);
  EXPECT_EQ(c.Count(Verdict::kRegression), 0);
  ASSERT_EQ(c.machine_changes.size(), 1u);
  EXPECT_EQ(c.machine_changes[0].rfind("the machine changed: control/gemm flops -50", 0), 0u) << c.machine_changes[0];
  for (const auto& m : c.metrics) {
    if (m.suite != "control") continue;
    EXPECT_TRUE(m.control);
    EXPECT_EQ(m.verdict, Verdict::kInfo);
    EXPECT_NE(m.reason.find("the machine changed"), std::string::npos) << m.reason;
  }
  // The same code metric regressing is still a regression beside a control that held.
  auto worse = code;
  for (double& x : worse.samples) x *= 0.5;
  const Comparison d = Compare(Side({code, fast}), Side({worse, fast}), Policy::Default(), false, Quiet(Side({code})));
  EXPECT_EQ(d.verdict, Overall::kRegression);
  EXPECT_TRUE(d.machine_changes.empty());
}

// A control on one side only (an older baseline, --no-control) cannot make
// a comparison inconclusive.
TEST(VerdictRules, AControlOnOneSideIsInformation) {
  const auto code = Rec(ResultStatus::kOk, {10, 10.1, 9.9, 10.05, 9.95, 10, 10.02});
  const Comparison c =
      Compare(Side({code}), Side({code, Control({1, 1, 1, 1, 1})}), Policy::Default(), false, Quiet(Side({code})));
  EXPECT_EQ(c.verdict, Overall::kPass);
  for (const auto& m : c.metrics)
    if (m.control) {
      EXPECT_EQ(m.verdict, Verdict::kInfo);
    }
  // A control that failed on one side was never tested: not a machine change either.
  auto failed = Control({});
  failed.status = ResultStatus::kFailed;
  const Comparison d =
      Compare(Side({code, Control({1, 1, 1, 1, 1})}), Side({code, failed}), Policy::Default(), false, Quiet(Side({code})));
  EXPECT_EQ(d.verdict, Overall::kPass);
  EXPECT_TRUE(d.machine_changes.empty());
}

TEST(VerdictRules, AcrossHardwareEveryTestedMetricIsComparedAndTheRunIsAReport) {
  const auto a = Rec(ResultStatus::kOk, {1, 1.1, 1.2, 1.3, 1.4});
  const auto b = Rec(ResultStatus::kOk, {2, 2.1, 2.2, 2.3, 2.4});
  EXPECT_THROW(Compare(Side({a}, "x"), Side({b}, "y"), Policy::Default(), false), IncomparableError);
  const Comparison c = Compare(Side({a}, "x"), Side({b}, "y"), Policy::Default(), true);
  EXPECT_EQ(c.metrics[0].verdict, Verdict::kCompared);
  EXPECT_EQ(c.verdict, Overall::kReport);
}

TEST(VerdictRules, EveryVerdictHasOneNameAndARank) {
  std::set<std::string> names;
  std::set<int> ranks;
  for (Verdict v : AllVerdicts()) {
    names.insert(std::string(ToString(v)));
    ranks.insert(SeverityRank(v));
  }
  EXPECT_EQ(names.size(), 9u);
  EXPECT_EQ(ranks.size(), 9u);
  EXPECT_EQ(SeverityRank(Verdict::kRegression), 0);
  EXPECT_EQ(ToString(Overall::kInconclusive), "inconclusive");
}

TEST(ResultIdentity, ParamsMatchWhateverTheirOrder) {
  Params ab{{"a", "1"}, {"b", "2"}}, ba{{"b", "2"}, {"a", "1"}};
  EXPECT_EQ(VariantKey("s", "w", ab), VariantKey("s", "w", ba));
  EXPECT_NE(VariantKey("s", "w", ab), VariantKey("s", "w", Params{{"a", "1"}, {"b", "3"}}));
  auto a = Rec(ResultStatus::kOk, {1, 1.01, 0.99, 1.0, 1.02});
  auto b = a;
  a.params = ab;
  b.params = ba;
  const Comparison c = Compare(Side({a}), Side({b}), Policy::Default(), false);
  ASSERT_EQ(c.metrics.size(), 1u);  // one metric, matched: not "missing" plus "new"
  EXPECT_EQ(c.metrics[0].n_candidate, 5u);
}

TEST(VerdictRules, AChangedMathModeIsAnotherVariantNeverARegression) {
  auto a = Rec(ResultStatus::kOk, {100, 101, 102, 99, 100});
  auto b = Rec(ResultStatus::kOk, {50, 51, 52, 49, 50});  // half as fast: but under other math
  a.attributes = {{"math.fp32_precision.cuda.conv", "tf32"}, {"math.cudnn_benchmark", "off"}};
  b.attributes = {{"math.fp32_precision.cuda.conv", "ieee"}, {"math.cudnn_benchmark", "off"}};
  const Comparison c = Compare(Side({a}), Side({b}), Policy::Default(), false);
  ASSERT_EQ(c.metrics.size(), 2u);
  EXPECT_EQ(c.metrics[0].verdict, Verdict::kMissing);
  EXPECT_EQ(c.metrics[1].verdict, Verdict::kNew);
  EXPECT_NE(c.metrics[0].reason.find("math.fp32_precision.cuda.conv tf32 -> ieee"), std::string::npos)
      << c.metrics[0].reason;
  EXPECT_NE(c.verdict, Overall::kRegression);
  // Named among the differences too.
  ASSERT_EQ(c.software.size(), 1u);
  EXPECT_EQ(c.software[0].field, "math.fp32_precision.cuda.conv (1 variant)");
  // A side from before math modes were recorded is compared as before.
  b.attributes.clear();
  EXPECT_EQ(Compare(Side({a}), Side({b}), Policy::Default(), false).metrics.size(), 1u);
}

}  // namespace
}  // namespace perfbench
