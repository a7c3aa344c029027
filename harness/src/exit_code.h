// The exit codes: a versioned contract. One home for their values, their
// meanings (main's help and every command's help footer print these) and
// the rule that turns a verdict into one (compare, ab, both gates).
#pragma once

#include <cstddef>
#include <vector>

namespace perfbench {

enum ExitCode : int {
  kExitOk = 0,            // success; compare/gate/ab: no regression
  kExitRegression = 1,    // compare/gate/ab: at least one regression
  kExitUsage = 2,         // bad flag or value, unknown suite/run, unusable database, bad input file
  kExitInconclusive = 3,  // compare/gate/ab: a decision was required and the data could not give one
  kExitRuntime = 4,       // a workload failed at run time (the rest recorded), or the store failed
  kExitIncomparable = 5,  // compare/gate/ab/procure/baseline: runs of other hardware or conditions
};

struct ExitMeaning {
  ExitCode code;
  const char* meaning;
};
// Every code with its meaning, in order.
const std::vector<ExitMeaning>& ExitMeanings();
const char* MeaningOf(ExitCode code);

// A verdict's exit code: 1 for a regression; else 4 when a process or
// workload failed; else 3 when inconclusive (unless allowed) or when
// `unresolved_pass` (--require-mde: a pass that cannot resolve its mde);
// else 0.
int VerdictExit(bool regression, bool inconclusive, size_t failed, bool allow_inconclusive, bool unresolved_pass);

}  // namespace perfbench
