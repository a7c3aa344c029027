// Simulated gates with two levels of noise, for judging how perfbench
// decides when processes, not repetitions, are the independent samples.
// Used by the gate_quality program (figures) and by tests (fixed seeds).
//
// Noise model, per metric (a time: lower is better, true value 1): every
// process draws an offset exp(between * z); every repetition inside it
// exp(within * z) on top (z standard normal, independent). A regressed
// metric's candidate processes are multiplied by 1 + regression.
//
// Schemes, each with its cost in processes:
//   single    one process a side (`compare run1 run2`), within-process test
//   gate      the default gate (PlanGate) against a baseline of 5 runs of one
//             process each, its noise floor learned from those 5 runs; extra
//             rounds add processes to the undecided metrics
//   gate+history  the same gate after 25 earlier gates of the unchanged
//             build: its floor learned from 30 runs (steady state of a
//             nightly gate)
//   ab        `perfbench ab`: 10 pairs of processes, signed-rank on the pair
//             log ratios (no drift between pairs in this model)
//   rolling   `gate --baseline label:NAME --last W`: a window of W default
//             runs (run_processes processes each) as baseline and history,
//             the candidate planned for the policy's mde (gate/plan.h) and
//             run through the core's rounds (gate/gate.h)
// A run's processes can share a moment: every run (and every gate's
// candidate) draws an offset exp(run_sd z) all its processes carry; with
// moment_per_round each of a gate's rounds draws its own (a moment that
// passes within a round's minute, as this project's VM showed).
#pragma once

#include <cstdint>
#include <string>

#include "compare/compare.h"

namespace perfbench::sim {

enum class Scheme { kSingle, kGate, kGateHistory, kAb, kRolling };
std::string ToString(Scheme s);

struct GateConfig {
  int metrics = 200;
  int trials = 100;           // comparisons (gates) simulated
  double between = 0.10;      // process-to-process sd of log time
  double within = 0.02;       // repetition-to-repetition sd of log time
  int repetitions = 7;        // per process of a baseline run (`run --quick`)
  int baseline_runs = 5;
  int pairs = 10;             // ab
  int earlier_gates = 25;     // gate+history
  double regression = 0;      // 0: A/A
  double regressed_share = 0.05;
  double run_sd = 0;          // sd of log time shared by one run's processes
  bool moment_per_round = false;  // a gate's rounds (and its confirmation) each draw their own moment
  int confirm = -1;           // PlanLimits::confirm (-1: the gate's default; 0: no confirmation round)
  int window_runs = 20;       // rolling
  int run_processes = 3;      // rolling: processes of a default run
  int run_repetitions = 3;    // rolling: repetitions per process of a default run (--quick: ceil(7 / 3))
  uint64_t seed = 1;
  Policy policy = Policy::Default();
};

struct GateOutcome {
  int trials = 0;
  int trials_with_false_regression = 0;
  long long regressed_metrics = 0, detected = 0;
  long long null_metrics = 0, unchanged = 0, inconclusive = 0;  // verdicts of null metrics
  double processes = 0;  // mean cost per trial, both sides
  double candidate_processes = 0;  // mean candidate processes per trial (rolling: the gate's cost)
  double mde = 0;                  // mean reported detectable effect of the regressed metrics (rolling)
  double FalseAlarmShare() const { return trials ? double(trials_with_false_regression) / trials : 0; }
  double Power() const { return regressed_metrics ? double(detected) / regressed_metrics : 0; }
};

GateOutcome SimulateScheme(Scheme scheme, const GateConfig& config);

// Is the reported detectable effect honest? For each of `trials` rolling
// gates: a null gate reports metric 0's mde; an independent gate with that
// true effect on metric 0 (the only one regressed) detects it or not.
struct Honesty {
  int gates = 0, reported = 0, detected = 0;  // reported: gates whose metric 0 had an mde
  double mean_mde = 0;
  double Rate() const { return reported ? double(detected) / reported : 0; }
};
Honesty SimulateMdeHonesty(const GateConfig& config);

}  // namespace perfbench::sim
