// How a gate spends its processes: the plan `gate` follows (and prints with
// --plan) and the verdict-quality benchmark simulates.
//
//   repetitions   per gate process: a quarter of the baseline's (at least 2).
//                 Processes, not repetitions, are the independent samples.
//   first round   the fewest candidate processes n for which every judged
//                 metric's detectable effect (compare/detectable.h) falls
//                 within the policy's mde (Threshold::Mde, twice the limit
//                 by default), from the baseline's variance components on
//                 the log scale: the baseline side's variance of process
//                 medians over its n_b processes, the candidate's
//                 between + within / repetitions, Welch's degrees of
//                 freedom, the family of m judged metrics and alpha per look.
//                 Within [kMinFirst, cap]; cap = --max-processes (default
//                 kDefaultMax), and --max-seconds / the seconds a baseline
//                 process took when both are known. Metrics that cannot
//                 reach their mde within the cap are listed (the gate then
//                 says "pass, but cannot resolve X%"). A baseline with one
//                 process per metric has nothing to size by: 3.
//   looks         2 when the cap leaves room after the first round (a second
//                 round adds up to the rest, for the workloads with an
//                 inconclusive metric only), else 1. Each look tests at
//                 alpha / looks and builds (1 - (1 - confidence) / looks)
//                 intervals (Bonferroni), so the chance of a false verdict
//                 over both stays within the policy's; the plan is sized at
//                 that alpha.
//   confirmation  a regression the looks find is run again in `confirm`
//                 fresh processes (default: as many as the first round, at
//                 least kMinConfirm; 0: none; never fewer than the policy's
//                 min_samples need) of its workloads, judged on their own against the
//                 baseline: it fails the gate only when they show it too
//                 (one-sided, at kConfirmAlpha; gate/gate.h). A machine's
//                 slow moment that spanned the first round is not the code.
#pragma once

#include <string>
#include <vector>

#include "compare/compare.h"

namespace perfbench {

struct MetricPlan {
  std::string key;      // ResultKey
  std::string name;     // suite/workload/params metric
  int processes = 0;    // candidate processes it needs; 0: more than the cap
  double mde_at_first = 0;  // relative detectable effect with the first round's processes
  double policy_mde = 0;
};

struct GatePlan {
  static constexpr int kMinFirst = 2, kNoSpreadFirst = 3, kDefaultMax = 10, kMinConfirm = 3;
  int repetitions = 0;  // per process
  int first = 0, max_processes = 0, extra_rounds = 0;
  int confirm = 0;      // processes of the confirmation round (0: none)
  Policy policy;        // alpha and confidence per look
  std::string sizing;   // why the first round has `first` processes
  std::vector<MetricPlan> metrics;  // judged metrics, least resolvable first
  double process_seconds = 0;       // a baseline process's wall time (0: unknown)
  int Looks() const { return 1 + extra_rounds; }
  // Judged metrics whose mde stays above the policy's with `first` processes.
  size_t Unreachable() const;
  // Lines for `gate --plan` and the gate's header.
  std::string Describe() const;
};

struct PlanLimits {
  int first = 0;              // --processes (0: planned)
  int max_processes = 0;      // --max-processes (0: kDefaultMax, at least first)
  double max_seconds = 0;     // --max-seconds (0: no cap)
  double process_seconds = 0; // wall time of one baseline process (0: unknown)
  int confirm = -1;           // --confirm (-1: as many as the first round; 0: none)
};

int GateRepetitions(int baseline_repetitions);

// The plan for `baseline` (repetitions: the baseline's per process).
// Throws std::invalid_argument when max_processes < first or first < 1.
GatePlan PlanGate(const RunData& baseline, int baseline_repetitions, const Policy& policy,
                  const PlanLimits& limits = {});

// Processes to add in the next round (0: stop), given those run so far: the
// rest up to max_processes (a gate makes at most extra_rounds such rounds).
int NextRound(const GatePlan& plan, int processes_so_far);

}  // namespace perfbench
