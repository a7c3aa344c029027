// The gate: rounds of candidate processes judged against a baseline, in the
// core so that the CLI only parses and prints and tests drive it directly.
//
//   1. the plan (gate/plan.h) sizes the first round for the policy's mde;
//   2. each round runs processes of the candidate (a ProcessRunner: the CLI
//      spawns fresh processes of this binary into the store; tests and the
//      benchmark make samples), merges them into one candidate whose
//      processes are the samples, and compares at the process level with
//      the plan's alpha per look, the noise floors of `history` and the
//      control's verdict on the machine;
//   3. while metrics stay undecided (Undecided) and the plan leaves
//      processes, a further round runs those workloads only;
//   4. beside the baseline (a rolling window, gate/window.h) a pinned
//      anchor can be judged, so slow creep a window absorbs is reported;
//   5. a regression those rounds find (a statistical one, not a failure) is
//      confirmed: plan.confirm fresh processes of its workloads run, judged
//      on their own against the same baseline; it stays a regression when
//      they show it again (one-sided p < kConfirmAlpha in the same
//      direction, and not `unchanged`: an interval within the margin does
//      not show it), else it becomes inconclusive, and so does the gate. All
//      the processes of a round share the machine's moment; a slow moment
//      that spanned the round looked like a regression on an unchanged
//      build (an A/A gate, 1 in 3 on this project's 2-core machine).
//      A false alarm from a moment that has passed needs the confirmation
//      to err too; a true regression is lost where the confirmation misses
//      it, which the stated detectable effect does not count (simulated:
//      an effect equal to it caught in 67-74% of gates, not 80%).
// The outcome carries the comparisons, the processes spent and the verdict
// a rolling baseline reads back (Store::SetRunVerdict).
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "gate/plan.h"

namespace perfbench::gate {

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs processes first .. first + count - 1 (of `total` planned) for the
  // variants `keys` (VariantKey; empty: all); returns the failures (failed
  // variants, and processes that did not run).
  virtual size_t Run(const std::vector<std::string>& keys, int first, int count, int total) = 0;
  // The candidate's results so far, every process's samples merged.
  virtual std::vector<ResultRecord> Results() = 0;
};

struct GateInputs {
  RunData baseline;
  std::optional<RunData> anchor;
  History history;
  GatePlan plan;
  std::vector<std::string> variants;  // VariantKeys the candidate runs
  // The kinds of the baseline and the anchor (a baseline name or export,
  // a rolling window, stored runs), stated with every verdict.
  VerdictKind kind = VerdictKind::kStoredBaseline, anchor_kind = VerdictKind::kStoredBaseline;
};

// The one-sided level a confirmation round tests a regression at.
inline constexpr double kConfirmAlpha = 0.1;

struct GateOutcome {
  Comparison comparison;
  std::optional<Comparison> anchor;
  int processes = 0;  // candidate processes of the first round plus later rounds' (per workload, the most)
  int rounds = 0;
  int confirm_processes = 0;  // of the confirmation round (0: none ran)
  size_t confirmed = 0, unconfirmed = 0;  // regressions (baseline and anchor) it reproduced, or not
  size_t failed = 0;
  // "pass", "regression" or "inconclusive": what a rolling baseline reads
  // back. A pass that cannot resolve its mde is still "pass"; a regression
  // the confirmation did not show again (baseline or anchor) is
  // "inconclusive".
  std::string Verdict() const;
};

// `candidate`: the run record (its results are the runner's). `progress`
// gets a line per extra round and for the confirmation.
GateOutcome RunGate(const GateInputs& in, RunData candidate, ProcessRunner& runner,
                    const std::function<void(const std::string&)>& progress = {});

// The variants of `variants` belonging to a workload with an undecided
// metric in `c`: inconclusive without a detectable effect, or neither a
// regression nor an improvement with an mde above the policy's (a
// workload's variants are interleaved, so all of them).
std::vector<std::string> Undecided(const Comparison& c, const std::vector<std::string>& variants);

// Settles `c`'s statistical regressions with `again` (the confirmation
// round's own comparison with the same baseline): a regression stays when
// `again` calls the metric a regression or finds it worse at one-sided
// p < kConfirmAlpha without calling it unchanged, else it becomes
// inconclusive; the overall verdict is
// then inconclusive unless another regression stands. Returns {confirmed,
// not confirmed}. `processes`: the round's, for the reasons.
std::pair<size_t, size_t> SettleConfirmation(Comparison& c, const Comparison& again, int processes);

// The results with only the samples of processes `first` and later.
std::vector<ResultRecord> ProcessesFrom(std::vector<ResultRecord> results, int first);

// 1 regression (in the baseline comparison or the anchor's), 4 a failure,
// 3 inconclusive (unless allowed; a regression the confirmation did not
// reproduce is inconclusive) or, with require_mde, a pass that cannot
// resolve the policy's mde; else 0.
int GateExit(const GateOutcome& o, bool allow_inconclusive, bool require_mde);

}  // namespace perfbench::gate
