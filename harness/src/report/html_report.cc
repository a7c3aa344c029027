#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "perfbench/statistics.h"
#include "report/format.h"

namespace perfbench {
namespace {

// What each suite's headline view plots: metrics against one param.
struct Headline {
  const char* suite;
  const char* x;
  std::vector<const char*> metrics;
};
const std::vector<Headline>& Headlines() {
  static const std::vector<Headline> h = {
      {"amp", "precision", {"speedup", "throughput"}},
      {"ddp", "world_size", {"throughput", "scaling_efficiency", "busbw"}},
      {"dataloader", "workers", {"step_throughput", "data_wait_share", "throughput"}},
      {"quant", "precision", {"latency_p50", "accuracy"}},
      {"model", "model", {"throughput", "latency_p50"}},
  };
  return h;
}

bool IsNumber(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && *end == 0;
}

nlohmann::json Bar(const std::vector<double>& samples) {
  const auto [lo, hi] = MedianInterval(samples);
  return {lo, stats::Median(samples), hi};
}

// One headline plot: `metric` of the suite's results against param `x`, a
// series per workload and remaining params (size left out).
std::optional<nlohmann::json> HeadlinePlot(const RunData& run, const Headline& h, const std::string& metric) {
  std::vector<std::string> xs, series;
  std::map<std::pair<std::string, std::string>, nlohmann::json> cell;  // (x, series) -> bar
  std::string unit;
  for (const auto& r : run.results) {
    if (r.suite != h.suite || r.metric != metric || !r.params.Has(h.x) || r.status != ResultStatus::kOk ||
        r.samples.empty())
      continue;
    const std::string x = r.params.Get(h.x), rest = r.params.Without(h.x).Without("size").Encode();
    const std::string name = r.workload + (rest.empty() ? "" : " " + rest);
    if (std::find(xs.begin(), xs.end(), x) == xs.end()) xs.push_back(x);
    if (std::find(series.begin(), series.end(), name) == series.end()) series.push_back(name);
    cell[{x, name}] = Bar(r.samples);
    unit = r.unit;
  }
  if (xs.empty()) return std::nullopt;
  const bool numeric = std::all_of(xs.begin(), xs.end(), IsNumber);
  if (numeric)
    std::sort(xs.begin(), xs.end(), [](const std::string& a, const std::string& b) { return std::stod(a) < std::stod(b); });
  nlohmann::json p{{"id", fmt::format("h-{}-{}", h.suite, metric)},
                   {"title", fmt::format("{}: {} by {}", h.suite, metric, h.x)},
                   {"x_label", h.x},
                   {"y_label", metric + " (" + unit + ")"},
                   {"categories", numeric ? nlohmann::json() : nlohmann::json(xs)},
                   {"labels", nlohmann::json::array({h.x})},
                   {"rows", nlohmann::json::array()},
                   {"annotations", nlohmann::json::array()}};
  for (const auto& s : series) p["labels"].push_back(s);
  for (size_t i = 0; i < xs.size(); ++i) {
    nlohmann::json row = nlohmann::json::array({numeric ? std::stod(xs[i]) : static_cast<double>(i + 1)});
    for (const auto& s : series) {
      auto it = cell.find({xs[i], s});
      row.push_back(it == cell.end() ? nlohmann::json() : it->second);
    }
    p["rows"].push_back(row);
  }
  return p;
}

bool TrendMetric(const std::string& metric) {
  static const std::set<std::string> m = {"throughput",  "step_throughput", "speedup",  "scaling_efficiency", "busbw",
                                          "data_wait_share", "comm_share", "latency_p50", "accuracy", "flops",
                                          "bytes_per_second"};
  return m.count(metric) > 0;
}

nlohmann::json TrendPlot(const HistorySeries& s, size_t index) {
  nlohmann::json p{{"id", fmt::format("t-{}", index)},
                   {"title", s.Name()},
                   {"x_label", "run"},
                   {"y_label", s.metric + " (" + s.unit + ")"},
                   {"categories", nlohmann::json::array()},
                   {"labels", {"run", s.metric}},
                   {"rows", nlohmann::json::array()},
                   {"annotations", nlohmann::json::array()}};
  for (size_t i = 0; i < s.points.size(); ++i) {
    const auto& pt = s.points[i];
    p["categories"].push_back(fmt::format("#{}", pt.run_id));
    p["rows"].push_back({static_cast<double>(i + 1), {pt.ci_low, pt.median, pt.ci_high}});
  }
  for (const auto& c : s.change_points)
    p["annotations"].push_back({{"series", s.metric},
                                {"x", static_cast<double>(c.index + 1)},
                                {"shortText", s.Regressed(c) ? "worse" : "better"},
                                {"text", fmt::format("change point at run #{}: {:+.1f}% (p={:.2g})",
                                                     s.points[c.index].run_id, c.change * 100, c.p_value)}});
  return p;
}

}  // namespace

nlohmann::json PlotSpecs(const ReportInput& in) {
  nlohmann::json specs{{"headline", nlohmann::json::array()}, {"trends", nlohmann::json::array()}};
  if (!in.runs.empty())
    for (const auto& h : Headlines())
      for (const char* m : h.metrics)
        if (auto p = HeadlinePlot(in.runs.back(), h, m)) specs["headline"].push_back(*p);
  size_t i = 0;
  for (const auto& s : in.trends)
    if (TrendMetric(s.metric) && s.points.size() >= 2) specs["trends"].push_back(TrendPlot(s, i++));
  return specs;
}

namespace {

std::string Esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// `text` with every `from` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}
// JSON safe inside a <script> element: "<" only occurs in its strings,
// where "\u003c" reads the same (so no "</script" and no "<!--").
std::string JsonInScript(const std::string& json) { return ReplaceAll(json, "<", "\\u003c"); }
// A script safe inside a <script> element: only "</script" ends one (a
// regex literal such as /</g must stay as it is).
std::string ScriptInScript(const std::string& js) { return ReplaceAll(js, "</script", "<\\/script"); }

std::string Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream o;
  o << "<table>";
  if (std::any_of(header.begin(), header.end(), [](const std::string& h) { return !h.empty(); })) {
    o << "<thead><tr>";
    for (const auto& h : header) o << "<th>" << Esc(h) << "</th>";
    o << "</tr></thead>";
  }
  o << "<tbody>";
  for (const auto& r : rows) {
    o << "<tr>";
    for (const auto& c : r) o << "<td>" << Esc(c) << "</td>";
    o << "</tr>";
  }
  o << "</tbody></table>";
  return o.str();
}

std::string FingerprintTable(const RunData& run) {
  std::vector<std::vector<std::string>> rows{{"run", run.run.label.empty() ? std::to_string(run.run.id)
                                                                          : fmt::format("{} ({})", run.run.id, run.run.label)},
                                             {"started", run.run.started_at}};
  for (const char* k : {"cpu_model", "cpu_cores", "memory_gib", "gpu_names", "torch_version", "cuda_runtime", "os",
                        "kernel", "perfbench_version", "git_sha", "profile_key", "hostname"})
    if (run.run.fingerprint.contains(k)) {
      const auto& v = run.run.fingerprint[k];
      rows.push_back({k, v.is_string() ? v.get<std::string>() : v.dump()});
    }
  return Table({"", ""}, rows);
}

std::string ComparisonSection(const ReportInput& in) {
  if (!in.comparison) return "";
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : in.comparison->metrics) {
    if (m.verdict == Verdict::kSkipped) continue;
    rows.push_back({VariantName(m.suite, m.workload, m.params), m.metric,
                    FormatValue(m.baseline_median, m.unit), FormatValue(m.candidate_median, m.unit),
                    m.tested ? fmt::format("{:+.1f}% [{:+.1f}%, {:+.1f}%]", (m.ratio - 1) * 100, (m.ci_low - 1) * 100,
                                           (m.ci_high - 1) * 100)
                             : "-",
                    std::string(ToString(m.verdict)), m.reason});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a[5] == "regression" && b[5] != "regression"; });
  return fmt::format("<h2>Comparison: {} against {}: {}</h2>", Esc(in.comparison_b), Esc(in.comparison_a),
                     ToString(in.comparison->verdict)) +
         Table({"variant", "metric", "A", "B", "change [95% CI]", "verdict", "reason"}, rows);
}

