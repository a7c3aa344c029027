// The gate's core, driven directly: the detectable effect against SciPy's
// quantiles, the plan, the rounds with a fake process runner, and the
// rolling window over a real store.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "compare/detectable.h"
#include "exit_code.h"
#include "gate/gate.h"
#include "gate/plan.h"
#include "gate/window.h"
#include "store/store.h"

namespace perfbench {
namespace {

namespace fs = std::filesystem;  // core_test links no LibTorch

// Quantiles from SciPy 1.14.1 (Python 3.11):
//   scipy.stats.norm.ppf(0.975) = 1.959963984540054
//   scipy.stats.norm.ppf(0.8)   = 0.8416212335729143
//   scipy.stats.t.ppf(1 - 0.05 / 20, 8) = 3.8325186853443887   (alpha 0.05 over m = 10, two-sided)
//   scipy.stats.t.ppf(0.8, 8)           = 0.8888895177669744
TEST(Detectable, MatchesTheNormalQuantilesAtLargeDf) {
  // max(z_.975 * se, 0) + z_.8 * se with se = 0.01.
  EXPECT_NEAR(DetectableShift(0.01, 1e7, 0, 1, 0.05), 0.01 * (1.959963984540054 + 0.8416212335729143), 1e-7);
}

TEST(Detectable, UsesTheFamilyAndStudentsT) {
  EXPECT_NEAR(DetectableShift(0.02, 8, 0, 10, 0.05), 0.02 * (3.8325186853443887 + 0.8888895177669744), 1e-9);
}

TEST(Detectable, TheLimitBindsWhenTheTestIsSharperThanIt) {
  // t_a se = 0.0383 < limit 0.05: D = limit + t_.8 se; a change equal to the
  // limit is never caught with more than 50%.
  EXPECT_NEAR(DetectableShift(0.01, 8, 0.05, 10, 0.05), 0.05 + 0.01 * 0.8888895177669744, 1e-9);
  EXPECT_GT(DetectableShift(0.001, 1e6, 0.05, 1, 0.05), 0.05);
}

TEST(Detectable, RejectsNonsense) {
  EXPECT_THROW(DetectableShift(-1, 8, 0, 1, 0.05), std::invalid_argument);
  EXPECT_THROW(DetectableShift(0.1, 0, 0, 1, 0.05), std::invalid_argument);
  EXPECT_THROW(DetectableShift(0.1, 8, 0, 0, 0.05), std::invalid_argument);
  EXPECT_THROW(DetectableShift(0.1, 8, 0, 1, 0.05, 1.0), std::invalid_argument);
}

TEST(Detectable, StandardErrorOfADifferenceIsWelchs) {
  const auto e = DifferenceStandardError(0.04, 5, 0.01, 10);
  EXPECT_NEAR(e.se, std::sqrt(0.04 / 5 + 0.01 / 10), 1e-12);
  // Welch-Satterthwaite: (a + b)^2 / (a^2 / 4 + b^2 / 9), a = 0.008, b = 0.001.
  EXPECT_NEAR(e.df, 0.009 * 0.009 / (0.008 * 0.008 / 4 + 0.001 * 0.001 / 9), 1e-9);
  const auto one = DifferenceStandardError(0, 1, 0.01, 10);  // one value against a spread
  EXPECT_NEAR(one.se, std::sqrt(0.01 * 1.1), 1e-12);
  EXPECT_EQ(one.df, 9);
  EXPECT_THROW(DifferenceStandardError(0, 1, 0, 1), std::invalid_argument);
}

// --- plan and rounds -------------------------------------------------------

ResultRecord Metric(int i) {
  ResultRecord r;
  r.suite = "sim";
  r.workload = "w" + std::to_string(i);
  r.params = Params{{"k", "v"}};
  r.metric = "step_time";
  r.unit = "s";
  return r;
}

// `metrics` metrics of `processes` processes, log-normal noise (between,
// within), times `scale` for the first `regressed` metrics.
// `noisy0`: metric 0's between-process sd instead of `between`.
RunData MakeRun(int metrics, int processes, int reps, double between, double within, std::mt19937_64& rng,
                double scale = 1, int regressed = 0, int first_index = 0, double noisy0 = 0) {
  RunData d;
  std::normal_distribution<double> z;
  for (int i = 0; i < metrics; ++i) {
    ResultRecord r = Metric(i);
    const double b = i == 0 && noisy0 > 0 ? noisy0 : between;
    for (int p = 0; p < processes; ++p) {
      const double offset = std::exp(b * z(rng)) * (i < regressed ? scale : 1.0);
      for (int k = 0; k < reps; ++k) {
        r.samples.push_back(offset * std::exp(within * z(rng)));
        r.process.push_back(first_index + p);
      }
    }
    d.results.push_back(std::move(r));
  }
  return d;
}

TEST(Plan, MoreMetricsAndATighterMdeNeedMoreProcesses) {
  std::mt19937_64 rng(7);
  const RunData base = MakeRun(10, 60, 3, 0.04, 0.03, rng);
  const GatePlan ten = PlanGate(base, 3, Policy::Default());
  EXPECT_GE(ten.first, GatePlan::kMinFirst);
  EXPECT_LE(ten.first, GatePlan::kDefaultMax);
  EXPECT_EQ(ten.metrics.size(), 10u);
  EXPECT_EQ(ten.repetitions, 2);  // a quarter of 3, at least 2
  const RunData base50 = MakeRun(50, 60, 3, 0.04, 0.03, rng);
  EXPECT_GE(PlanGate(base50, 3, Policy::Default()).first, ten.first);
  Policy tight = Policy::Default();
  for (auto& [glob, t] : tight.defaults) t.mde = 0.07;
  EXPECT_GT(PlanGate(base, 3, tight).first, ten.first);
  // Every metric that reaches its mde says so; the worst is listed first.
  EXPECT_LE(ten.metrics.front().mde_at_first, 0.10 + 1e-9) << ten.Describe();
  EXPECT_EQ(ten.Unreachable(), 0u) << ten.Describe();
}

TEST(Plan, TwoLooksSplitAlphaAndTheCapsHold) {
  std::mt19937_64 rng(8);
  const RunData base = MakeRun(10, 60, 3, 0.04, 0.03, rng);
  const GatePlan p = PlanGate(base, 3, Policy::Default());
  ASSERT_LT(p.first, p.max_processes);
  EXPECT_EQ(p.Looks(), 2);
  EXPECT_DOUBLE_EQ(p.policy.alpha, 0.025);
  EXPECT_EQ(NextRound(p, p.first), p.max_processes - p.first);
  EXPECT_EQ(NextRound(p, p.max_processes), 0);
  PlanLimits limits;
  limits.max_seconds = 30;
  limits.process_seconds = 10;  // 3 processes fit
  const GatePlan capped = PlanGate(base, 3, Policy::Default(), limits);
  EXPECT_EQ(capped.max_processes, 3);
  EXPECT_LE(capped.first, 3);
  limits = {};
  limits.first = 4;
  EXPECT_EQ(PlanGate(base, 3, Policy::Default(), limits).first, 4);
  limits.max_processes = 3;
  EXPECT_THROW(PlanGate(base, 3, Policy::Default(), limits), std::invalid_argument);
}

TEST(Plan, ABaselineOfOneProcessHasNothingToSizeBy) {
  std::mt19937_64 rng(9);
  const GatePlan p = PlanGate(MakeRun(3, 1, 5, 0.04, 0.03, rng), 5, Policy::Default());
  EXPECT_EQ(p.first, GatePlan::kNoSpreadFirst);
  EXPECT_NE(p.sizing.find("one process"), std::string::npos);
}

// A candidate made on demand, as the CLI's processes would store it.
class FakeRunner final : public gate::ProcessRunner {
 public:
  FakeRunner(int metrics, double scale, uint64_t seed, double noisy0 = 0, double between = 0.04, double within = 0.03)
      : metrics_(metrics), scale_(scale), noisy0_(noisy0), between_(between), within_(within), rng_(seed) {
    for (int i = 0; i < metrics; ++i) results_.push_back(Metric(i));
  }
  size_t Run(const std::vector<std::string>& keys, int first, int count, int) override {
    calls.push_back(keys);
    const std::set<std::string> wanted(keys.begin(), keys.end());
    const double scale = calls.size() > 1 && later_scale > 0 ? later_scale : scale_;
    const RunData more = MakeRun(metrics_, count, 2, between_, within_, rng_, scale, 1, first, noisy0_);
    for (size_t i = 0; i < results_.size(); ++i) {
      if (!wanted.empty() && !wanted.count(VariantKey(results_[i].suite, results_[i].workload, results_[i].params)))
        continue;
      results_[i].samples.insert(results_[i].samples.end(), more.results[i].samples.begin(), more.results[i].samples.end());
      results_[i].process.insert(results_[i].process.end(), more.results[i].process.begin(), more.results[i].process.end());
    }
    return 0;
  }
  std::vector<ResultRecord> Results() override { return results_; }
  std::vector<std::vector<std::string>> calls;
  double later_scale = 0;  // > 0: metric 0's scale after the first call (a moment that passed)

