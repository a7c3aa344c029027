// Rolling baselines: `--baseline label:NAME --last N` judges against the
// last N runs of a label on the candidate's machine and conditions, the way
// Conbench and Perfherder judge against recent history, with four guards:
//   conditions   same hardware profile, threads, quick and device
//                (SameConditions), complete or imported runs only;
//   verdicts     a run a gate judged counts only when it passed or was
//                accepted (`baseline accept RUN`); plain runs count;
//   control      a run whose control (control/gemm, control/bandwidth) sits
//                beyond max(its policy threshold, 4 robust sd) of the
//                window's median moved with its machine: left out;
//   change point only runs after the last change point that `history`
//                finds (E-divisive, changepoint.h) in any judged metric's
//                run medians that moves it beyond its limit: a window never
//                straddles a step.
// Fewer than kMinWindowRuns left is an error the CLI exits 3 with, naming
// what was left out and why.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "store/store.h"

namespace perfbench::gate {

inline constexpr size_t kMinWindowRuns = 5, kDefaultWindowRuns = 20;

// "label:nightly" -> "nightly"; nullopt for any other reference.
std::optional<std::string> RollingLabel(const std::string& ref);

struct Window {
  RunData data;                      // the runs kept, pooled, newest first
  std::vector<std::string> dropped;  // "run 12: its gate found a regression", ...
  size_t considered = 0;             // runs of the label on these conditions
};

// Not enough runs for a rolling baseline; what() says how many and why.
class WindowError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The window of `label`'s last `last` eligible runs for a candidate under
// `conditions`, older than run `before` when it is not 0. Throws WindowError.
Window SelectWindow(Store& store, const std::string& label, size_t last, const RunRecord& conditions,
                    const Policy& policy, int64_t before = 0);

}  // namespace perfbench::gate
