#include "gbench_engine.h"

#include <mutex>
#include <stdexcept>

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
    r.samples["time"].push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
    for (const auto& [name, counter] : run.counters) r.samples[name].push_back(counter.value);
  }
}

namespace {

// Google Benchmark reads its flags once; interleaving is the one we set.
void InitializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    static char prog[] = "perfbench";
    static char interleave[] = "--benchmark_enable_random_interleaving=true";
    char* argv[] = {prog, interleave, nullptr};
    int argc = 2;
    benchmark::Initialize(&argc, argv);
  });
}

}  // namespace

std::map<std::string, CaseResult> RunCases(const std::vector<BenchCase>& cases, const EngineOptions& options) {
  if (options.repetitions < 1) throw std::invalid_argument("Google Benchmark needs at least 1 repetition");
  InitializeOnce();
  benchmark::ClearRegisteredBenchmarks();
  for (const BenchCase& c : cases) {
    auto* b = benchmark::RegisterBenchmark(c.name.c_str(), c.body);
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
