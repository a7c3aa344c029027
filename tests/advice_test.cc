// perfbench advise's plan (baselines at their defaults, one trial per knob
// setting, threads), optional params through --param, and the ranking of
// its rows from constructed comparisons.
#include "advice.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace perfbench {
namespace {

class Nothing final : public Workload {
 public:
  Status SetUp(const RunContext&) override { return Status::Ok(); }
  Status RunStep(StepRecorder&) override { return Status::Ok(); }
};

// advtest/train: precision fp32|bf16|fp16 (fp16 skipped on the CPU), an
// optional param `accumulation`; advtest/infer: only threads.
WorkloadInfo TrainInfo() {
  WorkloadInfo i;
  i.suite = "advtest";
  i.name = "train";
  i.metrics = {{"step_time", "s", Better::kLower},
               {"throughput", "samples/s", Better::kHigher},
               {"peak_memory", "bytes", Better::kLower}};
  i.variants = Params::Product({{"precision", {"fp32", "bf16", "fp16"}}, {"size", {"full"}}});
  i.compare_param = "precision";
  i.reference_value = "fp32";
  i.skip_reason = [](const Params& p, const std::string& device) -> std::string {
    return p.Get("precision") == "fp16" && device == "cpu" ? "no fp16 here" : "";
  };
  i.knobs = {{"precision", {{"precision", "fp32"}}, {{{"precision", "bf16"}}, {{"precision", "fp16"}}}},
             {"accumulation", {{"accumulation", "1"}}, {{{"accumulation", "2"}}, {{"accumulation", "4"}}}}};
  return i;
}

WorkloadInfo InferInfo() {
  WorkloadInfo i;
  i.suite = "advtest";
  i.name = "infer";
  i.metrics = {{"step_time", "s", Better::kLower}};
  i.variants = {Params{{"size", "full"}}};
  return i;
}

WorkloadInfo GpuOnlyInfo() {
  WorkloadInfo i = InferInfo();
  i.suite = "advgpu";
  i.needs = {"cuda"};
  return i;
}

[[maybe_unused]] const bool registered =
    RegisterWorkload(TrainInfo(), [] { return std::make_unique<Nothing>(); }) &&
    RegisterWorkload(InferInfo(), [] { return std::make_unique<Nothing>(); }) &&
    RegisterWorkload(GpuOnlyInfo(), [] { return std::make_unique<Nothing>(); });

RunSettings Cpu(std::vector<ParamOverride> overrides = {}) {
  RunSettings s = RunSettings::Defaults(false);
  s.suites = {"advtest"};
  s.device = "cpu";
  s.overrides = std::move(overrides);
  return s;
}

const Trial* FindTrial(const AdvicePlan& p, const std::string& setting) {
  for (const auto& t : p.trials)
    if (t.setting == setting) return &t;
  return nullptr;
}

TEST(OptionalParams, ParamAddsThemAndTheDefaultLeavesTheNameAlone) {
  auto v = SelectVariants(Cpu({{"accumulation", {"1", "4"}}}));
  std::vector<std::string> names;
  for (const auto& x : v)
    if (x.workload->info.name == "train") names.push_back(x.FullName());
  ASSERT_EQ(names.size(), 6u);
  EXPECT_EQ(names[0], "advtest/train/precision:fp32/size:full");
  EXPECT_EQ(names[1], "advtest/train/precision:fp32/size:full/accumulation:4");
  // A workload without the optional param is untouched.
  for (const auto& x : v) {
    if (x.workload->info.name != "infer") continue;
    EXPECT_EQ(x.FullName(), "advtest/infer/size:full");
  }
  const WorkloadInfo info = TrainInfo();
  ASSERT_NE(info.OptionalDefault("accumulation"), nullptr);
  EXPECT_EQ(*info.OptionalDefault("accumulation"), "1");
  EXPECT_EQ(info.OptionalDefault("precision"), nullptr);  // declared: not optional
}

TEST(AdvicePlanTest, BaselinesAreTheSelectionAtItsDefaults) {
  const RunSettings s = Cpu({{"accumulation", {"2"}}});
  const AdvicePlan p = PlanAdvice(SelectVariants(s), s, 4);
  ASSERT_EQ(p.baselines.size(), 2u);  // three precisions at accumulation 2 -> one fp32 baseline
  EXPECT_EQ(p.baselines[0].FullName(), "advtest/infer/size:full");
  EXPECT_EQ(p.baselines[1].FullName(), "advtest/train/precision:fp32/size:full");
}

TEST(AdvicePlanTest, OneTrialPerSettingThenThreads) {
  const RunSettings s = Cpu();
  const AdvicePlan p = PlanAdvice(SelectVariants(s), s, 4);
  std::vector<std::string> settings;
  for (const auto& t : p.trials) settings.push_back(t.setting);
  EXPECT_EQ(settings, (std::vector<std::string>{"precision:bf16", "precision:fp16", "accumulation:2",
                                                "accumulation:4", "threads:1", "threads:2"}));
  const Trial* acc = FindTrial(p, "accumulation:4");
  ASSERT_NE(acc, nullptr);
  ASSERT_EQ(acc->variants.size(), 1u);
  EXPECT_EQ(acc->variants[0].candidate.FullName(), "advtest/train/precision:fp32/size:full/accumulation:4");
  ASSERT_EQ(acc->overrides.size(), 1u);
  EXPECT_EQ(acc->overrides[0].param, "accumulation");
  // A candidate that cannot run here is planned as skipped, with the reason.
  const Trial* fp16 = FindTrial(p, "precision:fp16");
  ASSERT_NE(fp16, nullptr);
  EXPECT_EQ(fp16->variants[0].skip, "no fp16 here");
  EXPECT_EQ(fp16->Runnable(), 0u);
  // Threads apply to every baseline, at 1 and half the default (4 is the baseline's).
  const Trial* one = FindTrial(p, "threads:1");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->threads, 1);
  EXPECT_EQ(one->variants.size(), 2u);
  EXPECT_EQ(one->variants[0].candidate.FullName(), one->variants[0].baseline.FullName());
}

