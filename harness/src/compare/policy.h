// Policy: the thresholds and error rates verdicts are judged by. Built-in
// defaults by metric name, replaced or refined by a policy JSON file (see
// baselines/policy.json and docs/verdicts.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "store/records.h"

namespace perfbench {

struct Threshold {
  bool absolute = false;  // false: relative (0.05 = 5%); true: in the metric's unit
  double value = 0.05;
  // Reported with its change and interval but never judged, and left out of
  // the q-values: e.g. `loss`, a per-step trajectory that is not a
  // distribution of repeated measurements (loss parity is `loss_delta`).
  bool informational = false;
  // The honest-pass bound: the largest detectable effect (MetricVerdict::mde)
  // a pass may have and still mean "nothing moved by more than this";
  // 0: twice `value`.
  double mde = 0;
  double Mde() const { return mde > 0 ? mde : 2 * value; }
};

struct Policy {
  double alpha = 0.05;       // false-discovery rate for q-values
  double confidence = 0.95;  // interval coverage
  int min_samples = 5;       // per side, below which the verdict is inconclusive
  // Defaults by metric name (glob), first match wins; then overrides by
  // "suite/workload/k:v/.../metric" glob, last match wins.
  std::vector<std::pair<std::string, Threshold>> defaults;
  std::vector<std::pair<std::string, Threshold>> overrides;

  static Policy Default();
  // Reads a policy JSON file (see baselines/policy.json); throws
  // std::invalid_argument naming the problem.
  static Policy Load(const std::string& path);
  Threshold For(const ResultRecord& r) const;
  // --per-control: judge throughput_per_control (kThroughputPerControl) at
  // 5% and report the raw throughput as informational, ahead of every
  // default (a policy file's overrides still apply).
  void JudgePerControl();
};

}  // namespace perfbench
