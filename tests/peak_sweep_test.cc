// The plan of `perfbench peak`'s sweep (suites/micro/peak_sweep.h,
// header-only, no torch): its shape lists and its time budget, on a fake
// clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "peak_sweep.h"

namespace perfbench::micro {
namespace {

using Strings = std::vector<std::string>;

TEST(PeakSweep, ShapeListsAscendInWorkWithNoShapeTwice) {
  for (bool cuda : {false, true}) {
    for (bool quick : {false, true}) {
      const auto shapes = PeakGemmShapes(cuda, quick);
      ASSERT_FALSE(shapes.empty());
      std::set<std::string> seen;
      for (size_t i = 0; i < shapes.size(); ++i) {
        EXPECT_TRUE(seen.insert(shapes[i].Text()).second) << shapes[i].Text() << " twice (cuda " << cuda << ")";
        if (i > 0) {
          EXPECT_LE(shapes[i - 1].Flop(), shapes[i].Flop()) << shapes[i].Text();
        }
      }
    }
  }
  // MAMF's m-sweep reaches (4096, 4096, 4096), the square list too: once.
  const auto gpu = PeakGemmShapes(true, false);
  EXPECT_EQ(std::count(gpu.begin(), gpu.end(), GemmShape{4096, 4096, 4096}), 1);
  EXPECT_EQ(gpu.size(), 16u);
  EXPECT_NE(std::find(gpu.begin(), gpu.end(), GemmShape{8192, 8192, 8192}), gpu.end());
  EXPECT_NE(std::find(gpu.begin(), gpu.end(), GemmShape{20480, 4096, 4096}), gpu.end());
  EXPECT_EQ(gpu.back(), (GemmShape{16384, 16384, 16384}));
  EXPECT_EQ(PeakGemmShapes(false, false).back(), (GemmShape{2048, 2048, 2048}));
}

TEST(PeakSweep, QuickIsSmallerAtTheTop) {
  for (bool cuda : {false, true}) {
    const auto full = PeakGemmShapes(cuda, false), quick = PeakGemmShapes(cuda, true);
    EXPECT_LT(quick.back().Flop(), full.back().Flop()) << "cuda " << cuda;
    EXPECT_LT(quick.size(), full.size()) << "cuda " << cuda;
    for (const auto& s : quick)  // a prefix of the same sweep, capped
      EXPECT_NE(std::find(full.begin(), full.end(), s), full.end()) << s.Text();
    EXPECT_LT(PeakBandwidthMiB(cuda, true).back(), PeakBandwidthMiB(cuda, false).back()) << "cuda " << cuda;
  }
  EXPECT_EQ(PeakGemmShapes(true, true).back(), (GemmShape{8192, 8192, 8192}));
  EXPECT_EQ(PeakGemmShapes(false, true).back(), (GemmShape{1024, 1024, 1024}));
}

TEST(PeakSweep, ProjectionsFollowGoogleBenchmarksTimes) {
  // Warm-up and the iteration search about a repetition each, then the
  // repetitions: at least min time, or one call when a call is longer.
  EXPECT_DOUBLE_EQ(MeasureSeconds(0, 5, 0.1), 0.7);
  EXPECT_DOUBLE_EQ(MeasureSeconds(0.001, 5, 0.1), 0.7);
  EXPECT_DOUBLE_EQ(MeasureSeconds(0.5, 3, 0.05), 2.5);
  // The next shape's call at the previous shape's rate; unknown first.
  EXPECT_DOUBLE_EQ(ProjectCall(8e9, 0, 0), 0);
  EXPECT_DOUBLE_EQ(ProjectCall(8e9, 1e9, 0.25), 2.0);
}

TEST(PeakSweep, ShapesStartWhileTheirProjectionFitsTheBudget) {
  double now = 1000;  // any origin: the budget counts from its creation
  SweepBudget budget({"a", "b", "c", "d"}, 10, [&] { return now; });
  ASSERT_FALSE(budget.Done());
  EXPECT_EQ(budget.Next(), "a");
  EXPECT_TRUE(budget.Fits(4));
  now += 4.5;  // a took longer than projected
  budget.Advance();
  EXPECT_EQ(budget.Index(), 1u);
  EXPECT_TRUE(budget.Fits(5.5));  // 4.5 + 5.5: exactly the budget
  now += 5;
  budget.Advance();
  EXPECT_DOUBLE_EQ(budget.Spent(), 9.5);
  EXPECT_FALSE(budget.Fits(1));  // 9.5 + 1 > 10: c and d are left out
  EXPECT_TRUE(budget.Done());
  EXPECT_EQ(budget.LeftOut(), (Strings{"c", "d"}));
  EXPECT_EQ(budget.Why(), "over budget: c projected 1 s with 0.5 s of 10 s left");
  EXPECT_EQ(budget.LeftOutText(), "c, d (over budget: c projected 1 s with 0.5 s of 10 s left)");
}

TEST(PeakSweep, AShapeItsOwnEstimateNoLongerFitsIsLeftOutAfterItsSetUp) {
  double now = 0;
  SweepBudget budget({"small", "large"}, 3, [&] { return now; });
  ASSERT_TRUE(budget.Fits(1));
  now += 1;
  budget.Advance();
  ASSERT_TRUE(budget.Fits(1.5));  // projected at small's rate
  now += 0.5;                     // large's set-up
  EXPECT_FALSE(budget.Fits(2));   // its own estimate: 1.5 + 2 > 3
  EXPECT_EQ(budget.LeftOut(), (Strings{"large"}));
}

TEST(PeakSweep, EveryShapeFitsAGenerousBudget) {
  double now = 0;
  SweepBudget budget({"a", "b"}, 100, [&] { return now; });
  while (!budget.Done()) {
    ASSERT_TRUE(budget.Fits(1));
    now += 1;
    budget.Advance();
  }
  EXPECT_TRUE(budget.LeftOut().empty());
  EXPECT_EQ(budget.LeftOutText(), "");
}

TEST(PeakSweep, NoShapeFitsABudgetBelowTheFirstProjection) {
  double now = 0;
  SweepBudget budget({"a", "b"}, 0.1, [&] { return now; });
  EXPECT_FALSE(budget.Fits(MeasureSeconds(0, 3, 0.05)));
  EXPECT_EQ(budget.LeftOut(), (Strings{"a", "b"}));
  EXPECT_EQ(budget.Why(), "over budget: a projected 0.25 s with 0.1 s of 0.1 s left");
}

TEST(PeakSweep, AFailureOrASlowCallEndsTheSweepWithItsReason) {
  double now = 0;
  SweepBudget budget({"a", "b", "c"}, 100, [&] { return now; });
  ASSERT_TRUE(budget.Fits(1));
  budget.Advance();
  budget.End("a failed");
  EXPECT_TRUE(budget.Done());
  EXPECT_EQ(budget.LeftOutText(), "b, c (a failed)");
  budget.End("again");  // the first reason stands
  EXPECT_EQ(budget.Why(), "a failed");
  // Ended after the last shape: nothing is left out.
  SweepBudget last({"a"}, 100, [&] { return now; });
  ASSERT_TRUE(last.Fits(1));
  last.Advance();
  last.End("a's call took 2 s, over 1 s");
  EXPECT_TRUE(last.LeftOut().empty());
  EXPECT_EQ(last.LeftOutText(), "");
}

// The whole sweep as peak_workloads.cc runs it, on a fake clock: each shape
// projected from the one before, its measurement advancing the clock by
// what Google Benchmark would take. It stops at the first shape that would
// overrun the budget and never overruns it by more than a misprojection.
TEST(PeakSweep, ASimulatedSweepStopsBeforeItsBudgetRunsOut) {
  const auto shapes = PeakGemmShapes(true, false);
  Strings labels;
  for (const auto& s : shapes) labels.push_back(s.Text());
  const double rate = 1e13;  // FLOP/s of every shape: calls from 0.2 ms to 0.88 s
  double now = 0;
  SweepBudget budget(labels, 8, [&] { return now; });
  double prev_work = 0, prev_call = 0;
  Strings measured;
  while (!budget.Done()) {
    const GemmShape& s = shapes[budget.Index()];
    if (!budget.Fits(MeasureSeconds(ProjectCall(s.Flop(), prev_work, prev_call), 5, 0.1))) break;
    now += 0.01 + MeasureSeconds(s.Flop() / rate, 5, 0.1);  // set-up and measurement
    measured.push_back(s.Text());
    budget.Advance();
    prev_work = s.Flop();
    prev_call = s.Flop() / rate;
  }
  // 0.71 s per shape while calls are under 0.1 s: 11 shapes fit in 8 s.
  ASSERT_EQ(measured.size(), 11u) << budget.LeftOutText();
  EXPECT_LE(budget.Spent(), 8.0);
  EXPECT_EQ(budget.LeftOut().size(), shapes.size() - measured.size());
  EXPECT_EQ(budget.LeftOut().front(), shapes[11].Text());
  EXPECT_EQ(budget.LeftOut().back(), "16384x16384x16384");
  EXPECT_EQ(budget.Why().rfind("over budget: " + shapes[11].Text() + " projected ", 0), 0u) << budget.Why();
}

}  // namespace
}  // namespace perfbench::micro
