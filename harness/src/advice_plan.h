// What `perfbench advise` measures: the selected variants brought back to
// their workloads' defaults (the baselines), and each first fix tried on them
// one at a time (the trials): every WorkloadInfo::knobs setting, and the
// intra-op thread count. Each trial runs in processes of its own, paired
// round by round with the baseline's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "perfbench/settings.h"
#include "registry.h"

namespace perfbench {

// A baseline variant and what it is compared with in one trial.
struct TrialVariant {
  VariantRef baseline, candidate;
  std::string skip;  // why the candidate cannot run here; empty when it can
};

struct Trial {
  std::string knob;                      // "precision", "threads"
  std::string setting;                   // "precision:bf16", "threads:1"
  std::vector<ParamOverride> overrides;  // --param flags of its processes
  int threads = -1;                      // --threads of its processes; -1: the baseline's
  std::vector<TrialVariant> variants;
  // Variants that run (not skipped).
  size_t Runnable() const;
};

struct AdvicePlan {
  std::vector<VariantRef> baselines;
  std::vector<Trial> trials;
  // Baselines that cannot run here, with the reason (no row can be measured).
  std::vector<std::pair<VariantRef, std::string>> skipped;
};

// `selected` with every knob param at its default, deduplicated (selecting
// amp/mlp's three precisions gives one baseline, fp32). Trials, in knob order:
// each setting of the baselines' knobs (a setting shared by several
// workloads is one trial), then threads 1, hardware/2 and hardware, without
// the baseline's own count (`settings.threads`, 0 meaning `hardware_threads`).
// `only`: knob names to try; empty: all. Throws std::invalid_argument for a
// knob in `only` that no selected workload has.
AdvicePlan PlanAdvice(const std::vector<VariantRef>& selected, const RunSettings& settings, int hardware_threads,
                      const std::vector<std::string>& only = {});

// Every knob param of the baselines at its default, as --param flags (the
// first default of a param several workloads share): each process of an
// advise gets them before its trial's own, so that a --param the user gave
// for a knob cannot move the baseline.
std::vector<ParamOverride> DefaultOverrides(const AdvicePlan& plan);

// The metric a trial is ranked by: throughput, else step_throughput, else
// step_time. And the memory metric reported with it: peak_memory, else
// peak_rss, else model_bytes, else "".
std::string PrimaryMetric(const WorkloadInfo& info);
std::string MemoryMetric(const WorkloadInfo& info);

}  // namespace perfbench
