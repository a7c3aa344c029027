#include "push.h"

namespace perfbench {

PushSummary PushRuns(Store& from, Store& to, const std::vector<int64_t>& run_ids, const PushProgress& progress) {
  PushSummary sum;
  for (const int64_t id : run_ids) {
    RunRecord run = from.GetRun(id);
    if (run.status == RunStatus::kRunning) {
      ++sum.running;
      if (progress) progress(run, "running", 0);
      continue;
    }
    if (auto there = to.FindRunByUuid(run.uuid)) {
      // A verdict given since (baseline accept, a later gate) follows the run.
      const auto verdict = from.GetRunVerdict(id);
      if (verdict && to.GetRunVerdict(*there) != verdict) to.SetRunVerdict(*there, *verdict);
      ++sum.present;
      if (progress) progress(run, "present", *there);
      continue;
    }
    // Stored statuses are running/complete/imported: a run cut short stays
    // "running" with no live process (pid 0), which reads back as aborted.
    if (run.status == RunStatus::kAborted) {
      run.status = RunStatus::kRunning;
      run.pid = 0;
    }
    Store::RunWithResults whole{run, from.GetResults(id), from.GetRunVerdict(id)};
    const Store::Inserted row = to.InsertRunsReporting({whole}).front();
    ++(row.inserted ? sum.pushed : sum.present);
    if (progress) progress(run, row.inserted ? "pushed" : "present", row.id);
    Failpoint("push:after-run");
  }
  return sum;
}

}  // namespace perfbench
