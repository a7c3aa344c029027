// Achievable peaks: `perfbench peak` measures them (the hidden `peak`
// suite, stored as a run labelled "peak"), and `show` prints those of a
// run's machine beside its results.
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "store/store.h"

namespace perfbench::cli {

// The label every `perfbench peak` run carries.
inline constexpr const char* kPeakLabel = "peak";

// Prints "achievable here (peak run N, date): ..." for the newest complete
// peak run with `run`'s hardware profile, device and threads, one line per
// dtype and op (the best shape's median and where, the largest sample of any
// shape and where) and the shapes its budget left out; false when there is
// none.
bool PrintAchievable(Store& store, const RunRecord& run, std::ostream& out);

// The achievable GEMM FLOP/s per dtype ("fp32" -> 1.26e11: the best shape's
// median, not the maximum) of that same peak run; empty when there is none.
std::map<std::string, double> AchievableFlops(Store& store, const RunRecord& run);

}  // namespace perfbench::cli
