// Which earlier runs belong with a comparison: the same machine and
// conditions, and the noise floors their run medians give.
#pragma once

#include "compare/compare.h"
#include "store/store.h"

namespace perfbench::gate {

// Same hardware profile and the same threads, quick and device settings: runs
// whose medians belong in one series.
bool SameConditions(const RunRecord& r, const RunRecord& c);
// SameConditions, and in a fleet's store (several machines' runs) the same
// machine too: history and noise floors follow a host, not only its hardware.
bool SameHostConditions(const Store& store, const RunRecord& r, const RunRecord& c);

// The runs a comparison learns its noise floors from: the baseline's stored
// runs and earlier runs labelled like the candidate, on the candidate's
// hardware profile with its threads, quick and device settings, in time
// order (the candidate's own runs excluded), the last kMaxHistoryRuns. One
// series of run medians per result key.
History LoadHistory(Store& store, const RunData& baseline, const RunData& candidate);

// `compare`'s history: the baseline's stored runs and the store's earlier
// runs of any label that measured one of the compared results, under the
// same conditions (SameHostConditions) and not rejected by a gate, the last
// kMaxHistoryRuns of them (scanning at most kMachineHistoryScan runs, newest
// first). A build that changed speed between them raises the learned spread,
// never lowers it: what it costs is power, not false changes.
inline constexpr size_t kMachineHistoryScan = 300;
History LoadMachineHistory(Store& store, const RunData& baseline, const RunData& candidate);

}  // namespace perfbench::gate
