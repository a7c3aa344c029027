#include "exit_code.h"

namespace perfbench {

const std::vector<ExitMeaning>& ExitMeanings() {
  static const std::vector<ExitMeaning> m = {
      {kExitOk, "success (compare, gate, ab: no regression)"},
      {kExitRegression, "a regression (a metric moved the worse way beyond its limit)"},
      {kExitUsage, "usage or input error: bad flag or value, unknown suite or run, unreadable database or file"},
      {kExitInconclusive, "inconclusive where a decision was required"},
      {kExitRuntime, "run-time failure: a workload failed (the others were recorded), or the store failed"},
      {kExitIncomparable, "not comparable: the runs are of other hardware or conditions"},
  };
  return m;
}

const char* MeaningOf(ExitCode code) {
  for (const auto& m : ExitMeanings())
    if (m.code == code) return m.meaning;
  return "";
}

int VerdictExit(bool regression, bool inconclusive, size_t failed, bool allow_inconclusive, bool unresolved_pass) {
  if (regression) return kExitRegression;
  if (failed) return kExitRuntime;
  if (inconclusive && !allow_inconclusive) return kExitInconclusive;
  if (unresolved_pass) return kExitInconclusive;
  return kExitOk;
}

}  // namespace perfbench