 private:
  int metrics_;
  double scale_, noisy0_, between_, within_;
  std::mt19937_64 rng_;
  std::vector<ResultRecord> results_;
};

gate::GateInputs Inputs(const RunData& base, int metrics) {
  gate::GateInputs in;
  in.baseline = base;
  in.plan = PlanGate(base, 3, Policy::Default());
  for (int i = 0; i < metrics; ++i) {
    const ResultRecord r = Metric(i);
    in.variants.push_back(VariantKey(r.suite, r.workload, r.params));
  }
  return in;
}

TEST(Gate, AnUnchangedBuildPassesWithItsDetectableEffect) {
  std::mt19937_64 rng(11);
  const RunData base = MakeRun(5, 60, 3, 0.04, 0.03, rng);
  FakeRunner runner(5, 1.0, 12);
  const auto o = gate::RunGate(Inputs(base, 5), RunData{}, runner);
  EXPECT_EQ(o.Verdict(), "pass");
  EXPECT_EQ(gate::GateExit(o, false, false), 0);
  for (const auto& m : o.comparison.metrics) {
    EXPECT_TRUE(m.has_mde) << m.reason;
    EXPECT_GT(m.mde, 0.05);  // never below the limit
    EXPECT_LT(m.mde, 0.15);
  }
  EXPECT_NE(DetectableHeadline(o.comparison, "this gate").find("this gate catches step_time regressions of"),
            std::string::npos)
      << DetectableHeadline(o.comparison, "this gate");
  EXPECT_EQ(runner.calls.front().size(), 0u);  // the first round runs everything
}

TEST(Gate, FindsAPlantedSlowdownAndRecordsTheVerdict) {
  std::mt19937_64 rng(13);
  const RunData base = MakeRun(5, 60, 3, 0.04, 0.03, rng);
  FakeRunner runner(5, 1.3, 14);
  const auto o = gate::RunGate(Inputs(base, 5), RunData{}, runner);
  EXPECT_EQ(o.Verdict(), "regression");
  EXPECT_EQ(gate::GateExit(o, true, false), 1);
  EXPECT_EQ(o.comparison.metrics.front().verdict, Verdict::kRegression) << o.comparison.metrics.front().reason;
}

TEST(Gate, ARegressionIsConfirmedByFreshProcessesOfItsWorkloadOnly) {
  std::mt19937_64 rng(13);
  const RunData base = MakeRun(5, 60, 3, 0.04, 0.03, rng);
  FakeRunner runner(5, 1.3, 14);
  const gate::GateInputs in = Inputs(base, 5);
  ASSERT_GT(in.plan.confirm, 0);
  EXPECT_EQ(in.plan.confirm, std::max(in.plan.first, GatePlan::kMinConfirm));
  std::vector<std::string> lines;
  const auto o = gate::RunGate(in, RunData{}, runner, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(o.Verdict(), "regression");
  EXPECT_EQ(o.confirmed, 1u);
  EXPECT_EQ(o.unconfirmed, 0u);
  EXPECT_EQ(o.confirm_processes, in.plan.confirm);
  ASSERT_EQ(runner.calls.size(), 2u);
  EXPECT_EQ(runner.calls[1], std::vector<std::string>{in.variants.front()});
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("confirming with"), std::string::npos) << lines.back();
  EXPECT_NE(o.comparison.metrics.front().reason.find("confirmed by"), std::string::npos)
      << o.comparison.metrics.front().reason;
}

TEST(Gate, ASlowMomentTheConfirmationDoesNotShowIsInconclusive) {
  std::mt19937_64 rng(13);
  const RunData base = MakeRun(5, 60, 3, 0.04, 0.03, rng);
  FakeRunner runner(5, 1.3, 14);  // the first round 30% slower on metric 0 ...
  runner.later_scale = 0.9;       // ... the confirmation faster: never worse, whatever the seed
  const auto o = gate::RunGate(Inputs(base, 5), RunData{}, runner);
  EXPECT_EQ(o.Verdict(), "inconclusive");
  EXPECT_EQ(o.comparison.verdict, Overall::kInconclusive);
  EXPECT_EQ(o.unconfirmed, 1u);
  EXPECT_EQ(gate::GateExit(o, false, false), 3);
  EXPECT_EQ(gate::GateExit(o, true, false), 0);
  const auto& m = o.comparison.metrics.front();
  EXPECT_EQ(m.verdict, Verdict::kInconclusive);
  EXPECT_NE(m.reason.find("did not show again"), std::string::npos) << m.reason;
}

TEST(Gate, AConfirmationSureOfASmallChangeWithinTheMarginDoesNotShowIt) {
  std::mt19937_64 rng(21);
  const RunData base = MakeRun(5, 60, 3, 0.01, 0.01, rng);
  FakeRunner runner(5, 1.3, 22, 0, 0.01, 0.01);
  runner.later_scale = 1.02;  // worse, surely, but 2% under a 5% limit
  gate::GateInputs in = Inputs(base, 5);
  in.plan.confirm = 10;
  const auto o = gate::RunGate(in, RunData{}, runner);
  EXPECT_EQ(o.unconfirmed, 1u);
  EXPECT_EQ(o.Verdict(), "inconclusive");
  const auto& m = o.comparison.metrics.front();
  EXPECT_NE(m.reason.find("then step_time +"), std::string::npos) << m.reason;
  EXPECT_NE(m.reason.find("within ±5%"), std::string::npos) << m.reason;  // the confirmation: unchanged
}

TEST(Gate, ConfirmZeroFailsAtOnce) {
  std::mt19937_64 rng(13);
  const RunData base = MakeRun(5, 60, 3, 0.04, 0.03, rng);
  FakeRunner runner(5, 1.3, 14);
  runner.later_scale = 1.0;
  PlanLimits none;
  none.confirm = 0;
  gate::GateInputs in = Inputs(base, 5);
  in.plan = PlanGate(base, 3, Policy::Default(), none);
  EXPECT_NE(in.plan.Describe().find("no confirmation round"), std::string::npos) << in.plan.Describe();
  const auto o = gate::RunGate(in, RunData{}, runner);
  EXPECT_EQ(o.Verdict(), "regression");
  EXPECT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(o.confirm_processes, 0);
}

TEST(Gate, ConfirmationJudgesOnlyItsOwnProcesses) {
  ResultRecord r = Metric(0);
  r.samples = {1, 2, 3, 4, 5, 6};
  r.process = {0, 0, 1, 1, 2, 2};
  const auto out = gate::ProcessesFrom({r}, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].samples, (std::vector<double>{3, 4, 5, 6}));
  EXPECT_EQ(out[0].process, (std::vector<int>{1, 1, 2, 2}));
  EXPECT_TRUE(gate::ProcessesFrom({r}, 3).front().samples.empty());
}

TEST(Gate, ASecondRoundRunsOnlyTheUndecidedWorkloads) {
  std::mt19937_64 rng(15);
  // Metric 0's processes spread by 30%: its mde stays far above 10%; the
  // others' spread by 0.5% resolve in the first round.
  const RunData base = MakeRun(4, 60, 3, 0.005, 0.005, rng, 1, 0, 0, 0.3);
  FakeRunner runner(4, 1.0, 16, 0.3, 0.005, 0.005);
  gate::GateInputs in = Inputs(base, 4);
  in.plan.first = 3;  // with 2 (1 degree of freedom) nothing resolves
  in.plan.max_processes = 5;
  in.plan.extra_rounds = 1;
  std::vector<std::string> lines;
  const auto o = gate::RunGate(in, RunData{}, runner, [&](const std::string& l) { lines.push_back(l); });
  ASSERT_EQ(o.rounds, 2);
  ASSERT_EQ(runner.calls.size(), 2u);
  EXPECT_EQ(runner.calls[1], std::vector<std::string>{in.variants.front()});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines.front().find("round 2: 1 variant(s) inconclusive, +2 processes"), std::string::npos) << lines.front();
  EXPECT_EQ(o.processes, 5);
  EXPECT_EQ(o.comparison.verdict, Overall::kPass);  // nothing regressed; metric 0 unresolved
  EXPECT_EQ(o.comparison.Unresolved().size(), 1u);
}

