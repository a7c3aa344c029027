// What `run` and `gate` share: measurement options, settings, progress, the
// run record, and executing groups into the store.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "perfbench/backend.h"
#include "perfbench/settings.h"
#include "registry.h"
#include "runner.h"
#include "store/store.h"

namespace perfbench::cli {

// --repetitions --warmup --device --threads --seed --timeout. For a gate the
// defaults are the baseline's; for a run, RunSettings' (documented there).
void AddMeasureOptions(po::options_description& desc, bool for_gate);

// `base` overridden by the measurement flags given, validated (UsageError),
// with the device resolved ("auto" -> "cuda" or "cpu").
RunSettings ResolveSettings(const po::variables_map& vm, RunSettings base, DeviceBackend& backend);

// The stored record of a run about to start; `settings` are stored whole.
RunRecord NewRunRecord(const std::string& label, const RunSettings& settings, const std::string& command,
                       DeviceBackend& backend);

// One line naming the machine and the software, printed before a table.
std::string ContextLine(const nlohmann::json& fingerprint, const RunSettings& settings);

// What --suite, --filter, the measurement flags (ResolveSettings) and the
// distributed flags (ResolveDistributed) say, for a command that selects
// variants (run, profile).
RunSettings SelectionSettings(const po::variables_map& vm, DeviceBackend& backend);
// --model-file into `s` (absolute paths; alone, they select the model suite).
void ResolveModelFiles(const po::variables_map& vm, RunSettings* s);
// The variants `settings` selects (UsageError on a bad selection or none),
// and settings->data_dir resolved for them (ResolveDataDir).
std::vector<VariantRef> SelectOrThrow(const po::variables_map& vm, RunSettings* settings);

// --world-sizes, --param, --comm-timeout, and the manual multi-node flags.
void AddDistributedOptions(po::options_description& desc);
// The launch (environment of torchrun/SLURM, or the manual flags) and param
// overrides, into `settings`. Under a fixed launch only workloads with a rank
// param run, at the launch's world size. Throws UsageError.
void ResolveDistributed(const po::variables_map& vm, RunSettings* settings);

// --data-dir; and the check, when a selected variant needs "data", that the
// directory can be created and written (UsageError naming it otherwise).
void AddDataDirOption(po::options_description& desc);
// `recorded`: the directory a baseline ran with (a gate uses it unless
// --data-dir is given).
std::string ResolveDataDir(const po::variables_map& vm, const std::vector<VariantRef>& variants,
                           const std::string& recorded = "");

// Results of executed groups, how many variants failed, and the time spent
// in timed repetitions.
struct Execution {
  std::vector<ResultRecord> results;
  size_t failed = 0;
  double timed_s = 0;
};

// Which process of a run is executing: its index (stored with every sample)
// and RunContext::process_seed.
struct ProcessTag {
  int index = 0;
  uint64_t seed = 0;
  double budget_s = 0;  // this process's share of the run's budget (Runner::set_budget); 0: none
};

// Runs groups with `settings` (between two measurements of the control when
// RunSettings::control holds and a suite that is not hidden is selected),
// storing each group's results in one
// transaction as soon as it finishes, with progress on a terminal. A result
// new to `into` is appended to the run; one `into` already holds (another
// process of the run) gets the new samples appended, keeps a failure, and is
// replaced in the store. `store` may be null (ranks other than 0 of a
// launched run write nothing).
void ExecuteGroups(Store* store, int64_t run_id, const RunSettings& settings, DeviceBackend& backend,
                   const std::vector<VariantGroup>& groups, Execution* into, const ProcessTag& process = {});

// "perfbench <cmd> <args...>", as stored with a run.
std::string CommandLine(const std::string& cmd, const std::vector<std::string>& args);

}  // namespace perfbench::cli
