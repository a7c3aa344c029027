#include "gbench_engine.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace perfbench::micro {

void SampleReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    if (run.run_type != Run::RT_Iteration) continue;
    CaseResult& r = results_[run.run_name.function_name];
    if (run.error_occurred) {
      r.error = run.error_message.empty() ? "the case reported an error" : run.error_message;
      continue;
    }
    if (run.iterations <= 0) continue;
    r.iterations = run.iterations;
    auto calls = run.counters.find(kCallsCounter);
    const double per = calls != run.counters.end() && calls->second.value > 0 ? calls->second.value : 1;
    r.samples["time"].push_back(run.real_accumulated_time / static_cast<double>(run.iterations) / per);
    for (const auto& [name, counter] : run.counters)
      if (name != kCallsCounter) r.samples[name].push_back(counter.value);
  }
}

namespace {

// Google Benchmark reads its flags once, and takes their defaults from
// BENCHMARK_* environment variables: every flag that changes what reaches
// the reporter is set here, so the environment cannot (aggregates only, a
// listing instead of a run, perf counters as undeclared metrics).
void InitializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    static std::vector<std::string> flags = {
        "perfbench", "--benchmark_enable_random_interleaving=true", "--benchmark_report_aggregates_only=false",
        "--benchmark_display_aggregates_only=false", "--benchmark_list_tests=false", "--benchmark_perf_counters=",
        "--benchmark_out=", "--benchmark_filter=.", "--benchmark_counters_tabular=false"};
    std::vector<char*> argv;
    for (auto& f : flags) argv.push_back(f.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(flags.size());
    benchmark::Initialize(&argc, argv.data());
  });
}

// `body`, with an exception turned into the case's error.
std::function<void(benchmark::State&)> Guarded(std::function<void(benchmark::State&)> body) {
  return [body = std::move(body)](benchmark::State& state) {
    try {
      body(state);
    } catch (const std::exception& e) {
      std::string what = e.what();
      what.resize(std::min(what.find('\n'), what.size()));  // c10 errors carry a backtrace
      state.SkipWithError(what.c_str());
    } catch (...) {
      state.SkipWithError("unknown exception");
    }
  };
}

}  // namespace

std::map<std::string, CaseResult> RunCases(const std::vector<BenchCase>& cases, const EngineOptions& options) {
  if (options.repetitions < 1) throw std::invalid_argument("Google Benchmark needs at least 1 repetition");
  InitializeOnce();
  benchmark::ClearRegisteredBenchmarks();
  for (const BenchCase& c : cases) {
    auto* b = benchmark::RegisterBenchmark(c.name.c_str(), Guarded(c.body));
    b->Repetitions(options.repetitions)->MinTime(options.min_time_s)->MinWarmUpTime(options.min_warmup_time_s);
    if (c.manual_time) {
      b->UseManualTime();
    } else {
      b->UseRealTime();
    }
  }
  SampleReporter reporter;
  // An empty filter would fall back to --benchmark_filter; "." selects all.
  benchmark::RunSpecifiedBenchmarks(&reporter, std::string("."));
  benchmark::ClearRegisteredBenchmarks();
  return reporter.results();
}

}  // namespace perfbench::micro