TEST(AdvicePlanTest, ExplicitThreadsAndKnobSubset) {
  RunSettings s = Cpu();
  s.threads = 1;
  const AdvicePlan p = PlanAdvice(SelectVariants(s), s, 4, {"threads"});
  std::vector<std::string> settings;
  for (const auto& t : p.trials) settings.push_back(t.setting);
  EXPECT_EQ(settings, (std::vector<std::string>{"threads:2", "threads:4"}));
  EXPECT_THROW(PlanAdvice(SelectVariants(s), s, 4, {"channels"}), std::invalid_argument);
}

TEST(AdvicePlanTest, KnobDefaultsForEveryProcessAndSkippedBaselines) {
  const RunSettings s = Cpu();
  const AdvicePlan p = PlanAdvice(SelectVariants(s), s, 4);
  const auto d = DefaultOverrides(p);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (ParamOverride{"precision", {"fp32"}}));
  EXPECT_EQ(d[1], (ParamOverride{"accumulation", {"1"}}));
  RunSettings gpu = Cpu();
  gpu.suites = {"advgpu"};
  const AdvicePlan g = PlanAdvice(SelectVariants(gpu), gpu, 4);
  EXPECT_TRUE(g.baselines.empty());
  ASSERT_EQ(g.skipped.size(), 1u);
  const auto rows = SkippedBaselineRows(g);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].variant, "advgpu/infer/size:full");
  EXPECT_EQ(rows[0].verdict, Verdict::kSkipped);
  EXPECT_EQ(rows[0].note, "baseline skipped here: needs cuda; running on cpu");
}

TEST(AdvicePlanTest, PrimaryAndMemoryMetrics) {
  EXPECT_EQ(PrimaryMetric(TrainInfo()), "throughput");
  EXPECT_EQ(MemoryMetric(TrainInfo()), "peak_memory");
  EXPECT_EQ(PrimaryMetric(InferInfo()), "step_time");
  EXPECT_EQ(MemoryMetric(InferInfo()), "");
}