TEST(Gate, RequireMdeTurnsAnUnresolvedPassIntoThree) {
  std::mt19937_64 rng(17);
  const RunData base = MakeRun(3, 60, 3, 0.04, 0.03, rng);
  FakeRunner runner(3, 1.0, 18);
  gate::GateInputs in = Inputs(base, 3);
  for (auto& [glob, t] : in.plan.policy.defaults) t.mde = 0.051;  // unreachable
  const auto o = gate::RunGate(in, RunData{}, runner);
  ASSERT_EQ(o.comparison.verdict, Overall::kPass);
  EXPECT_FALSE(o.comparison.Unresolved().empty());
  EXPECT_EQ(gate::GateExit(o, false, false), 0);
  EXPECT_EQ(gate::GateExit(o, false, true), 3);
  EXPECT_NE(UnresolvedNote(o.comparison).find("pass, but cannot resolve"), std::string::npos);
}

TEST(Compare, OneProcessOnASideIsInconclusiveWithoutAFloor) {
  std::mt19937_64 rng(19);
  const RunData a = MakeRun(2, 1, 7, 0.04, 0.01, rng);
  const RunData b = MakeRun(2, 1, 7, 0.04, 0.01, rng, 1.3, 2);  // 30% slower
  const Comparison c = Compare(a, b, Policy::Default(), false);
  for (const auto& m : c.metrics) {
    EXPECT_EQ(m.verdict, Verdict::kInconclusive) << m.reason;
    EXPECT_NE(m.reason.find("one process on a side"), std::string::npos) << m.reason;
    EXPECT_NE(m.reason.find("--processes 3"), std::string::npos) << m.reason;
    EXPECT_FALSE(m.has_mde);
  }
  // With a noise floor from 5 earlier runs the within-process test decides.
  History h;
  for (const auto& r : a.results) h.series[ResultKey(r)] = {{1.0, 1.01, 0.99, 1.0, 1.02, 0.98}};
  const Comparison floored = Compare(a, b, Policy::Default(), false, h);
  for (const auto& m : floored.metrics) EXPECT_EQ(m.verdict, Verdict::kRegression) << m.reason;
}

