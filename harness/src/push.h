// perfbench push: copies runs from one store (a machine's local SQLite file)
// to another (the fleet's PostgreSQL server, or another file). Idempotent: a
// run lands once, by its uuid; each run is one transaction on the target, so
// a push cut short (killed, the server restarted) leaves whole runs or none,
// and pushing again completes it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "store/store.h"

namespace perfbench {

struct PushSummary {
  size_t pushed = 0;   // new on the target
  size_t present = 0;  // already there (an earlier push, or an import)
  size_t running = 0;  // still being measured: left for a later push
};

// What happened to one run: "pushed" (with its id on the target), "present" or "running".
using PushProgress = std::function<void(const RunRecord& run, const std::string& outcome, int64_t target_id)>;

// Pushes `run_ids` of `from` (oldest first as given) to `to`, with every
// sample, fingerprint and verdict (a run already there gets a verdict given
// since). A run still running in a live process is left; one cut short
// (aborted) is pushed as it is.
PushSummary PushRuns(Store& from, Store& to, const std::vector<int64_t>& run_ids, const PushProgress& progress);

}  // namespace perfbench