std::string ProcurementSection(const ReportInput& in) {
  if (in.machines.size() < 2) return "";
  std::ostringstream o;
  o << "<h2>Procurement</h2><p>Ranked by throughput; overlapping 95% intervals share a rank.</p>";
  for (const auto& row : in.procurement) {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < row.entries.size(); ++i) {
      const auto& e = row.entries[i];
      if (!e.present) continue;
      rows.push_back({std::to_string(e.rank), in.machines[i].ref, in.machines[i].Describe(),
                      FormatValue(e.value, row.unit) + " [" + FormatValue(e.ci_low, row.unit) + ", " +
                          FormatValue(e.ci_high, row.unit) + "]",
                      e.relative > 0 ? fmt::format("{:.3g}x", e.relative) : "-",
                      e.per_usd > 0 ? fmt::format("{:.4g}", e.per_usd) : "-",
                      e.per_joule > 0 ? fmt::format("{:.4g}", e.per_joule) : "-"});
    }
    o << "<h3>" << Esc(fmt::format("{} {}", VariantName(row.suite, row.workload, row.params), row.metric)) << "</h3>"
      << Table({"rank", "machine", "hardware", "throughput [95% CI]", "vs first", "samples/USD", "samples/J"}, rows);
  }
  return o.str();
}

constexpr const char* kStyle = R"CSS(
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
.plots{display:flex;flex-wrap:wrap;gap:12px}
.plot{border:1px solid #eee;padding:6px}.plot h3{font-size:.9em;margin:0 0 4px 0;max-width:520px}
.graph{width:520px;height:260px}
)CSS";

