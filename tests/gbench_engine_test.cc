// The micro suite's engine without torch: Google Benchmark runs turned into
// perfbench samples, and the runner's engine path.
#include "gbench_engine.h"

#include <gtest/gtest.h>

#include <cmath>

#include "micro_workload.h"
#include "perfbench/backend.h"
#include "runner.h"

namespace perfbench::micro {
namespace {

using GbRun = benchmark::BenchmarkReporter::Run;

GbRun Repetition(const std::string& name, int64_t iterations, double seconds, double flops) {
  GbRun r;
  r.run_name.function_name = name;
  r.run_type = GbRun::RT_Iteration;
  r.iterations = iterations;
  r.real_accumulated_time = seconds;
  r.counters["flops"] = benchmark::Counter(flops);
  return r;
}

// A fixed Google Benchmark report: three repetitions, their aggregates, and
// an errored case.
TEST(SampleReporter, TurnsEachRepetitionIntoOneSamplePerMetric) {
  std::vector<GbRun> runs = {Repetition("gemm", 1000, 0.5, 2e9), Repetition("gemm", 1000, 0.25, 4e9),
                           Repetition("gemm", 500, 0.5, 1e9)};
  GbRun mean = Repetition("gemm", 1000, 0.4, 2.3e9);
  mean.run_type = GbRun::RT_Aggregate;
  mean.aggregate_name = "mean";
  runs.push_back(mean);
  GbRun bad;
  bad.run_name.function_name = "conv";
  bad.error_occurred = true;
  bad.error_message = "out of memory";
  runs.push_back(bad);
  SampleReporter reporter;
  reporter.ReportRuns(runs);
  const auto& r = reporter.results();
  ASSERT_EQ(r.size(), 2u);
  const CaseResult& gemm = r.at("gemm");
  EXPECT_TRUE(gemm.error.empty());
  EXPECT_EQ(gemm.samples.at("time"), (std::vector<double>{5e-4, 2.5e-4, 1e-3}));
  EXPECT_EQ(gemm.samples.at("flops"), (std::vector<double>{2e9, 4e9, 1e9}));
  EXPECT_EQ(gemm.iterations, 500);
  EXPECT_EQ(r.at("conv").error, "out of memory");
  EXPECT_TRUE(r.at("conv").samples.empty());
}

// Spins for about `ns` per iteration; reports `work` per iteration as a rate.
BenchCase Spin(const std::string& name, double work, int spins) {
  return {name, [=](benchmark::State& state) {
            volatile double x = 1;
            for (auto _ : state)
              for (int i = 0; i < spins; ++i) x = x * 1.0000001 + 1e-9;
            state.counters["flops"] = benchmark::Counter(work, benchmark::Counter::kIsIterationInvariantRate);
          }, false};
}

EngineOptions Fast(int repetitions) {
  EngineOptions o;
  o.repetitions = repetitions;
  o.min_time_s = 0.002;
  o.min_warmup_time_s = 0.001;
  return o;
}

TEST(RunCases, RunsEveryCaseWithItsRepetitionsAndConsistentRates) {
  const auto r = RunCases({Spin("short", 1000, 100), Spin("long", 1000, 1000)}, Fast(4));
  ASSERT_EQ(r.size(), 2u);
  for (const auto& [name, c] : r) {
    ASSERT_EQ(c.samples.at("time").size(), 4u) << name;
    ASSERT_EQ(c.samples.at("flops").size(), 4u) << name;
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_GT(c.samples.at("time")[i], 0);
      // A rate counter is work per second of the same time: rate x time = work.
      EXPECT_NEAR(c.samples.at("flops")[i] * c.samples.at("time")[i], 1000, 1e-6);
    }
  }
  // Ten times the spins take longer per iteration (an ordering, not seconds).
  EXPECT_GT(r.at("long").samples.at("time")[0], r.at("short").samples.at("time")[0]);
}

TEST(RunCases, AnErroredCaseCarriesItsMessage) {
  BenchCase bad{"bad", [](benchmark::State& state) {
                  state.SkipWithError("no such device");
                  for (auto _ : state) {
                  }
                }, false};
  const auto r = RunCases({bad, Spin("good", 1, 10)}, Fast(2));
  EXPECT_EQ(r.at("bad").error, "no such device");
  EXPECT_EQ(r.at("good").samples.at("time").size(), 2u);
}

// A micro workload through the real runner (WorkloadInfo::engine).
class SpinWorkload final : public MicroWorkload {
 public:
  Status SetUp(const RunContext& ctx) override {
    spins_ = std::stoi(ctx.params.Get("spins"));
    return Status::Ok();
  }
  std::vector<BenchCase> Cases() override { return {Spin("spin", 500, spins_)}; }

 private:
  int spins_ = 0;
};

RegisteredWorkload SpinRegistration(std::vector<MetricSpec> metrics) {
  WorkloadInfo info;
  info.suite = "micro-test";
  info.name = "spin";
  info.metrics = std::move(metrics);
  info.compare_param = "spins";
  info.engine = [](const RunSettings&, std::vector<EngineVariant>& v) { RunMicroGroup(Fast(3), v); };
  return {info, [] { return std::make_unique<SpinWorkload>(); }};
}

VariantGroup Group(const RegisteredWorkload& w) {
  Params a, b;
  a.Set("spins", "10");
  b.Set("spins", "100");
  return {&w, {a, b}};
}

TEST(EngineWorkload, TheRunnerStoresTheEnginesRepetitions) {
  const auto w = SpinRegistration({{"time", "s", Better::kLower}, {"flops", "FLOP/s", Better::kHigher}});
  Runner runner(RunSettings::Defaults(true), GetDeviceBackend());
  const auto out = runner.RunGroup(Group(w));
  ASSERT_EQ(out.size(), 2u);
  for (const auto& o : out) {
    EXPECT_EQ(o.status, ResultStatus::kOk) << o.reason;
    EXPECT_EQ(o.samples.at("time").size(), 3u);
    EXPECT_EQ(o.samples.at("flops").size(), 3u);
  }
  EXPECT_GT(runner.timed_s(), 0);
}

TEST(EngineWorkload, AnUndeclaredMetricFailsTheVariant) {
  const auto w = SpinRegistration({{"time", "s", Better::kLower}});
  Runner runner(RunSettings::Defaults(true), GetDeviceBackend());
  const auto out = runner.RunGroup(Group(w));
  for (const auto& o : out) {
    EXPECT_EQ(o.status, ResultStatus::kFailed);
    EXPECT_NE(o.reason.find("metric 'flops' is not declared"), std::string::npos) << o.reason;
  }
}

}  // namespace
}  // namespace perfbench::micro