// --- the rolling window over a store ------------------------------------------

class Window : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("perfbench_window_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    fs::remove(path_);
    store_ = Store::Open(path_.string(), Store::Mode::kCreate);
  }
  void TearDown() override {
    store_.reset();
    fs::remove(path_);
    fs::remove(path_.string() + "-wal");
    fs::remove(path_.string() + "-shm");
  }
  int64_t AddRun(const std::string& label, double step, double control = 1.0) {
    RunRecord r;
    r.label = label;
    r.profile_key = "p";
    r.fingerprint = {{"cpu_model", "Test"}};
    r.settings = {{"repetitions", 3}, {"quick", true}};
    r.status = RunStatus::kComplete;
    std::vector<ResultRecord> results;
    ResultRecord m = Metric(0);
    ResultRecord c;
    c.suite = "control";
    c.workload = "gemm";
    c.metric = "flops";
    c.unit = "flop/s";
    c.higher_is_better = true;
    for (int p = 0; p < 3; ++p)
      for (int k = 0; k < 3; ++k) {
        m.samples.push_back(step * (1 + 0.01 * ((p * 3 + k + runs_) % 5 - 2)));
        m.process.push_back(p);
        c.samples.push_back(control * (1 + 0.002 * ((k + runs_) % 3)));
        c.process.push_back(p);
      }
    ++runs_;
    return store_->InsertRun(r, {m, c});
  }
  RunRecord Conditions() {
    RunRecord r;
    r.profile_key = "p";
    r.settings = {{"repetitions", 3}, {"quick", true}};
    return r;
  }
  fs::path path_;
  std::unique_ptr<Store> store_;
  int runs_ = 0;
};

