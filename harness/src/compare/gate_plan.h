// How a gate spends its processes: the plan the CLI's `gate` follows and the
// verdict-quality benchmark simulates.
//
//   repetitions   per gate process: a quarter of the baseline's (at least 2).
//                 Processes, not repetitions, are the independent samples;
//                 the Kalibera-Jones optimum measured for amp --quick on the
//                 2-core EPYC was 2-5 per process (`run --processes` prints it).
//   first round   processes for an interval of half-width limit/2 at the
//                 baseline's between-process spread s (the upper quartile
//                 over its judged metrics of the sd of log process medians):
//                 2.5 s sqrt(1/n_baseline + 1/n) <= limit / 2, within
//                 [kMinFirst, kMaxFirst]; 3 when the baseline has one
//                 process per metric (nothing to size by).
//   extra rounds  up to kExtra more processes, for workloads with an
//                 inconclusive metric only. With kMaxFirst + kExtra processes
//                 of a quarter of the repetitions a gate costs at most about
//                 2.5 runs of the baseline (measured: a process of amp --quick
//                 is ~4.2 s of start, set-up and warm-up + ~1.55 s a
//                 repetition; a run --quick ~16 s).
//   looks         K = 1 + extra rounds; each look tests at alpha / K and
//                 builds (1 - (1 - confidence) / K) intervals (Bonferroni).
#pragma once

#include <string>

#include "compare/compare.h"

namespace perfbench {

struct GatePlan {
  static constexpr int kMinFirst = 2, kMaxFirst = 3, kExtra = 2;
  int repetitions = 0;  // per process
  int first = 0, max_processes = 0, extra_rounds = 0;
  Policy policy;        // alpha and confidence per look
  std::string sizing;   // why the first round has `first` processes
};

int GateRepetitions(int baseline_repetitions);

// The default plan for `baseline` (repetitions: the baseline's per process);
// `first` > 0 or `max_processes` > 0 override the defaults. Throws
// std::invalid_argument when max_processes < first or first < 1.
GatePlan PlanGate(const RunData& baseline, int baseline_repetitions, const Policy& policy, int first = 0,
                  int max_processes = 0);

// Processes to add in the next round (0: stop), given those run so far.
int NextRound(const GatePlan& plan, int processes_so_far);

}  // namespace perfbench