// Draws every plot of the embedded data; records the count and any error on <body>.
constexpr const char* kRenderer = R"JS(
(function () {
  var errors = [];
  function note() { document.body.setAttribute('data-errors', errors.join(' | ')); }
  window.addEventListener('error', function (e) { errors.push(String(e.message)); note(); });
  var data = JSON.parse(document.getElementById('perfbench-data').textContent);
  var drawn = 0;
  // dygraphs writes axis labels, tick labels and the legend's x value as
  // HTML: the data's text (units, param values) is escaped first.
  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }
  // Categories are not a continuum: a point per category with its interval
  // as a whisker, no line and no band between them.
  function whiskers(e) {
    var ctx = e.drawingContext;
    ctx.strokeStyle = e.color;
    ctx.lineWidth = 1.5;
    e.points.forEach(function (pt) {
      if (pt.y === null || isNaN(pt.canvasy) || isNaN(pt.y_top) || isNaN(pt.y_bottom)) return;
      var top = e.plotArea.h * pt.y_top + e.plotArea.y, bottom = e.plotArea.h * pt.y_bottom + e.plotArea.y;
      ctx.beginPath();
      ctx.moveTo(pt.canvasx, top); ctx.lineTo(pt.canvasx, bottom);
      ctx.moveTo(pt.canvasx - 5, top); ctx.lineTo(pt.canvasx + 5, top);
      ctx.moveTo(pt.canvasx - 5, bottom); ctx.lineTo(pt.canvasx + 5, bottom);
      ctx.stroke();
    });
  }
  function plot(container, p) {
    var box = document.createElement('div');
    box.className = 'plot';
    var h = document.createElement('h3');
    h.textContent = p.title;
    box.appendChild(h);
    var div = document.createElement('div');
    div.id = p.id;
    div.className = 'graph';
    box.appendChild(div);
    container.appendChild(box);
    var cats = p.categories ? p.categories.map(esc) : null;
    var opts = {labels: p.labels.map(esc), customBars: true, drawPoints: true, pointSize: 3, xlabel: esc(p.x_label),
                ylabel: esc(p.y_label), legend: 'always', labelsSeparateLines: true, width: 520, height: 260,
                axes: {y: {axisLabelWidth: 60, axisLabelFormatter: function (v) { return String(Number(v.toPrecision(4))); }}}};
    if (cats && p.x_label !== 'run') {
      opts.plotter = [whiskers, Dygraph.Plotters.linePlotter];
      opts.strokeWidth = 0;
      opts.pointSize = 4;
    }
    if (cats) {
      opts.axes.x = {axisLabelFormatter: function (v) { return v === Math.round(v) && cats[v - 1] ? cats[v - 1] : ''; },
                     valueFormatter: function (v) { return cats[v - 1] || String(v); }, pixelsPerLabel: 40};
      opts.dateWindow = [0.5, cats.length + 0.5];
    }
    var g = new Dygraph(div, p.rows, opts);
    p.annotations.forEach(function (a) { a.series = esc(a.series); a.shortText = esc(a.shortText); a.text = esc(a.text); });
    if (p.annotations.length) g.ready(function () { g.setAnnotations(p.annotations); });
    drawn++;
  }
  try {
    data.headline.forEach(function (p) { plot(document.getElementById('headline'), p); });
    data.trends.forEach(function (p) { plot(document.getElementById('trends'), p); });
  } catch (e) {
    errors.push(String(e));
  }
  document.body.setAttribute('data-plots', String(drawn));
  note();
})();
)JS";

}  // namespace