// A verdict on `metric` of `variant` with ratio r and interval [lo, hi].
MetricVerdict Verdicted(const VariantRef& variant, const std::string& metric, bool higher, double r, double lo,
                        double hi, Verdict v) {
  MetricVerdict m;
  m.suite = variant.workload->info.suite;
  m.workload = variant.workload->info.name;
  m.params = variant.params;
  m.metric = metric;
  m.higher_is_better = higher;
  m.ratio = r;
  m.ci_low = lo;
  m.ci_high = hi;
  m.tested = true;
  m.pairs = 8;
  m.verdict = v;
  return m;
}

TEST(AdviceRanking, ByOrientedGainWithUnmeasuredRowsLast) {
  const RunSettings s = Cpu();
  const AdvicePlan p = PlanAdvice(SelectVariants(s), s, 4);
  const Trial& bf16 = *FindTrial(p, "precision:bf16");
  const Trial& fp16 = *FindTrial(p, "precision:fp16");
  const Trial& one = *FindTrial(p, "threads:1");
  const VariantRef train = p.baselines[1], infer = p.baselines[0];
  Comparison c1, c2;
  c1.metrics = {Verdicted(train, "throughput", true, 1.8, 1.6, 2.0, Verdict::kImprovement),
                Verdicted(train, "peak_memory", false, 0.6, 0.55, 0.65, Verdict::kImprovement)};
  // step_time is lower-is-better: 0.5 is a gain of 2, the best row.
  c2.metrics = {Verdicted(train, "throughput", true, 0.9, 0.85, 0.95, Verdict::kRegression),
                Verdicted(infer, "step_time", false, 0.5, 0.45, 0.55, Verdict::kImprovement)};
  std::vector<AdviceRow> rows = AdviceRows(fp16, Comparison{});
  for (auto& r : AdviceRows(bf16, c1)) rows.push_back(r);
  for (auto& r : AdviceRows(one, c2)) rows.push_back(r);
  RankAdvice(rows);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].variant, "advtest/infer/size:full");
  EXPECT_DOUBLE_EQ(rows[0].gain, 2.0);
  EXPECT_EQ(rows[1].setting, "precision:bf16");
  EXPECT_DOUBLE_EQ(rows[1].memory_ratio, 0.6);
  EXPECT_EQ(rows[2].setting, "threads:1");
  EXPECT_EQ(rows[3].setting, "precision:fp16");  // skipped here: not measured, last
  EXPECT_EQ(rows[3].verdict, Verdict::kSkipped);
  EXPECT_EQ(rows[3].note, "skipped here: no fp16 here");

  const nlohmann::json j = AdviceJson(rows, 8);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["rows"][0]["rank"], 1);
  EXPECT_EQ(j["rows"][1]["memory"]["metric"], "peak_memory");
  EXPECT_EQ(j["rows"][3]["rank"], 0);
  EXPECT_TRUE(j["rows"][3]["ratio"].is_null());
  const std::string text = AdviceText(rows, 8, false);
  EXPECT_NE(text.find("Best here: threads:1 on advtest/infer/size:full"), std::string::npos);
  EXPECT_NE(text.find("throughput +80.0% [+60.0%, +100.0%]"), std::string::npos);
}

TEST(AdviceRanking, AMetricNotTestedIsNotRanked) {
  const RunSettings s = Cpu();
  const AdvicePlan p = PlanAdvice(SelectVariants(s), s, 4);
  const Trial& bf16 = *FindTrial(p, "precision:bf16");
  MetricVerdict failed = Verdicted(p.baselines[1], "throughput", true, 0, 0, 0, Verdict::kRegression);
  failed.tested = false;
  failed.reason = "failed in the candidate: loss parity";
  Comparison c;
  c.metrics = {failed};
  const auto rows = AdviceRows(bf16, c);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].Measured());
  EXPECT_EQ(rows[0].verdict, Verdict::kRegression);
  EXPECT_EQ(rows[0].note, "failed in the candidate: loss parity");
  EXPECT_NE(AdviceText(rows, 8, true).find("No setting measured better"), std::string::npos);
}

}  // namespace
}  // namespace perfbench
