// perfbench history: per result (variant and metric), the series of run
// medians over the runs given (one hardware profile, oldest first), each with
// the distribution-free 95% interval of its median, and the series' change
// points (changepoint.h) on those medians: runs are separate processes, so
// their medians are the independent samples of a series.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "changepoint.h"
#include "perfbench/params.h"
#include "store/records.h"

namespace perfbench {

struct HistoryPoint {
  int64_t run_id = 0;
  std::string started_at;
  double median = 0, ci_low = 0, ci_high = 0;
  size_t n = 0;
};

struct HistorySeries {
  std::string suite, workload, metric, unit;
  Params params;
  bool higher_is_better = false;
  std::vector<HistoryPoint> points;
  std::vector<ChangePoint> change_points;  // indices into points
  std::string Name() const;                // "amp/mlp/precision:fp32/size:quick throughput"
  // A change point that moves the metric the worse way.
  bool Regressed(const ChangePoint& c) const { return higher_is_better ? c.change < 0 : c.change > 0; }
};

// "suite/workload/k1:v1/k2:v2" (params in their declared order).
std::string VariantName(const std::string& suite, const std::string& workload, const Params& params);

// What history selects: suites (empty: all but the control), an ECMAScript
// regex searched in "suite/workload/params", a metric (empty: all).
struct HistorySelection {
  std::vector<std::string> suites;
  std::string filter;
  std::string metric;
};

// The distribution-free interval of the median at `confidence`: order
// statistics x(k) and x(n+1-k), k the largest with P(Binomial(n, 1/2) < k)
// <= (1 - confidence) / 2; with n <= 5 no such k exists and the range is
// returned, whose coverage is only 1 - 2^(1-n) (94% at n = 5).
std::pair<double, double> MedianInterval(std::vector<double> v, double confidence = 0.95);

// One series per result key with samples in any of `runs` (oldest first),
// in the order first seen; a run without the result leaves no point.
// Change points found with `options`. Throws std::invalid_argument for a
// malformed filter.
std::vector<HistorySeries> BuildHistory(const std::vector<std::pair<RunRecord, std::vector<ResultRecord>>>& runs,
                                        const HistorySelection& selection, const ChangePointOptions& options);

// {"schema_version": 1, "series": [{"suite", "workload", "params", "metric",
// "unit", "higher_is_better", "points": [{"run_id", "started_at", "median",
// "ci_low", "ci_high"}], "change_points": [{"run_id", "index", "change",
// "p_value", "mean_before", "mean_after"}]}]}
nlohmann::json HistoryJson(const std::vector<HistorySeries>& series);
// A block per series: the points oldest first, a marker at each change point.
std::string HistoryTable(const std::vector<HistorySeries>& series);

}  // namespace perfbench