TEST_F(Window, TakesTheLastRunsNoGateRejectedAndNotOthersLabels) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(AddRun("nightly", 1.0));
  AddRun("other", 1.0);
  store_->SetRunVerdict(ids[6], "regression");
  store_->SetRunVerdict(ids[5], "pass");
  store_->SetRunVerdict(ids[4], "inconclusive");
  store_->SetRunVerdict(ids[4], "accepted");
  const auto w = gate::SelectWindow(*store_, "nightly", 5, Conditions(), Policy::Default());
  EXPECT_EQ(w.data.run_ids, (std::vector<int64_t>{ids[7], ids[5], ids[4], ids[3], ids[2]}));
  EXPECT_EQ(w.considered, 8u);
  ASSERT_EQ(w.dropped.size(), 1u);
  EXPECT_NE(w.dropped.front().find("baseline accept"), std::string::npos);
  EXPECT_EQ(w.data.results.size(), 10u);  // 5 runs x (metric + control)
}

TEST_F(Window, LeavesOutARunWhoseControlMovedAndRunsBeforeAStep) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(AddRun("nightly", 1.0));
  for (int i = 0; i < 6; ++i) ids.push_back(AddRun("nightly", 1.3));  // a step: the code changed
  const int64_t moved = AddRun("nightly", 1.3, 0.7);                   // the machine was 30% slower
  const auto w = gate::SelectWindow(*store_, "nightly", 20, Conditions(), Policy::Default());
  EXPECT_EQ(w.data.run_ids.size(), 6u);
  for (int64_t id : w.data.run_ids) {
    EXPECT_NE(id, moved);
    EXPECT_GE(id, ids[6]);
  }
  std::string all;
  for (const auto& d : w.dropped) all += d + "\n";
  EXPECT_NE(all.find("control moved"), std::string::npos) << all;
  EXPECT_NE(all.find("change point"), std::string::npos) << all;
}

