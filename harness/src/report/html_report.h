// perfbench report: one self-contained HTML file (no network): the data as
// JSON and the renderer inlined, plots drawn by dygraphs (Debian's
// libjs-dygraphs, its script and style read at run time and inlined).
// Sections: the newest run's fingerprint; per suite a headline view (amp
// speed-up and throughput by precision, ddp throughput and scaling efficiency
// against world size, dataloader throughput and wait share against workers,
// quant latency and accuracy by precision), each point the median with its
// 95% interval; with several runs of one machine, trend plots of the headline
// metrics with interval bands and change-point markers; the verdict table of
// a comparison; the procurement table when the runs come from several
// machines. The page records what it drew: <body data-plots="N"
// data-errors="..."> once rendered (for headless checks).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare.h"
#include "history.h"
#include "procure.h"

namespace perfbench {

struct ReportInput {
  std::string title;
  std::vector<RunData> runs;  // oldest first; the headline views use the newest
  std::vector<HistorySeries> trends;  // empty: no trend section
  size_t trend_runs = 0;              // the runs the trends come from
  std::optional<Comparison> comparison;
  std::string comparison_a, comparison_b;  // how A and B were named
  std::vector<Machine> machines;  // procurement (two or more machines), else empty
  std::vector<ProcureRow> procurement;
};

// The plots' specification: {"headline": [plot...], "trends": [plot...]},
// plot = {"id", "title", "x_label", "y_label", "categories" (null for a
// numeric x), "labels": [x, series...], "rows": [[x, [lo, median, hi] |
// null, ...]], "annotations": [{"series", "x", "shortText", "text"}]}.
nlohmann::json PlotSpecs(const ReportInput& in);

// The whole page. `dygraphs_js` and `dygraphs_css` are inlined as they are.
std::string RenderHtmlReport(const ReportInput& in, const std::string& dygraphs_js, const std::string& dygraphs_css);

// Debian's libjs-dygraphs (or $PERFBENCH_DYGRAPHS_DIR): the minified script
// and style; throws std::runtime_error naming what is missing.
std::pair<std::string, std::string> LoadDygraphs();

}  // namespace perfbench
