// The harness's own time as stored results (run_cost.h).
#include "run_cost.h"

#include <gtest/gtest.h>

#include "compare/policy.h"

namespace perfbench {
namespace {

TEST(RunCost, PhaseRecordsOfTwoProcessesSumBackPerSuiteAndInAll) {
  PhaseTimes amp{1, 2, 3, 0.5, 6.5}, micro{0.1, 0, 1, 0, 1.1};
  auto rows = PhaseRecords({{"amp", amp}, {"micro", micro}}, 0);
  for (auto& r : PhaseRecords({{"amp", amp}}, 1)) rows.push_back(r);
  ASSERT_EQ(rows.size(), 5u * 3 + 5u * 2);  // five metrics: amp, micro, all; then amp, all
  for (const auto& r : rows) {
    EXPECT_EQ(r.suite, kHarnessSuite);
    EXPECT_TRUE(AroundRun(r.suite));
    EXPECT_EQ(r.workload, "time");
    EXPECT_EQ(r.unit, "s");
    EXPECT_FALSE(r.higher_is_better);
    ASSERT_EQ(r.samples.size(), 1u);
  }
  const auto totals = PhaseTotals(rows);
  EXPECT_DOUBLE_EQ(totals.at("amp").timed_s, 6);
  EXPECT_DOUBLE_EQ(totals.at("micro").wall_s, 1.1);
  EXPECT_DOUBLE_EQ(totals.at("all").setup_s, 2.1);
  EXPECT_DOUBLE_EQ(totals.at("all").wall_s, 6.5 * 2 + 1.1);
  EXPECT_TRUE(PhaseRecords({}, 0).empty());
}

TEST(RunCost, TheSummarySaysTheRunsTimeThenEachSuiteSlowestFirst) {
  const auto totals = PhaseTotals(PhaseRecords({{"amp", {1, 2, 3, 0, 6}}, {"quant", {5, 1, 4, 0, 10}}}, 0));
  const std::string text = PhaseSummary(totals, 20, 1);
  EXPECT_EQ(text.rfind("time: 20.0 s in 1 process: set-up 6.0 s, warm-up 3.0 s, timed 7.0 s, other 0.0 s, outside "
                       "the suites 4.0 s",
                       0),
            0u)
      << text;
  EXPECT_LT(text.find("\n  quant "), text.find("\n  amp ")) << text;
  EXPECT_TRUE(PhaseSummary({}, 20, 1).empty());
}

TEST(RunCost, TheDefaultPolicyReportsTheHarnesssTimeWithoutJudgingIt) {
  ResultRecord r;
  r.suite = kHarnessSuite;
  r.workload = "time";
  r.params = Params{{"suite", "all"}};
  r.metric = "wall_time";
  EXPECT_TRUE(Policy::Default().For(r).informational);
  r.suite = "amp";
  r.metric = "step_time";
  EXPECT_FALSE(Policy::Default().For(r).informational);
}

}  // namespace
}  // namespace perfbench
