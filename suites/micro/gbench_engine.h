// Google Benchmark as a measurement engine for perfbench (torch-free).
//
// The micro suite's kernels are Google Benchmark cases: the library decides
// how many iterations make one repetition long enough to time (the first
// repetition grows the count until it lasts min_time, later ones reuse it),
// runs the repetitions, and interleaves the repetitions of every case of a
// group in random order (--benchmark_enable_random_interleaving). A
// BenchmarkReporter of our own turns each repetition into one perfbench
// sample per metric:
//   time       seconds per iteration: the repetition's real time (or the
//              manual time a GPU case set from CUDA events) / iterations
//   counters   each user counter under its own name (flops, bandwidth),
//              after Google Benchmark has applied its flags (a rate counter
//              is already per second of that same time)
//   kCallsCounter  a case that times several calls per iteration (on a GPU,
//              to dwarf the launch cost) says how many: `time` is divided by
//              it, and it is not stored
// Aggregate rows (mean, median, stddev, cv) are not read: perfbench computes
// its own. An errored case (SkipWithError) becomes that case's error.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace perfbench::micro {

// See above: calls of the kernel per Google Benchmark iteration.
inline constexpr const char* kCallsCounter = "calls_per_iteration";

// One Google Benchmark case. An exception from `body` becomes the case's
// error (SkipWithError), not the group's.
struct BenchCase {
  std::string name;                              // unique within one RunCases call
  std::function<void(benchmark::State&)> body;   // the usual `for (auto _ : state)` loop
  bool manual_time = false;                      // body calls state.SetIterationTime (CUDA events)
};

// What one case measured: one value per repetition and metric, or an error.
struct CaseResult {
  std::map<std::string, std::vector<double>> samples;
  std::string error;
  int64_t iterations = 0;  // per repetition (the last one reported)
};

struct EngineOptions {
  int repetitions = 5;
  double min_time_s = 0.05;         // per repetition
  double min_warmup_time_s = 0.02;  // per case, before its first repetition
};

// Converts Google Benchmark runs into CaseResults keyed by case name.
class SampleReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override;
  const std::map<std::string, CaseResult>& results() const { return results_; }

 private:
  std::map<std::string, CaseResult> results_;
};

// Registers `cases`, runs them (repetitions interleaved at random), clears
// the registry and returns what each measured. Not reentrant.
std::map<std::string, CaseResult> RunCases(const std::vector<BenchCase>& cases, const EngineOptions& options);

}  // namespace perfbench::micro
