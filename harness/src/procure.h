// perfbench procure: the same workloads on several machines, ranked. Per
// workload variant, each machine's throughput (metric `throughput`, else
// `step_throughput`) with its 95% interval:
//   several processes (runs pooled, or --processes): the mean of the process
//     medians with Student's t interval on them (processes are the
//     independent samples);
//   one process: the median with its distribution-free interval (order
//     statistics; within one process only, said so in `level`).
// Relative to the first machine; per dollar-hour (samples per USD, from the
// given price) and per watt (samples per joule: 1 / energy_per_sample when
// the run measured energy, else throughput / the given power). A machine's
// rank is 1 + the number of machines clearly faster (their whole interval
// above its own): machines whose intervals overlap share a rank (tied).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare.h"

namespace perfbench {

struct Machine {
  std::string ref;     // as given on the command line
  RunData data;
  double usd_per_hour = 0;  // 0: not given
  double watts = 0;         // 0: not given
  std::string Describe() const;  // "AMD EPYC, 2 cores" / "NVIDIA H200 x1"
};

struct ProcureEntry {
  bool present = false;  // the machine has samples for this variant
  double value = 0, ci_low = 0, ci_high = 0;
  size_t processes = 0;
  std::string level;        // "processes" | "within one process"
  double relative = 0;      // value / the first machine's (0 when either is absent)
  double per_usd = 0;       // samples per dollar (0: no price)
  double per_joule = 0;     // samples per joule (0: no energy or power)
  std::string energy_source;  // "measured" | "given power" | ""
  int rank = 0;             // 1 = best; ties share a rank; 0 when absent
};

struct ProcureRow {
  std::string suite, workload, metric, unit;
  Params params;
  std::vector<ProcureEntry> entries;  // one per machine, in the given order
};

// A run's results with those of the same variant and metric merged, each
// further record's processes numbered after the earlier ones' (a label's
// runs, a file's several runs: one machine, its runs its processes).
RunData PoolProcesses(const RunData& data);

// One row per variant measured (ok, with samples) on any machine, its metric
// `throughput`, else `step_throughput`; in the first machine's order.
// `machines` are pooled (PoolProcesses).
std::vector<ProcureRow> Procure(const std::vector<Machine>& machines);
// Ranks the present `entries` as above.
void RankWithTies(std::vector<ProcureEntry>& entries);

// {"schema_version": 1, "machines": [{"ref", "profile_key", "description",
// "usd_per_hour", "watts"}], "rows": [{"suite", "workload", "params", "metric",
// "unit", "entries": [{"machine", "value", "ci_low", "ci_high", "processes",
// "level", "relative", "per_usd", "per_joule", "energy_source", "rank"} | null]}]}
nlohmann::json ProcureJson(const std::vector<Machine>& machines, const std::vector<ProcureRow>& rows);
std::string ProcureText(const std::vector<Machine>& machines, const std::vector<ProcureRow>& rows, bool markdown);

}  // namespace perfbench
