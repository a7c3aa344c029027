// Change points against Apache Otava 0.8.0 on generated series
// (tests/fixtures/changepoint_fixtures.json, made by
// make_changepoint_fixtures.py), the minimum segment that keeps a spike from
// becoming a step, and the series history builds from stored runs.
#include "changepoint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "history.h"

namespace perfbench {
namespace {

nlohmann::json Fixtures() {
  std::ifstream in(std::string(PERFBENCH_FIXTURES) + "/changepoint_fixtures.json");
  return nlohmann::json::parse(in);
}

void ExpectSame(const std::vector<ChangePoint>& got, const nlohmann::json& want, const std::string& what,
                bool values) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].index, want[i]["index"].get<size_t>()) << what;
    if (!values) continue;
    EXPECT_NEAR(got[i].mean_before, want[i]["mean_before"].get<double>(), 1e-9) << what;
    EXPECT_NEAR(got[i].mean_after, want[i]["mean_after"].get<double>(), 1e-9) << what;
    EXPECT_NEAR(got[i].change * 100, want[i]["forward_change_percent"].get<double>(), 1e-9) << what;
    const double p = want[i]["pvalue"].get<double>();
    EXPECT_NEAR(got[i].p_value, p, 1e-6 * p) << what;
  }
}

ChangePointOptions Otava(const nlohmann::json& params) {
  ChangePointOptions o;
  o.window = params["window_len"].get<size_t>();
  o.max_pvalue = params["max_pvalue"].get<double>();
  o.min_magnitude = params["min_magnitude"].get<double>();
  o.min_segment = 1;  // Otava has none
  return o;
}

TEST(ChangePoints, MatchApacheOtavaOnGeneratedSeries) {
  const auto doc = Fixtures();
  ASSERT_EQ(doc["package"], "apache-otava");
  size_t checked = 0;
  for (const auto& [name, s] : doc["series"].items()) {
    const auto x = s["values"].get<std::vector<double>>();
    ExpectSame(FindChangePoints(x, Otava(s["result"]["params"])), s["result"]["change_points"], name, true);
    for (const auto& [variant, v] : s["variants"].items()) {
      // Otava 0.8's merge leaves the left neighbour's statistics stale when it
      // drops a point (see changepoint.h); where it dropped one, compare indices.
      const bool merged = v["weak_change_points"].size() != v["change_points"].size();
      ExpectSame(FindChangePoints(x, Otava(v["params"])), v["change_points"], name + "/" + variant, !merged);
      ++checked;
    }
  }
  EXPECT_GE(checked, 16u);
}

TEST(ChangePoints, TheDefaultsFindTheStepAndNeitherTheSpikeNorNoise) {
  const auto doc = Fixtures();
  const auto step = FindChangePoints(doc["series"]["step"]["values"].get<std::vector<double>>());
  ASSERT_EQ(step.size(), 1u);
  EXPECT_EQ(step[0].index, 6u);  // run 7 of 12
  EXPECT_NEAR(step[0].change, 0.1009, 1e-3);
  EXPECT_LT(step[0].p_value, 1e-9);
  EXPECT_TRUE(FindChangePoints(doc["series"]["flat"]["values"].get<std::vector<double>>()).empty());
  // A loose threshold and a small window make Otava report a spike as two
  // steps around one point; two points per segment at least rule it out.
  const auto spike = doc["series"]["spike"]["values"].get<std::vector<double>>();
  ChangePointOptions loose;
  loose.window = 6;
  loose.min_segment = 1;
  EXPECT_EQ(FindChangePoints(spike, loose).size(), 2u);
  loose.min_segment = 2;
  EXPECT_TRUE(FindChangePoints(spike, loose).empty());
  EXPECT_TRUE(FindChangePoints({}).empty());
  EXPECT_TRUE(FindChangePoints({1.0}).empty());
}

TEST(ChangePoints, PooledTTestMatchesScipy) {
  // scipy.stats.ttest_ind_from_stats(10, 1, 5, 12, 1.5, 6) (SciPy 1.16.3): p = 0.03184888787304935
  EXPECT_NEAR(PooledTTestP(10, 1, 5, 12, 1.5, 6), 0.03184888787304935, 1e-12);
  EXPECT_EQ(PooledTTestP(1, 0, 1, 2, 0, 1), 1.0);
  EXPECT_EQ(PooledTTestP(1, 0, 3, 2, 0, 3), 0.0);
  EXPECT_TRUE(std::isnan(PooledTTestP(1, 0, 3, 1, 0, 3)));
}

TEST(MedianIntervalTest, OrderStatisticsAtNinetyFivePercent) {
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  EXPECT_EQ(MedianInterval(v), (std::pair<double, double>{6, 15}));  // x(6), x(15) for n = 20
  EXPECT_EQ(MedianInterval({3, 1, 2, 5, 4, 7, 6}), (std::pair<double, double>{1, 7}));  // n = 7: the range
  EXPECT_EQ(MedianInterval({4}), (std::pair<double, double>{4, 4}));
}

TEST(History, SeriesPerResultOldestFirstWithChangePoints) {
  const auto doc = Fixtures();
  const auto values = doc["series"]["step"]["values"].get<std::vector<double>>();
  std::vector<std::pair<RunRecord, std::vector<ResultRecord>>> runs;
  for (size_t i = 0; i < values.size(); ++i) {
    RunRecord run;
    run.id = static_cast<int64_t>(i + 1);
    run.started_at = "2026-12-" + std::to_string(10 + i) + "T00:00:00Z";
    ResultRecord r;
    r.suite = "amp";
    r.workload = "mlp";
    r.params = Params{{"precision", "fp32"}};
    r.metric = "throughput";
    r.unit = "samples/s";
    r.higher_is_better = true;
    r.samples = {values[i] * 0.99, values[i], values[i] * 1.01};
    ResultRecord control = r;
    control.suite = "control";
    runs.push_back({run, {r, control}});
  }
  const auto series = BuildHistory(runs, {}, {});
  ASSERT_EQ(series.size(), 1u);  // the control is left out unless named
  ASSERT_EQ(series[0].points.size(), 12u);
  EXPECT_EQ(series[0].points[6].run_id, 7);
  ASSERT_EQ(series[0].change_points.size(), 1u);
  EXPECT_EQ(series[0].change_points[0].index, 6u);
  EXPECT_FALSE(series[0].Regressed(series[0].change_points[0]));  // throughput up: better
  const auto j = HistoryJson(series);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["series"][0]["change_points"][0]["run_id"], 7);
  EXPECT_EQ(j["series"][0]["points"][0]["ci_low"], values[0] * 0.99);
  EXPECT_NE(HistoryTable(series).find("better +10.1%"), std::string::npos) << HistoryTable(series);
  EXPECT_TRUE(BuildHistory(runs, {{}, "", "step_time"}, {}).empty());
  EXPECT_THROW(BuildHistory(runs, {{}, "(", ""}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace perfbench
