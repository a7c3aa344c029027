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
  EXPECT_EQ(doc["schema_version"], 2);
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
  d1["schema_version"] = 3;
  expect_error(d1, "schema_version");
  auto d0 = doc;
  d0["run"]["uuid"] = "not hex!";
  expect_error(d0, "run.uuid");
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

// A run of `k` processes around `center`, process p offset by offsets[p].
ResultRecord Processes(double center, const std::vector<double>& offsets) {
  ResultRecord r = Tput({});
  for (size_t p = 0; p < offsets.size(); ++p)
    for (double v : Around(center * (1 + offsets[p]))) {
      r.samples.push_back(v);
      r.process.push_back(static_cast<int>(p));
    }
  return r;
}

TEST(NoiseFloor, RustcPerfQ3PlusThreeIqrOfConsecutiveChanges) {
  size_t runs = 0;
  // Changes |x_i - x_{i-1}| / x_i: 0.01, 0.02, 0.03, 0.04 -> halves {0.01, 0.02}, {0.03, 0.04}:
  // Q1 0.015, Q3 0.035, floor 0.035 + 3 * 0.02 = 0.095.
  std::vector<double> x = {100};
  for (size_t i = 1; i < 5; ++i) x.push_back(x.back() * (1 + 0.01 * static_cast<double>(i)));
  // x_i = x_{i-1} (1 + c): |x_i - x_{i-1}| / x_i = c / (1 + c).
  const double expected_q1 = (0.01 / 1.01 + 0.02 / 1.02) / 2, expected_q3 = (0.03 / 1.03 + 0.04 / 1.04) / 2;
  EXPECT_NEAR(NoiseFloor({x}, &runs), expected_q3 + 3 * (expected_q3 - expected_q1), 1e-12);
  EXPECT_EQ(runs, 5u);
  EXPECT_EQ(NoiseFloor({{1, 2, 3, 4}}, &runs), 0.0);  // 4 runs: too few
  EXPECT_EQ(runs, 4u);
}

TEST(NoiseFloor, HistoryRaisesTheLimitAndTheReasonSaysSo) {
  RunData base, candidate;
  base.results = {Tput(Around(100))};
  candidate.results = {Tput(Around(94))};  // -6%
  const Policy policy = Policy::Default();  // 5% limit
  const auto plain = Compare(base, candidate, policy, false);
  ASSERT_EQ(plain.metrics.size(), 1u);
  // Tight within-run samples look "significant", but one process a side
  // cannot tell the code from the moment it ran in.
  EXPECT_EQ(plain.metrics[0].verdict, Verdict::kInconclusive);
  EXPECT_EQ(plain.metrics[0].history_runs, 0u);
  EXPECT_NE(plain.metrics[0].reason.find("one process on a side"), std::string::npos) << plain.metrics[0].reason;
  History h;
  h.series[ResultKey(base.results[0])] = {{100, 108, 101, 95, 103, 99}};  // runs 4-8% apart
  const auto floored = Compare(base, candidate, policy, false, h);
  const auto& m = floored.metrics[0];
  EXPECT_EQ(m.history_runs, 6u);
  EXPECT_GT(m.noise_floor, 0.06);
  EXPECT_NEAR(m.threshold, m.noise_floor, 1e-12);
  EXPECT_NE(m.verdict, Verdict::kRegression) << m.reason;
  EXPECT_NE(m.reason.find("(noise floor from 6 earlier runs; policy 5%)"), std::string::npos) << m.reason;
  RunData worse;  // a drop well beyond the floor is still a regression
  worse.results = {Tput(Around(70))};
  EXPECT_EQ(Compare(base, worse, policy, false, h).metrics[0].verdict, Verdict::kRegression);
}

TEST(RunMoment, EarlierRunsSpreadLessTheirProcessesShare) {
  History h;
  const std::string key = "k";
  // Logs of run medians 0, 0.1, -0.1, 0.2, -0.2: variance 0.025.
  h.series[key] = {{1.0, std::exp(0.1), std::exp(-0.1), std::exp(0.2), std::exp(-0.2)}};
  h.processes_per_run[key] = 3;
  size_t runs = 0;
  // Variance 0.025; MAD = median{0, .1, .1, .2, .2} = 0.1, so the fence at
  // 4 x 1.4826 x 0.1 = 0.59 keeps every run.
  const double robust = 0.025;
  EXPECT_NEAR(RunMomentVariance(h, key, 0.03, &runs), robust - 0.03 / 3, 1e-12);
  EXPECT_EQ(runs, 5u);
  h.series[key].front().push_back(std::exp(2.0));  // one wild run (a plain variance: 0.63) is fenced out
  EXPECT_NEAR(RunMomentVariance(h, key, 0.03, &runs), robust - 0.03 / 3, 1e-12);
  EXPECT_EQ(runs, 6u);
  h.series[key].front().pop_back();
  h.process_var[key] = 0.006;  // the history's own within-run spread wins over the candidate's
  EXPECT_NEAR(RunMomentVariance(h, key, 0.03, &runs), robust - 0.006 / 3, 1e-12);
  h.process_var.clear();
  EXPECT_EQ(RunMomentVariance(h, key, 0.3, &runs), 0.0);  // the processes explain it all
  h.series[key] = {{1.0, 1.1, 0.9, 1.2}};                  // 4 runs: too few
  EXPECT_EQ(RunMomentVariance(h, key, 0, &runs), 0.0);
  EXPECT_EQ(runs, 0u);
  EXPECT_EQ(RunMomentVariance(h, "other", 0, &runs), 0.0);
}

