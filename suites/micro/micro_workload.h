// The micro suite's workload base and its engine (see WorkloadInfo::engine):
// every variant of a group becomes one or more Google Benchmark cases, run
// in one interleaved Google Benchmark run, and their repetitions become the
// variants' samples.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gbench_engine.h"
#include "perfbench/workload.h"

namespace perfbench::micro {

class MicroWorkload : public Workload {
 public:
  // The cases that measure this variant, built in SetUp; names unique
  // within the variant.
  virtual std::vector<BenchCase> Cases() = 0;
  // This variant's samples from its cases' results. Default: the one
  // case's samples, or its error.
  virtual Status Collect(const std::map<std::string, CaseResult>& by_case,
                         std::map<std::string, std::vector<double>>* samples);
  // Measured through Google Benchmark, never step by step.
  Status RunStep(StepRecorder&) final;
};

// How long Google Benchmark measures: repetitions from the run's settings,
// min time per repetition 0.02 s with --quick, 0.1 s otherwise.
EngineOptions OptionsFor(const RunSettings& settings);

// The engine of a MicroWorkload: one Google Benchmark run of every
// variant's cases with `options`.
void RunMicroGroup(const EngineOptions& options, std::vector<EngineVariant>& variants);
// WorkloadInfo::engine for the micro suite: RunMicroGroup with OptionsFor.
GroupEngine MicroEngine();

}  // namespace perfbench::micro
