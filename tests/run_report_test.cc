#include "report/run_report.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "report/format.h"

namespace perfbench {
namespace {

RunRecord SomeRun() {
  RunRecord r;
  r.id = 7;
  r.label = "nightly";
  r.started_at = "2026-12-02T18:00:00Z";
  r.finished_at = "2026-12-02T18:01:00Z";
  r.status = RunStatus::kComplete;
  r.hostname = "box";
  r.profile_key = "00ff00ff00ff00ff";
  r.fingerprint = {{"cpu_model", "CPU"}, {"cpu_cores", 2}};
  r.settings = {{"repetitions", 5}, {"quick", true}};
  return r;
}

ResultRecord Result() {
  ResultRecord r;
  r.suite = "amp";
  r.workload = "cnn";
  r.params = Params{{"size", "quick"}, {"precision", "fp16"}};  // declaration order kept
  r.metric = "step_time";
  r.unit = "s";
  r.samples = {0.1, 0.30000000000000004, 1.0 / 7.0};
  r.attributes = {{"batch_size", "16"}};
  return r;
}

TEST(RunReport, JsonRoundTripsExactly) {
  auto doc = RunToJson(SomeRun(), {Result()});
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_DOUBLE_EQ(doc["results"][0]["median"].get<double>(), 1.0 / 7.0);
  RunRecord run;
  std::vector<ResultRecord> results;
  RunFromJson(nlohmann::ordered_json::parse(doc.dump()), &run, &results);
  EXPECT_EQ(run.label, "nightly");
  EXPECT_EQ(run.fingerprint, SomeRun().fingerprint);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].samples, Result().samples);
  EXPECT_EQ(results[0].params.Encode(), "size:quick/precision:fp16");
  // And the document it produces again is identical, byte for byte, but for the id.
  auto again = RunToJson(run, results);
  again["run"]["id"] = 7;
  EXPECT_EQ(again.dump(), doc.dump());
}

TEST(RunReport, MalformedDocumentsNameTheirProblem) {
  auto doc = RunToJson(SomeRun(), {Result()});
  auto expect_error = [](nlohmann::ordered_json d, const std::string& needle) {
    RunRecord r;
    std::vector<ResultRecord> rs;
    try {
      RunFromJson(d, &r, &rs);
      ADD_FAILURE() << "accepted a bad document; wanted " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto d1 = doc;
  d1["schema_version"] = 2;
  expect_error(d1, "schema_version");
  auto d2 = doc;
  d2["results"][0]["samples"] = {1, "two"};
  expect_error(d2, "results[0].samples");
  auto d3 = doc;
  d3["results"][0].erase("metric");
  expect_error(d3, "results[0]: missing \"metric\"");
  auto d4 = doc;
  d4["results"][0]["status"] = "great";
  expect_error(d4, "results[0].status");
  auto d5 = doc;
  d5["run"]["status"] = "bogus";
  expect_error(d5, "run.status");
  expect_error(nlohmann::ordered_json::array(), "top level");
}

TEST(Format, UnitAwareValues) {
  EXPECT_EQ(FormatValue(0.00123, "s"), "1.23 ms");
  EXPECT_EQ(FormatValue(2.5e-6, "s"), "2.5 us");
  EXPECT_EQ(FormatValue(3 * 1024.0 * 1024.0, "bytes"), "3 MiB");
  EXPECT_EQ(FormatValue(13400, "samples/s"), "13.4k samples/s");
  EXPECT_EQ(FormatValue(1.58, "ratio"), "1.58x");
}

}  // namespace
}  // namespace perfbench

// Google Benchmark import, against real output (tests/fixtures/README.md).
#include <fstream>

#include "report/gbench_import.h"

