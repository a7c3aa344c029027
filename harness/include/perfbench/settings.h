// RunSettings: everything that says how a run measures and what it selects.
// This is the one home of every run setting: its default (documented here,
// once), its validation, and its JSON form (stored with every run, read back by
// `gate`, handed whole to the ddp suite's rank workers).
//
// None of these settings changes what a workload *is* (that is WorkloadInfo);
// they change how long, how often and where it is measured.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "perfbench/launch.h"

namespace perfbench {

// Replaces the values of a param in every variant that has it, in order
// (--param bytes=1048576,67108864; --world-sizes 1,2,4), dropping duplicates.
struct ParamOverride {
  std::string param;
  std::vector<std::string> values;
  bool operator==(const ParamOverride&) const = default;
};

struct RunSettings {
  // Defaults. Full runs take enough samples for google/benchmark's U-test
  // advice (>= 9); --quick keeps CI short but still gives >= 5 samples.
  static constexpr int kWarmupSteps = 3, kQuickWarmupSteps = 2;
  static constexpr int kRepetitions = 15, kQuickRepetitions = 7;
  static constexpr double kTimeoutS = 300;
  static constexpr uint64_t kSeed = 42;
  // A variant whose projected time (warm-up step time x repetitions) exceeds
  // its budget runs fewer repetitions, but never fewer than this; below it
  // the variant is skipped with the step time as the reason.
  static constexpr int kMinRepetitions = 5;
  // --quick bounds each variant by time, not by a step count: its warm-up
  // and timed steps get a soft budget per process (budget_s). A variant whose
  // fastest warm-up step says they do not fit (an emulated precision, a slow
  // kernel) warms up no further and runs as many repetitions as fit, never
  // fewer than kQuickMinRepetitions; its reason says so.
  static constexpr double kQuickBudgetS = 0.5;
  static constexpr int kQuickMinRepetitions = 2;
  // The run's wall-time budget (--run-budget), shared by its processes (the
  // time left over the processes left) and, in each, by the variants left
  // (the time left over the variants left, at each group's start): a
  // variant's steps get the smaller of that share and budget_s as their soft
  // budget, so a slow one warms up less and runs fewer repetitions (never
  // fewer than kQuickMinRepetitions) and what a fast one leaves flows to the
  // variants after it; one whose fewest steps exceed a quarter of its
  // process's share is skipped (RunContext::process_budget_s), never its
  // group's reference. Set-up is not cut. 0: none.
  static constexpr double kRunBudgetS = 900;

  int warmup_steps = kWarmupSteps;  ///< Steps run and discarded before timing, per variant.
  int repetitions = kRepetitions;   ///< Timed steps recorded per variant (samples), per process.
  int processes = 1;                ///< Fresh processes the run's samples come from, one after another.
  /// `run`'s default: one process cannot tell the code from the moment it
  /// ran in, so every default run carries a between-process estimate.
  static constexpr int kDefaultProcesses = 3;
  double timeout_s = kTimeoutS;     ///< Wall-clock budget per variant (set-up, warm-up, steps).
  double budget_s = 0;              ///< Soft budget per variant and process for its steps; 0: none (--quick: kQuickBudgetS).
  double run_budget_s = kRunBudgetS;  ///< The whole run's wall-time budget (kRunBudgetS); 0: none.
  uint64_t seed = kSeed;            ///< Seeds model init and data; stored with the run.
  bool quick = false;               ///< Small problem sizes (CI, smoke runs).
  // The control (suite `control`, hidden): a pinned GEMM and copy measured
  // at the start and end of every process of a run that selects a suite
  // that is not hidden, so compare and gate can tell a machine that moved
  // from code that moved. Not under an external launcher.
  bool control = true;
  std::string device = "auto";      ///< "auto" before Resolve; "cpu" or "cuda" in a run.
  int threads = 0;                  ///< Intra-op threads; 0: the library default.
  std::string data_dir;             ///< Dataset cache (suites that need "data").
  DistributedLaunch launch;         ///< How multi-rank workloads start their ranks.
  // What is selected.
  std::vector<std::string> suites;  ///< Empty: every suite that is not hidden.
  std::string filter;               ///< ECMAScript regex searched in variant names; empty: all.
  std::vector<ParamOverride> overrides;
  // The model suite's exported models (--model-file), absolute paths, in the
  // order given: one workload variant per file and scenario, run again by
  // `gate` from the stored settings.
  std::vector<std::string> model_files;

  // The defaults of a full or a --quick run.
  static RunSettings Defaults(bool quick);
  // Throws std::invalid_argument naming the first bad setting as its flag
  // ("--repetitions must be at least 1").
  void Validate() const;
  // The stored form (`run.settings` in `show --format json`): warmup_steps,
  // repetitions, timeout_s, seed, quick, device, threads, suites, filter,
  // processes when not 1, run_budget_s when not kRunBudgetS, control when off, data_dir when set, param_overrides when any, model_files when any, launch when not the default.
  nlohmann::json ToJson() const;
  // Inverse of ToJson; absent keys keep Defaults(quick). Throws
  // std::invalid_argument naming a malformed key.
  static RunSettings FromJson(const nlohmann::json& j);
};

}  // namespace perfbench
