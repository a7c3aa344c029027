// The ranked result of `perfbench advise`: one row per baseline variant and
// trial (see advice_plan.h), read from the trial's paired comparison with the
// baseline (ComparePaired on the rounds' process pairs, the candidate's
// results named as its baseline's): the change of the workload's primary
// metric with its paired interval and perfbench's verdict, and the change of
// its memory metric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "advice_plan.h"
#include "compare/compare.h"

namespace perfbench {

struct AdviceRow {
  std::string variant;  // the baseline's full name
  std::string knob, setting;
  std::string metric, unit;  // PrimaryMetric
  bool higher_is_better = true;
  double baseline_median = 0, candidate_median = 0;
  double ratio = 0, ci_low = 0, ci_high = 0;  // candidate / baseline, paired (Hodges-Lehmann)
  double gain = 0;  // the ratio oriented so that above 1 is better; 0 when not measured
  Verdict verdict = Verdict::kInconclusive;
  std::string memory_metric;  // MemoryMetric; empty when the workload has none
  double memory_ratio = 0, memory_low = 0, memory_high = 0;  // 0 when not measured
  Verdict memory_verdict = Verdict::kSkipped;
  size_t pairs = 0;
  std::string note;  // why a row is not measured (skipped here, failed), or the verdict's reason
  std::vector<int64_t> baseline_runs, candidate_runs;
  bool Measured() const { return gain > 0; }
};

// The rows of one trial, one per trial variant; `c` is the trial's
// comparison (absent metrics read as not measured).
std::vector<AdviceRow> AdviceRows(const Trial& trial, const Comparison& c);
// A row per baseline that cannot run here (knob and setting "-", skipped).
std::vector<AdviceRow> SkippedBaselineRows(const AdvicePlan& plan);
// Measured rows first, by gain (best first; ties by variant and setting),
// then the others in their order.
void RankAdvice(std::vector<AdviceRow>& rows);

// A ranked table (markdown: a Markdown table) with a line on how to read it.
std::string AdviceText(const std::vector<AdviceRow>& rows, int rounds, bool markdown);
// {"schema_version": 1, "rounds", "rows": [{"rank", "variant", "knob",
// "setting", "metric", "unit", "higher_is_better", "baseline_median",
// "candidate_median", "ratio", "ci_low", "ci_high", "gain", "verdict",
// "pairs", "memory": {"metric", "ratio", "ci_low", "ci_high", "verdict"} |
// null, "note", "baseline_runs", "candidate_runs"}]}; rank 0 for rows not
// measured, ratios null there.
nlohmann::json AdviceJson(const std::vector<AdviceRow>& rows, int rounds);

}  // namespace perfbench