namespace perfbench {
namespace {

nlohmann::ordered_json GbenchFixture() {
  std::ifstream in(std::string(PERFBENCH_FIXTURES) + "/gbench_stats_bench.json");
  return nlohmann::ordered_json::parse(in);
}

TEST(GbenchImport, EachBenchmarkIsAWorkloadAndRepetitionsAreSamples) {
  const auto doc = GbenchFixture();
  ASSERT_TRUE(IsGoogleBenchmarkJson(doc));
  RunRecord run;
  std::vector<ResultRecord> results;
  RunFromGoogleBenchmarkJson(doc, "gbench", &run, &results);
  // 3 benchmarks x (real_time, cpu_time, items_per_second); aggregates not read.
  ASSERT_EQ(results.size(), 9u);
  EXPECT_EQ(results[0].workload, "BM_MannWhitneyU/8");
  EXPECT_EQ(results[0].metric, "real_time");
  EXPECT_EQ(results[0].unit, "s");
  EXPECT_FALSE(results[0].higher_is_better);
  ASSERT_EQ(results[0].samples.size(), 3u);
  const auto& first = doc["benchmarks"][0];
  EXPECT_DOUBLE_EQ(results[0].samples[0], first["real_time"].get<double>() * 1e-9);
  EXPECT_EQ(results[2].metric, "items_per_second");
  EXPECT_TRUE(results[2].higher_is_better);
  EXPECT_DOUBLE_EQ(results[2].samples[0], first["items_per_second"].get<double>());
  EXPECT_EQ(results[6].workload, "BM_Compare/200");
  EXPECT_NEAR(results[6].samples[0], doc["benchmarks"][14]["real_time"].get<double>() * 1e-3, 1e-15);  // ms
  EXPECT_EQ(run.fingerprint["cpu_threads"], 2);
  EXPECT_EQ(run.status, RunStatus::kImported);
  EXPECT_EQ(run.started_at, "2026-12-02T19:45:50Z");
}

TEST(GbenchImport, ErrorsFailTheBenchmarkAndAggregatesOnlyIsRefused) {
  auto doc = GbenchFixture();
  doc["benchmarks"][0]["error_occurred"] = true;
  doc["benchmarks"][0]["error_message"] = "out of memory";
  RunRecord run;
  std::vector<ResultRecord> results;
  RunFromGoogleBenchmarkJson(doc, "gbench", &run, &results);
  EXPECT_EQ(results[0].status, ResultStatus::kFailed);
  EXPECT_EQ(results[0].reason, "out of memory");
  EXPECT_EQ(results[0].samples.size(), 2u);  // the other repetitions still count

  auto aggregates = GbenchFixture();
  nlohmann::ordered_json only = nlohmann::ordered_json::array();
  for (const auto& b : aggregates["benchmarks"])
    if (b["run_type"] == "aggregate") only.push_back(b);
  aggregates["benchmarks"] = only;
  EXPECT_THROW(RunFromGoogleBenchmarkJson(aggregates, "gbench", &run, &results), std::invalid_argument);

  auto bad = GbenchFixture();
  bad["benchmarks"][1]["real_time"] = "fast";
  try {
    RunFromGoogleBenchmarkJson(bad, "gbench", &run, &results);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "benchmarks[1].real_time: expected a number");
  }
  bad = GbenchFixture();
  bad["benchmarks"][1]["time_unit"] = "fortnights";
  EXPECT_THROW(RunFromGoogleBenchmarkJson(bad, "gbench", &run, &results), std::invalid_argument);
}

}  // namespace
}  // namespace perfbench

// The run-to-run noise floor of a pooled baseline.
#include "compare/compare.h"

namespace perfbench {
namespace {

ResultRecord Tput(std::vector<double> samples) {
  ResultRecord r;
  r.suite = "s";
  r.workload = "w";
  r.metric = "throughput";
  r.unit = "samples/s";
  r.higher_is_better = true;
  r.samples = std::move(samples);
  return r;
}

std::vector<double> Around(double center) {
  std::vector<double> v;
  for (int i = 0; i < 10; ++i) v.push_back(center * (1 + 0.002 * (i - 4.5)));  // +-0.9%, tight
  return v;
}

TEST(NoiseFloor, APooledBaselineRaisesTheLimitToItsRunToRunSpread) {
  RunData one, pooled, candidate;
  one.results = {Tput(Around(100))};
  pooled.results = {Tput(Around(100)), Tput(Around(108)), Tput(Around(101))};  // runs 8% apart
  candidate.results = {Tput(Around(94))};                                    // -6% to -9%
  const Policy policy = Policy::Default();                                   // 5% limit
  const auto single = Compare(one, candidate, policy, false);
  ASSERT_EQ(single.metrics.size(), 1u);
  EXPECT_EQ(single.metrics[0].verdict, Verdict::kRegression);  // tight within-run samples: "significant"
  EXPECT_EQ(single.metrics[0].baseline_runs, 1u);
  const auto floored = Compare(pooled, candidate, policy, false);
  const auto& m = floored.metrics[0];
  EXPECT_EQ(m.baseline_runs, 3u);
  EXPECT_NEAR(m.noise_floor, 8.0 / m.baseline_median, 1e-9);
  EXPECT_NEAR(m.threshold, m.noise_floor, 1e-12);
  EXPECT_NE(m.verdict, Verdict::kRegression) << m.reason;
  EXPECT_NE(m.reason.find("run-to-run noise of 3 baseline runs"), std::string::npos) << m.reason;
  // A drop well beyond the floor is still a regression.
  RunData worse;
  worse.results = {Tput(Around(80))};
  EXPECT_EQ(Compare(pooled, worse, policy, false).metrics[0].verdict, Verdict::kRegression);
}

}  // namespace
}  // namespace perfbench
