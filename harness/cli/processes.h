// Processes as replicates: a run's workloads executed in fresh processes of
// this binary, one after another, each storing its samples into the same run
// under its own process index. Used by `run --processes K` and by the gate's
// rounds; the child side is the internal command `__process`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "perfbench/settings.h"
#include "store/records.h"
#include "store/store.h"

namespace perfbench::cli {

struct ProcessJob {
  std::string db;
  int64_t run_id = 0;
  RunSettings settings;               // device resolved; repetitions per process
  std::vector<std::string> variants;  // VariantKeys to run; empty: all the settings select
  // The run's budget left for these processes, from RunProcesses' call: each
  // process gets the time left over the processes left (0: none).
  double budget_s = 0;
};

struct ProcessOutcome {
  int index = 0;
  int exit_code = 0;       // the child's; -1 when it did not exit normally
  std::string failure;     // empty when it ran (a failed workload is not a failed process)
  double wall_s = 0;       // start to exit, seen from the parent
  double timed_s = 0;      // in timed repetitions, reported by the child
  size_t failed_variants = 0;
};

// Runs `argv` (argv[0] the executable) with `env` added to this process's
// environment, stdout discarded, stderr passed through, dying with its
// parent; waits. Returns "" on exit 0, else what happened ("exited with
// status 2", "was killed by signal 9 (Killed)"); `exit_code` gets the exit
// status, -1 when it did not exit normally.
std::string SpawnAndWait(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& env, int* exit_code);

// What a `perfbench run --label L ...` child left in the store.
struct StoredProcess {
  int64_t run_id = 0;     // the newest run labelled L after it, if new; 0 when it stored none
  bool complete = false;  // that run finished (a failed workload still finishes it)
  int exit_code = 0;
  std::string failure;    // as SpawnAndWait
};
// Runs `argv` (a `run` of some perfbench binary that labels its run `label`)
// with `env` added, and finds the run it stored.
StoredProcess RunStoredProcess(Store& store, const std::vector<std::string>& argv,
                               const std::vector<std::pair<std::string, std::string>>& env, const std::string& label);

// Runs process `index` of `job` and waits for it; stderr passes through
// (progress), stdout is discarded.
ProcessOutcome RunProcess(const ProcessJob& job, int index, double budget_s = 0);

// Processes first .. first + count - 1 in turn, a line on stderr after each
// ("process 2/5: 4.1 s"); a process that did not run is reported, not thrown.
std::vector<ProcessOutcome> RunProcesses(const ProcessJob& job, int first, int count, int total);

// RunContext::process_seed of process `index` of run `run_id`.
uint64_t ProcessSeed(uint64_t seed, int64_t run_id, int index);

// The Kalibera-Jones allocation for the same cost as a run of `done.size()`
// processes of `reps` repetitions: repetitions per process, the median over
// the run's metrics of sqrt((c_process / c_repetition) T1^2 / T2^2) (at
// least 2), and the processes that cost buys (at least 2). c_repetition is
// the processes' median timed time per repetition, c_process the rest of
// their wall time. nullopt with fewer than 2 processes or no estimate.
struct Allocation {
  int processes = 0, repetitions = 0;
};
std::optional<Allocation> KaliberaJones(const std::vector<ResultRecord>& results,
                                        const std::vector<ProcessOutcome>& done, int reps);

}  // namespace perfbench::cli
