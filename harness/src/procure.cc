#include "procure.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <map>
#include <sstream>

#include "history.h"
#include "perfbench/statistics.h"
#include "report/format.h"
#include "two_level.h"

namespace perfbench {

std::string Machine::Describe() const {
  const auto& f = data.run.fingerprint;
  const auto gpus = f.value("gpu_names", nlohmann::json::array());
  if (gpus.is_array() && !gpus.empty() && gpus[0].is_string())
    return fmt::format("{} x{}", gpus[0].get<std::string>(), gpus.size());
  return fmt::format("{}, {} cores", f.value("cpu_model", std::string("unknown CPU")), f.value("cpu_cores", 0));
}

namespace {

bool IsThroughput(const std::string& metric) { return metric == "throughput" || metric == "step_throughput"; }
bool Usable(const ResultRecord& r) {
  return r.status == ResultStatus::kOk && !r.samples.empty() &&
         std::all_of(r.samples.begin(), r.samples.end(), [](double x) { return std::isfinite(x); });
}

// The value and 95% interval of a pooled result, processes first.
ProcureEntry Estimate(const ResultRecord& r) {
  ProcureEntry e;
  e.present = true;
  const auto groups = stats::Groups(r.samples, r.process);
  e.processes = groups.size();
  if (groups.size() >= 2) {
    const auto medians = stats::ProcessMedians(groups);
    const double n = static_cast<double>(medians.size());
    const double half = boost::math::quantile(boost::math::students_t(n - 1), 0.975) * stats::StdDev(medians) / std::sqrt(n);
    e.value = stats::Mean(medians);
    e.ci_low = e.value - half;
    e.ci_high = e.value + half;
    e.level = "processes";
  } else {
    e.value = stats::Median(r.samples);
    std::tie(e.ci_low, e.ci_high) = MedianInterval(r.samples);
    e.level = "within one process";
  }
  return e;
}

const ResultRecord* Find(const RunData& d, const std::string& key) {
  for (const auto& r : d.results)
    if (ResultKey(r) == key && Usable(r)) return &r;
  return nullptr;
}

// Samples per joule from the variant's energy_per_sample, or the given power.
void AddEnergy(ProcureEntry& e, const Machine& m, const ResultRecord& r) {
  ResultRecord probe = r;
  probe.metric = "energy_per_sample";
  if (const ResultRecord* j = Find(m.data, ResultKey(probe)); j && stats::Median(j->samples) > 0) {
    e.per_joule = 1 / stats::Median(j->samples);
    e.energy_source = "measured";
  } else if (m.watts > 0) {
    e.per_joule = e.value / m.watts;
    e.energy_source = "given power";
  }
}

}  // namespace

RunData PoolProcesses(const RunData& data) {
  RunData out = data;
  out.results.clear();
  std::map<std::string, size_t> index;
  for (const auto& r : data.results) {
    auto [it, fresh] = index.emplace(ResultKey(r), out.results.size());
    if (fresh) {
      out.results.push_back(r);
    } else if (!Usable(out.results[it->second])) {
      out.results[it->second] = r;  // a failed run of the label gives way to one that measured
    } else if (Usable(r)) {
      out.results[it->second].AppendProcesses(r);
    }
  }
  return out;
}

void RankWithTies(std::vector<ProcureEntry>& entries) {
  for (auto& e : entries) {
    if (!e.present) continue;
    e.rank = 1;
    for (const auto& other : entries)
      if (other.present && other.ci_low > e.ci_high) ++e.rank;  // clearly faster
  }
}

std::vector<ProcureRow> Procure(const std::vector<Machine>& in) {
  std::vector<Machine> machines = in;
  for (auto& m : machines) m.data = PoolProcesses(m.data);
  std::vector<ProcureRow> rows;
  std::map<std::string, size_t> index;  // variant -> row (one metric per variant)
  for (const auto& m : machines)
    for (const auto& r : m.data.results) {
      if (!IsThroughput(r.metric) || !Usable(r)) continue;
      const std::string variant = VariantKey(r.suite, r.workload, r.params);
      auto [it, fresh] = index.emplace(variant, rows.size());
      if (fresh)
        rows.push_back({r.suite, r.workload, r.metric, r.unit, r.params, {}});
      else if (r.metric == "throughput")
        rows[it->second].metric = "throughput";  // preferred over step_throughput
    }
  for (auto& row : rows) {
    ResultRecord probe;
    probe.suite = row.suite;
    probe.workload = row.workload;
    probe.params = row.params;
    probe.metric = row.metric;
    const std::string key = ResultKey(probe);
    for (const auto& m : machines) {
      const ResultRecord* r = Find(m.data, key);
      ProcureEntry e = r ? Estimate(*r) : ProcureEntry{};
      if (r && m.usd_per_hour > 0) e.per_usd = e.value * 3600 / m.usd_per_hour;
      if (r) AddEnergy(e, m, *r);
      row.entries.push_back(e);
    }
    const ProcureEntry& first = row.entries.front();
    for (auto& e : row.entries)
      if (e.present && first.present && first.value > 0) e.relative = e.value / first.value;
    RankWithTies(row.entries);
  }
  return rows;
}

nlohmann::json ProcureJson(const std::vector<Machine>& machines, const std::vector<ProcureRow>& rows) {
  nlohmann::json doc{{"schema_version", 1}, {"machines", nlohmann::json::array()}, {"rows", nlohmann::json::array()}};
  for (const auto& m : machines)
    doc["machines"].push_back({{"ref", m.ref},
                               {"profile_key", m.data.run.profile_key},
                               {"description", m.Describe()},
                               {"usd_per_hour", m.usd_per_hour > 0 ? nlohmann::json(m.usd_per_hour) : nlohmann::json()},
                               {"watts", m.watts > 0 ? nlohmann::json(m.watts) : nlohmann::json()}});
  for (const auto& row : rows) {
    nlohmann::json params = nlohmann::json::object(), entries = nlohmann::json::array();
    for (const auto& [k, v] : row.params.items()) params[k] = v;
    for (size_t i = 0; i < row.entries.size(); ++i) {
      const auto& e = row.entries[i];
      const auto opt = [](double x) { return x > 0 ? nlohmann::json(x) : nlohmann::json(); };
      entries.push_back(!e.present ? nlohmann::json()
                                   : nlohmann::json{{"machine", i},
                                                    {"value", e.value},
                                                    {"ci_low", e.ci_low},
                                                    {"ci_high", e.ci_high},
                                                    {"processes", e.processes},
                                                    {"level", e.level},
                                                    {"relative", opt(e.relative)},
                                                    {"per_usd", opt(e.per_usd)},
                                                    {"per_joule", opt(e.per_joule)},
                                                    {"energy_source", e.energy_source},
                                                    {"rank", e.rank}});
    }
    doc["rows"].push_back({{"suite", row.suite},
                           {"workload", row.workload},
                           {"params", params},
                           {"metric", row.metric},
                           {"unit", row.unit},
                           {"entries", entries}});
  }
  return doc;
}

namespace {

// An interval bound without the unit the value beside it names ("10.1k").
std::string Bare(double v, const std::string& unit) {
  std::string s = FormatValue(v, unit);
  const std::string suffix = " " + unit;
  if (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
    s.resize(s.size() - suffix.size());
  return s;
}

std::vector<std::string> Cells(const Machine& m, const ProcureEntry& e, const std::string& unit) {
  if (!e.present) return {"-", m.ref, m.Describe(), "not measured", "", "", "", ""};
  return {std::to_string(e.rank),
          m.ref,
          m.Describe(),
          FormatValue(e.value, unit) + " [" + Bare(e.ci_low, unit) + ", " + Bare(e.ci_high, unit) + "]" +
              (e.level == "processes" ? "" : " (within one process)"),
          e.relative > 0 ? fmt::format("{:.3g}x", e.relative) : "-",
          e.per_usd > 0 ? fmt::format("{:.4g}", e.per_usd) : "-",
          e.per_joule > 0 ? fmt::format("{:.4g} ({})", e.per_joule, e.energy_source) : "-",
          std::to_string(e.processes)};
}

const std::vector<std::string> kHeader{"rank", "machine", "hardware", "throughput [95% CI]",
                                       "vs first", "samples/USD", "samples/J", "processes"};

}  // namespace

std::string ProcureText(const std::vector<Machine>& machines, const std::vector<ProcureRow>& rows, bool markdown) {
  std::ostringstream o;
  for (const auto& row : rows) {
    const std::string name = VariantName(row.suite, row.workload, row.params);
    if (markdown) {
      o << "### " << name << " (" << row.metric << ")\n\n|";
      for (const auto& h : kHeader) o << " " << h << " |";
      o << "\n|";
      for (size_t i = 0; i < kHeader.size(); ++i) o << " --- |";
      o << "\n";
    } else {
      o << name << " (" << row.metric << ")\n";
    }
    TextTable t(kHeader);
    for (size_t i = 0; i < row.entries.size(); ++i) {
      auto cells = Cells(machines[i], row.entries[i], row.unit);
      if (!markdown) {
        t.AddRow(std::move(cells));
        continue;
      }
      o << "|";
      for (const auto& c : cells) o << " " << MdCell(c) << " |";
      o << "\n";
    }
    if (!markdown) t.Print(o);
    o << "\n";
  }
  o << "Rank: 1 + the machines clearly faster (their whole 95% interval above); overlapping intervals share "
       "a rank (tied).\n";
  return o.str();
}

}  // namespace perfbench
