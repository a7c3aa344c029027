#include "compare/gate_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "perfbench/statistics.h"
#include "two_level.h"

namespace perfbench {
namespace {

struct Spread {
  double log_sd = 0;
  size_t processes = 0;  // the fewest a judged metric has
};

Spread BaselineSpread(const RunData& b, const Policy& policy) {
  std::map<std::string, ResultRecord> pooled;
  for (const auto& r : b.results) {
    if (r.status != ResultStatus::kOk || r.samples.empty() || policy.For(r).informational) continue;
    auto [it, fresh] = pooled.emplace(ResultKey(r), r);
    if (!fresh) it->second.AppendProcesses(r);
  }
  Spread s;
  std::vector<double> sds;
  for (const auto& [key, r] : pooled) {
    const auto medians = stats::ProcessMedians(stats::Groups(r.samples, r.process));
    s.processes = s.processes == 0 ? medians.size() : std::min(s.processes, medians.size());
    std::vector<double> logs;
    for (double m : medians)
      if (m > 0) logs.push_back(std::log(m));
    if (logs.size() >= 2) sds.push_back(stats::StdDev(logs));
  }
  if (!sds.empty()) s.log_sd = stats::Quantile(sds, 0.75);
  return s;
}

int FirstRound(const Spread& s, double limit, std::string* why) {
  if (s.processes < 2 || !(s.log_sd > 0)) {
    *why = "the baseline has one process per metric: no between-process spread to size by";
    return 3;
  }
  const double room = std::pow(limit / (2 * 2.5 * s.log_sd), 2) - 1.0 / static_cast<double>(s.processes);
  const int n = room > 0 ? static_cast<int>(std::ceil(1 / room)) : GatePlan::kMaxFirst;
  *why = fmt::format("baseline: {} processes, between-process spread {:.1f}%, limit {:.3g}%", s.processes,
                     100 * s.log_sd, 100 * limit);
  return std::clamp(n, GatePlan::kMinFirst, GatePlan::kMaxFirst);
}

double MedianRelativeLimit(const RunData& baseline, const Policy& policy) {
  std::vector<double> limits;
  for (const auto& r : baseline.results)
    if (auto t = policy.For(r); !t.absolute && !t.informational) limits.push_back(t.value);
  return limits.empty() ? 0.05 : stats::Median(limits);
}

}  // namespace

int GateRepetitions(int baseline_repetitions) { return std::max(2, (baseline_repetitions + 3) / 4); }

GatePlan PlanGate(const RunData& baseline, int baseline_repetitions, const Policy& policy, int first,
                  int max_processes) {
  GatePlan p;
  p.repetitions = GateRepetitions(baseline_repetitions);
  p.first = FirstRound(BaselineSpread(baseline, policy), MedianRelativeLimit(baseline, policy), &p.sizing);
  if (first != 0) {
    p.first = first;
    p.sizing = "--processes";
  }
  if (p.first < 1) throw std::invalid_argument("--processes must be at least 1");
  p.max_processes = max_processes > 0 ? max_processes : p.first + GatePlan::kExtra;
  if (p.max_processes < p.first)
    throw std::invalid_argument("--max-processes must be at least the first round's " + std::to_string(p.first));
  p.extra_rounds = (p.max_processes - 1) / p.first;
  const int looks = 1 + p.extra_rounds;
  p.policy = policy;
  p.policy.alpha = policy.alpha / looks;
  p.policy.confidence = 1 - (1 - policy.confidence) / looks;
  return p;
}

int NextRound(const GatePlan& plan, int processes_so_far) {
  return std::max(0, std::min(plan.first, plan.max_processes - processes_so_far));
}

}  // namespace perfbench