TEST(RunMoment, ARunsMomentIsNotTheCode) {
  // Tight processes, earlier runs 8% apart as wholes: a candidate 8% slower
  // in all its processes is what a run's moment does, not a regression; 40%
  // slower still is one.
  RunData base, cand, worse;
  base.results = {Processes(100, {0, 0.01, -0.01, 0.005, -0.005, 0.01})};
  cand.results = {Processes(92, {0, 0.01, -0.01, 0.005})};
  worse.results = {Processes(60, {0, 0.01, -0.01, 0.005})};
  const Policy policy = Policy::Default();
  const auto alone = Compare(base, cand, policy, false);
  ASSERT_EQ(alone.metrics[0].verdict, Verdict::kRegression) << alone.metrics[0].reason;
  History h;
  h.series[ResultKey(base.results[0])] = {{100, 92, 107, 99, 93, 108, 100, 94}};
  h.processes_per_run[ResultKey(base.results[0])] = 3;
  const auto c = Compare(base, cand, policy, false, h);
  const auto& m = c.metrics[0];
  EXPECT_GT(m.run_var, 0.002);
  EXPECT_EQ(m.run_var_runs, 8u);
  EXPECT_NE(m.verdict, Verdict::kRegression) << m.reason;
  EXPECT_NE(m.reason.find("a run's moment (sd"), std::string::npos) << m.reason;
  EXPECT_GT(m.se, alone.metrics[0].se);  // the detectable effect says so too
  EXPECT_EQ(Compare(base, worse, policy, false, h).metrics[0].verdict, Verdict::kRegression);
}

TEST(TwoLevel, ProcessesNotRepetitionsAreTheSamples) {
  // Tight repetitions inside each process, processes 4% apart: the
  // within-process test calls a 3% shift significant; the process level
  // does not (its limit is 5%, its interval crosses it or lies within).
  RunData base, cand;
  base.results = {Processes(100, {0, 0.04, -0.03, 0.02, -0.04})};
  cand.results = {Processes(97, {0.03, -0.04, 0.0})};
  const auto c = Compare(base, cand, Policy::Default(), false);
  ASSERT_EQ(c.metrics.size(), 1u);
  const auto& m = c.metrics[0];
  EXPECT_EQ(m.level, Level::kProcess);
  EXPECT_EQ(m.processes_baseline, 5u);
  EXPECT_EQ(m.processes_candidate, 3u);
  EXPECT_NE(m.verdict, Verdict::kRegression) << m.reason;
  EXPECT_NE(m.reason.find("5 vs 3 processes"), std::string::npos) << m.reason;
  // Same inputs, same verdict.
  const auto again = Compare(base, cand, Policy::Default(), false);
  EXPECT_EQ(again.metrics[0].ci_low, m.ci_low);
  EXPECT_EQ(again.metrics[0].reason, m.reason);
  // A 30% drop is a regression at the process level too.
  cand.results = {Processes(70, {0.01, -0.01, 0.02})};
  EXPECT_EQ(Compare(base, cand, Policy::Default(), false).metrics[0].verdict, Verdict::kRegression);
}

TEST(TwoLevel, OneProcessAgainstManyUsesTheManysSpread) {
  RunData base, cand;
  base.results = {Tput(Around(100))};                           // one process, tight repetitions
  cand.results = {Processes(93, {0.06, -0.05, 0.04, -0.06, 0.02})};  // -7%, processes 5% apart
  const auto c = Compare(base, cand, Policy::Default(), false);
  const auto& m = c.metrics[0];
  EXPECT_EQ(m.level, Level::kProcess);
  EXPECT_NE(m.verdict, Verdict::kRegression) << m.reason;  // within-process samples would call it one
  EXPECT_NE(m.reason.find("1 vs 5 processes"), std::string::npos) << m.reason;
  cand.results = {Processes(60, {0.01, -0.01, 0.02, 0.0, -0.02})};  // -40%
  // One process on a side: inconclusive without a noise floor, decided with one.
  EXPECT_EQ(Compare(base, cand, Policy::Default(), false).metrics[0].verdict, Verdict::kInconclusive);
  History h;
  h.series[ResultKey(base.results[0])] = {std::vector<double>(kMinHistoryRuns, 100.0)};
  EXPECT_EQ(Compare(base, cand, Policy::Default(), false, h).metrics[0].verdict, Verdict::kRegression);
}