TEST_F(Window, TooFewRunsIsAWindowErrorThatSaysWhy) {
  for (int i = 0; i < 4; ++i) AddRun("nightly", 1.0);
  try {
    gate::SelectWindow(*store_, "nightly", 20, Conditions(), Policy::Default());
    FAIL() << "expected WindowError";
  } catch (const gate::WindowError& e) {
    EXPECT_NE(std::string(e.what()).find("4 usable run(s)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gate::SelectWindow(*store_, "nightly", 3, Conditions(), Policy::Default()), std::invalid_argument);
  EXPECT_EQ(gate::RollingLabel("label:nightly"), std::optional<std::string>("nightly"));
  EXPECT_EQ(gate::RollingLabel("nightly"), std::nullopt);
}

// One rule turns a verdict into an exit code (compare, ab, both gates), and
// one table holds the codes' meanings (main's help, each command's).
TEST(ExitCodes, OneRuleTurnsAVerdictIntoAnExitCode) {
  EXPECT_EQ(VerdictExit(false, false, 0, false, false), kExitOk);
  EXPECT_EQ(VerdictExit(true, false, 2, false, true), kExitRegression);  // a regression comes first
  EXPECT_EQ(VerdictExit(false, true, 1, false, false), kExitRuntime);    // then a failure
  EXPECT_EQ(VerdictExit(false, true, 0, false, false), kExitInconclusive);
  EXPECT_EQ(VerdictExit(false, true, 0, true, false), kExitOk);          // --allow-inconclusive
  EXPECT_EQ(VerdictExit(false, false, 0, true, true), kExitInconclusive);  // --require-mde
  ASSERT_EQ(ExitMeanings().size(), 6u);
  for (size_t i = 0; i < ExitMeanings().size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(ExitMeanings()[i].code), i);
    EXPECT_GT(std::string(MeaningOf(ExitMeanings()[i].code)).size(), 5u);
  }
}

}  // namespace
}  // namespace perfbench
