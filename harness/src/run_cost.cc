#include "run_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace perfbench {
namespace {

constexpr const char* kWorkload = "time";
constexpr const char* kAll = "all";

// The metrics, in order, with the phase each reads.
const std::vector<std::pair<const char*, double PhaseTimes::*>>& Phases() {
  static const std::vector<std::pair<const char*, double PhaseTimes::*>> phases = {
      {"setup_time", &PhaseTimes::setup_s},
      {"warmup_time", &PhaseTimes::warmup_s},
      {"timed_time", &PhaseTimes::timed_s},
      {"other_time", &PhaseTimes::other_s},
      {"wall_time", &PhaseTimes::wall_s}};
  return phases;
}

void AddRecords(const std::string& suite, const PhaseTimes& t, int process, std::vector<ResultRecord>* out) {
  for (const auto& [metric, field] : Phases()) {
    ResultRecord r;
    r.suite = kHarnessSuite;
    r.workload = kWorkload;
    r.params = Params{{"suite", suite}};
    r.metric = metric;
    r.unit = "s";
    r.higher_is_better = false;
    r.samples = {t.*field};
    r.process = {process};
    out->push_back(std::move(r));
  }
}

}  // namespace

std::vector<ResultRecord> PhaseRecords(const std::map<std::string, PhaseTimes>& by_suite, int process) {
  std::vector<ResultRecord> out;
  if (by_suite.empty()) return out;
  PhaseTimes all;
  for (const auto& [suite, t] : by_suite) {
    AddRecords(suite, t, process, &out);
    all.Add(t);
  }
  AddRecords(kAll, all, process, &out);
  return out;
}

std::map<std::string, PhaseTimes> PhaseTotals(const std::vector<ResultRecord>& results) {
  std::map<std::string, PhaseTimes> out;
  for (const auto& r : results) {
    if (r.suite != kHarnessSuite || r.workload != kWorkload) continue;
    for (const auto& [metric, field] : Phases()) {
      if (r.metric != metric) continue;
      double sum = 0;
      for (double x : r.samples) sum += x;
      out[r.params.Get("suite")].*field += sum;
    }
  }
  return out;
}

namespace {

std::string Parts(const PhaseTimes& t) {
  return fmt::format("set-up {:.1f} s, warm-up {:.1f} s, timed {:.1f} s, other {:.1f} s", t.setup_s, t.warmup_s,
                     t.timed_s, t.other_s);
}

}  // namespace

std::string PhaseSummary(const std::map<std::string, PhaseTimes>& totals, double wall_s, int processes) {
  const auto all = totals.find(kAll);
  if (all == totals.end()) return "";
  const PhaseTimes& a = all->second;
  std::string out = fmt::format("time: {:.1f} s in {} process{}: {}, outside the suites {:.1f} s (start-up, store)\n",
                                wall_s, processes, processes == 1 ? "" : "es", Parts(a),
                                std::max(0.0, wall_s - a.wall_s));
  std::vector<std::pair<std::string, PhaseTimes>> suites;
  for (const auto& [suite, t] : totals)
    if (suite != kAll) suites.emplace_back(suite, t);
  std::sort(suites.begin(), suites.end(), [](const auto& x, const auto& y) { return x.second.wall_s > y.second.wall_s; });
  for (const auto& [suite, t] : suites)
    out += fmt::format("  {:<11} {:6.1f} s: {}\n", suite, t.wall_s, Parts(t));
  return out;
}

}  // namespace perfbench
