// The harness's own cost: where a run's time went, stored with the run.
//
// Each process of a run stores, per suite it ran and in all, the seconds its
// variants spent in set-up, warm-up, timed steps and the rest (Runner's
// PhaseTimes) as results of the suite `harness`, workload `time`, params
// suite:NAME (suite:all for the sum): metrics setup_time, warmup_time,
// timed_time, other_time and wall_time, one sample per process. So `history
// --suite harness` shows a harness that got slower like any other
// regression; the policy makes them informational (never a verdict), and
// like the control they are around a run, never selected by --suite.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runner.h"
#include "store/records.h"

namespace perfbench {

// One process's phase times as result records (process index `process`).
std::vector<ResultRecord> PhaseRecords(const std::map<std::string, PhaseTimes>& by_suite, int process);

// The sums over a run's processes of what PhaseRecords stored, by suite
// ("all" included); empty when the run stored none.
std::map<std::string, PhaseTimes> PhaseTotals(const std::vector<ResultRecord>& results);

// Lines that say where the time went: one for the whole run (`wall_s`: the
// run's own wall time, whose part outside every suite is process start-up,
// the store and reporting), then one per suite.
std::string PhaseSummary(const std::map<std::string, PhaseTimes>& totals, double wall_s, int processes);

}  // namespace perfbench
