#include "history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "perfbench/statistics.h"
#include "report/format.h"

namespace perfbench {

std::string VariantName(const std::string& suite, const std::string& workload, const Params& params) {
  // Appends, not "/" + Encode(): GCC 12 warns falsely on that (PR 105651).
  std::string name = suite;
  name += '/';
  name += workload;
  if (!params.empty()) {
    name += '/';
    name += params.Encode();
  }
  return name;
}

std::string HistorySeries::Name() const { return fmt::format("{} {}", VariantName(suite, workload, params), metric); }

std::pair<double, double> MedianInterval(std::vector<double> v, double confidence) {
  if (v.empty()) return {0, 0};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  // Coverage of [x(j+1), x(n-j)] is 1 - 2 P(X <= j), X ~ Binomial(n, 1/2):
  // the largest j with P(X <= j) <= (1 - confidence) / 2, by the recurrence
  // C(n, j + 1) = C(n, j) (n - j) / (j + 1).
  // The pmf in log space: 2^-n underflows past n = 1074.
  const double tail = (1 - confidence) / 2, dn = static_cast<double>(n);
  double cdf = 0;
  size_t k = 0;  // 0-based lower bound; 0 (the range) when even P(X = 0) is too large
  for (size_t j = 0; j < n / 2; ++j) {
    const double dj = static_cast<double>(j);
    cdf += std::exp(std::lgamma(dn + 1) - std::lgamma(dj + 1) - std::lgamma(dn - dj + 1) - dn * std::log(2.0));
    if (cdf > tail) break;
    k = j;
  }
  return {v[k], v[n - 1 - k]};
}

namespace {

bool Selected(const ResultRecord& r, const HistorySelection& s, const std::regex& re) {
  const bool named = std::find(s.suites.begin(), s.suites.end(), r.suite) != s.suites.end();
  if (s.suites.empty() ? AroundRun(r.suite) : !named) return false;
  if (!s.metric.empty() && r.metric != s.metric) return false;
  const std::string name = VariantName(r.suite, r.workload, r.params);
  return s.filter.empty() || std::regex_search(name, re);
}

std::regex Compile(const std::string& filter) {
  try {
    return std::regex(filter.empty() ? "." : filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--filter '" + filter + "' is not a valid regex: " + e.what());
  }
}

HistoryPoint PointOf(const RunRecord& run, const ResultRecord& r) {
  HistoryPoint p{run.id, run.started_at, stats::Median(r.samples), 0, 0, r.samples.size()};
  std::tie(p.ci_low, p.ci_high) = MedianInterval(r.samples);
  return p;
}

}  // namespace

std::vector<HistorySeries> BuildHistory(const std::vector<std::pair<RunRecord, std::vector<ResultRecord>>>& runs,
                                        const HistorySelection& selection, const ChangePointOptions& options) {
  const std::regex re = Compile(selection.filter);
  std::vector<HistorySeries> out;
  std::map<std::string, size_t> index;
  for (const auto& [run, results] : runs) {
    for (const auto& r : results) {
      if (r.status != ResultStatus::kOk || r.samples.empty() || !Selected(r, selection, re)) continue;
      auto [it, fresh] = index.emplace(ResultKey(r), out.size());
      if (fresh) out.push_back({r.suite, r.workload, r.metric, r.unit, r.params, r.higher_is_better, {}, {}});
      out[it->second].points.push_back(PointOf(run, r));
    }
  }
  for (auto& s : out) {
    std::vector<double> medians;
    for (const auto& p : s.points) medians.push_back(p.median);
    s.change_points = FindChangePoints(medians, options);
  }
  return out;
}

nlohmann::json HistoryJson(const std::vector<HistorySeries>& series) {
  nlohmann::json doc{{"schema_version", 1}, {"series", nlohmann::json::array()}};
  for (const auto& s : series) {
    nlohmann::json params = nlohmann::json::object(), points = nlohmann::json::array(),
                   changes = nlohmann::json::array();
    for (const auto& [k, v] : s.params.items()) params[k] = v;
    for (const auto& p : s.points)
      points.push_back({{"run_id", p.run_id},
                        {"started_at", p.started_at},
                        {"median", p.median},
                        {"ci_low", p.ci_low},
                        {"ci_high", p.ci_high}});
    for (const auto& c : s.change_points)
      changes.push_back({{"run_id", s.points[c.index].run_id},
                         {"index", c.index},
                         {"change", c.change},
                         {"p_value", c.p_value},
                         {"mean_before", c.mean_before},
                         {"mean_after", c.mean_after}});
    doc["series"].push_back({{"suite", s.suite},
                             {"workload", s.workload},
                             {"params", params},
                             {"metric", s.metric},
                             {"unit", s.unit},
                             {"higher_is_better", s.higher_is_better},
                             {"points", points},
                             {"change_points", changes}});
  }
  return doc;
}

std::string HistoryTable(const std::vector<HistorySeries>& series) {
  std::ostringstream o;
  for (const auto& s : series) {
    o << s.Name() << (s.higher_is_better ? " (higher is better)" : " (lower is better)") << "\n";
    TextTable t({"run", "started", "median", "95% CI", "n", "change point"});
    for (size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i];
      std::string mark;
      for (const auto& c : s.change_points)
        if (c.index == i)
          mark = fmt::format("{} {:+.1f}% (p={:.2g}){}", s.Regressed(c) ? "worse" : "better", c.change * 100,
                             c.p_value, "");
      t.AddRow({std::to_string(p.run_id), p.started_at, FormatValue(p.median, s.unit),
                fmt::format("[{}, {}]", FormatValue(p.ci_low, s.unit), FormatValue(p.ci_high, s.unit)),
                std::to_string(p.n), mark});
    }
    t.Print(o);
    o << "\n";
  }
  return o.str();
}

}  // namespace perfbench