std::string RenderHtmlReport(const ReportInput& in, const std::string& dygraphs_js, const std::string& dygraphs_css) {
  const nlohmann::json specs = PlotSpecs(in);
  std::ostringstream o;
  o << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << Esc(in.title) << "</title>\n<style>"
    << dygraphs_css << kStyle << "</style>\n<script>" << ScriptInScript(dygraphs_js) << "</script>\n</head><body>\n<h1>"
    << Esc(in.title) << "</h1>\n";
  if (!in.runs.empty()) o << "<h2>Machine and software</h2>" << FingerprintTable(in.runs.back()) << "\n";
  o << "<h2>Headline</h2><p>Newest run; each point the median with its 95% interval.</p><div id=\"headline\" "
       "class=\"plots\"></div>\n";
  if (!specs["trends"].empty())
    o << "<h2>Trends</h2><p>" << in.trend_runs
      << " runs of one machine, oldest first; bands are the 95% intervals of each run's median; markers are change "
         "points (E-divisive means, as Apache Otava).</p><div id=\"trends\" class=\"plots\"></div>\n";
  else
    o << "<div id=\"trends\"></div>\n";
  o << ComparisonSection(in) << ProcurementSection(in);
  o << "\n<script type=\"application/json\" id=\"perfbench-data\">" << JsonInScript(specs.dump())
    << "</script>\n<script>" << kRenderer << "</script>\n</body></html>\n";
  return o.str();
}

std::pair<std::string, std::string> LoadDygraphs() {
  const char* env = std::getenv("PERFBENCH_DYGRAPHS_DIR");
  const std::string dir = env && *env ? env : "/usr/share/javascript/dygraphs";
  const auto slurp = [&](std::initializer_list<const char*> names) -> std::string {
    for (const char* n : names) {
      std::ifstream in(dir + "/" + n, std::ios::binary);
      if (!in) continue;
      std::ostringstream s;
      s << in.rdbuf();
      return s.str();
    }
    throw std::runtime_error("dygraphs not found in " + dir +
                             " (apt-get install libjs-dygraphs, or set PERFBENCH_DYGRAPHS_DIR)");
  };
  return {slurp({"dygraph.min.js", "dygraph.js"}), slurp({"dygraph.min.css", "dygraph.css"})};
}

}  // namespace perfbench
