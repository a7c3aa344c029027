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

// Defaults: full runs take enough samples for google/benchmark's U-test
// advice (>= 9); --quick keeps CI short but still gives >= 5 samples.
inline constexpr int kWarmup = 3, kRepetitions = 15;
inline constexpr int kQuickWarmup = 2, kQuickRepetitions = 7;

// --repetitions --warmup --device --threads --seed --timeout. `defaults_note`
// says where unset values come from ("" for run's built-in defaults).
void AddMeasureOptions(po::options_description& desc, bool for_gate);

// Settings from `base`, overridden by the flags given; validates them and
// resolves the device. `device` in `base` may be "auto".
RunSettings ResolveSettings(const po::variables_map& vm, RunSettings base, DeviceBackend& backend);

// The stored record of a run about to start.
RunRecord NewRunRecord(const std::string& label, const RunSettings& settings, const Selection& sel,
                       const std::string& command, DeviceBackend& backend);

// One line naming the machine and the software, printed before a table.
std::string ContextLine(const nlohmann::json& fingerprint, const RunSettings& settings);

// --world-sizes, --param, --comm-timeout, and the manual multi-node flags.
void AddDistributedOptions(po::options_description& desc);
// The launch (environment of torchrun/SLURM, or the manual flags) and param
// overrides. Under a fixed launch only the ddp suite runs, at the launch's
// world size. Throws UsageError.
void ResolveDistributed(const po::variables_map& vm, RunSettings* settings, Selection* sel);

// --data-dir; and the check, when a selected variant needs "data", that the
// directory can be created and written (UsageError naming it otherwise).
void AddDataDirOption(po::options_description& desc);
std::string ResolveDataDir(const po::variables_map& vm, const std::vector<VariantRef>& variants);

// Runs groups, appending each group's results to the store in one transaction
// as soon as it finishes, with progress on a terminal. Returns the records
// and counts failed variants into *failed.
// `store` may be null (ranks other than 0 of a launched run write nothing).
std::vector<ResultRecord> ExecuteGroups(Store* store, int64_t run_id, const RunSettings& settings,
                                        DeviceBackend& backend, const std::vector<VariantGroup>& groups,
                                        size_t* failed);

}  // namespace perfbench::cli