TEST(TwoLevel, PooledRunsAreFurtherProcesses) {
  RunData base;
  base.results = {Tput(Around(100)), Tput(Around(102))};  // two runs of one process each
  RunData cand;
  cand.results = {Processes(100, {0.0, 0.01})};
  const auto c = Compare(base, cand, Policy::Default(), false);
  EXPECT_EQ(c.metrics[0].processes_baseline, 2u);
  EXPECT_EQ(c.metrics[0].level, Level::kProcess);
}

TEST(Paired, SignedRankOnPairLogRatios) {
  PairedData d;
  const std::vector<double> drift = {1.0, 1.08, 0.95, 1.12, 0.9, 1.05, 0.97, 1.1};  // 10% drift between pairs
  for (double f : drift) {
    d.a_pairs.push_back({Tput(Around(100 * f))});
    d.b_pairs.push_back({Tput(Around(100 * f * 1.001))});
    d.a.results.push_back(d.a_pairs.back()[0]);
    d.b.results.push_back(d.b_pairs.back()[0]);
  }
  auto c = ComparePaired(d, Policy::Default());
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(c.metrics[0].pairs, 8u);
  EXPECT_EQ(c.metrics[0].verdict, Verdict::kUnchanged) << c.metrics[0].reason;  // drift cancels
  for (auto* side : {&d.b_pairs}) {
    for (size_t i = 0; i < side->size(); ++i) (*side)[i] = {Tput(Around(100 * drift[i] * 0.8))};
  }
  c = ComparePaired(d, Policy::Default());
  EXPECT_EQ(c.metrics[0].verdict, Verdict::kRegression) << c.metrics[0].reason;
  EXPECT_NEAR(c.metrics[0].ratio, 0.8, 1e-3);
  EXPECT_NEAR(c.metrics[0].p_value, 2.0 / 256, 1e-12);  // all 8 pairs one way: exact p
}

// The run-to-run floor of A's history (here a machine whose runs wander by
// 10-20%) is what pairing cancels: it is reported, not raised into the
// limit, so a paired 10% slowdown with 1-2% pair noise is a regression.
TEST(Paired, TheRunToRunFloorIsReportedButDoesNotRaiseAPairedLimit) {
  PairedData d;
  const std::vector<double> drift = {1.0, 1.15, 0.88, 1.2, 0.85, 1.1, 0.95, 1.18, 0.9, 1.05};
  const std::vector<double> pair_noise = {0.01, -0.015, 0.005, 0.02, -0.01, 0.0, 0.012, -0.008, 0.018, -0.004};
  for (size_t i = 0; i < drift.size(); ++i) {
    d.a_pairs.push_back({Tput(Around(100 * drift[i]))});
    d.b_pairs.push_back({Tput(Around(100 * drift[i] * 0.9 * (1 + pair_noise[i])))});
    d.a.results.push_back(d.a_pairs.back()[0]);
    d.b.results.push_back(d.b_pairs.back()[0]);
  }
  History h;
  std::vector<double> medians;  // A's earlier runs, one after another
  for (double f : drift) medians.push_back(100 * f);
  h.series[ResultKey(d.a.results[0])] = {medians};
  const auto c = ComparePaired(d, Policy::Default(), h);
  ASSERT_EQ(c.metrics.size(), 1u);
  const auto& m = c.metrics[0];
  EXPECT_EQ(m.verdict, Verdict::kRegression) << m.reason;
  EXPECT_GT(m.noise_floor, 0.10) << "the unpaired floor is reported";
  EXPECT_EQ(m.history_runs, drift.size());
  EXPECT_DOUBLE_EQ(m.threshold, m.policy_threshold) << "and does not raise the paired limit";
  EXPECT_NE(m.reason.find("does not raise it"), std::string::npos) << m.reason;
  // The unpaired comparison of the same runs is limited by that floor.
  const auto unpaired = Compare(d.a, d.b, Policy::Default(), false, h);
  EXPECT_GT(unpaired.metrics[0].threshold, unpaired.metrics[0].policy_threshold) << unpaired.metrics[0].reason;
}

}  // namespace
}  // namespace perfbench
