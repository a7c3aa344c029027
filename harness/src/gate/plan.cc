#include "gate/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "compare/detectable.h"
#include "perfbench/statistics.h"
#include "two_level.h"

namespace perfbench {
namespace {

// What the baseline says about one judged metric, on the log scale.
struct MetricSpread {
  std::string key, name;
  double var_baseline = 0;  // of its process medians' logs
  size_t processes = 0;
  stats::VarianceComponents components;  // of log samples
  double limit = 0, policy_mde = 0;
  bool higher_is_better = false;
};

double Variance(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double sd = stats::StdDev(v);
  return sd * sd;
}

std::vector<MetricSpread> Spreads(const RunData& b, const Policy& policy) {
  std::map<std::string, ResultRecord> pooled;
  for (const auto& r : b.results) {
    const Threshold t = policy.For(r);
    if (AroundRun(r.suite) || r.status != ResultStatus::kOk || r.samples.empty() || t.informational || t.absolute)
      continue;
    if (std::any_of(r.samples.begin(), r.samples.end(), [](double x) { return !(x > 0); })) continue;
    auto [it, fresh] = pooled.emplace(ResultKey(r), r);
    if (!fresh) it->second.AppendProcesses(r);
  }
  std::vector<MetricSpread> out;
  for (const auto& [key, r] : pooled) {
    MetricSpread s;
    s.key = key;
    s.name = r.suite + "/" + r.workload + "/" + r.params.Encode() + " " + r.metric;
    const auto groups = stats::Groups(stats::Logs(r.samples), r.process);
    const auto medians = stats::ProcessMedians(groups);
    s.processes = medians.size();
    s.var_baseline = Variance(medians);
    s.components = stats::EstimateComponents(groups);
    const Threshold t = policy.For(r);
    s.limit = t.value;
    s.higher_is_better = r.higher_is_better;
    s.policy_mde = t.Mde();
    out.push_back(std::move(s));
  }
  return out;
}

// The relative detectable effect of `s` with n candidate processes of `reps`.
double MdeWith(const MetricSpread& s, int n, int reps, size_t family, double alpha) {
  const double var_c = s.components.between + (s.components.has_within ? s.components.within / reps : 0);
  const StandardError e = DifferenceStandardError(s.var_baseline, s.processes, var_c, static_cast<size_t>(n));
  if (!(e.df > 0)) return INFINITY;
  return RelativeRegression(DetectableShift(e.se, e.df, std::log1p(s.limit), family, alpha, kMdePower),
                            s.higher_is_better);
}

// The fewest processes in [kMinFirst, cap] reaching the policy's mde for
// every metric at `alpha`; fills p->metrics.
int SizeFirst(const std::vector<MetricSpread>& spreads, int cap, double alpha, GatePlan* p) {
  int first = GatePlan::kMinFirst;
  p->metrics.clear();
  for (const auto& s : spreads) {
    MetricPlan m{s.key, s.name, 0, 0, s.policy_mde};
    for (int n = GatePlan::kMinFirst; n <= cap; ++n)
      if (MdeWith(s, n, p->repetitions, spreads.size(), alpha) <= s.policy_mde) {
        m.processes = n;
        break;
      }
    first = std::max(first, m.processes == 0 ? cap : m.processes);
    p->metrics.push_back(std::move(m));
  }
  return std::min(first, cap);
}

void FillMdes(const std::vector<MetricSpread>& spreads, double alpha, GatePlan* p) {
  for (size_t i = 0; i < spreads.size(); ++i)
    p->metrics[i].mde_at_first = MdeWith(spreads[i], p->first, p->repetitions, spreads.size(), alpha);
  std::stable_sort(p->metrics.begin(), p->metrics.end(), [](const MetricPlan& a, const MetricPlan& b) {
    return a.mde_at_first / a.policy_mde > b.mde_at_first / b.policy_mde;
  });
}

int Cap(const PlanLimits& l, int first_flag) {
  int cap = l.max_processes > 0 ? l.max_processes : std::max(GatePlan::kDefaultMax, first_flag);
  if (l.max_seconds > 0 && l.process_seconds > 0)
    cap = std::min(cap, std::max(1, static_cast<int>(l.max_seconds / l.process_seconds)));
  return cap;
}

void SetLooks(GatePlan* p, const Policy& policy, int looks) {
  p->extra_rounds = looks - 1;
  p->policy = policy;
  p->policy.alpha = policy.alpha / looks;
  p->policy.confidence = 1 - (1 - policy.confidence) / looks;
}

}  // namespace

int GateRepetitions(int baseline_repetitions) { return std::max(2, (baseline_repetitions + 3) / 4); }

size_t GatePlan::Unreachable() const {
  return static_cast<size_t>(std::count_if(metrics.begin(), metrics.end(), [](const MetricPlan& m) {
    return !(m.mde_at_first <= m.policy_mde);
  }));
}

std::string GatePlan::Describe() const {
  std::string s = fmt::format("plan: {} processes x {} repetitions first ({}), up to {} in {} look(s) at alpha {:.3g} "
                              "each (Bonferroni: the policy's alpha / looks)",
                              first, repetitions, sizing, max_processes, Looks(), policy.alpha);
  if (process_seconds > 0) s += fmt::format("; about {:.0f} s a process", process_seconds);
  s += confirm > 0 ? fmt::format("\nplan: a regression fails the gate only when {} fresh processes show it again", confirm)
                   : std::string("\nplan: no confirmation round (--confirm 0): a regression fails the gate at once");
  if (!metrics.empty()) {
    const auto& worst = metrics.front();
    s += fmt::format("\nplan: after the first round the least sensitive of {} judged metrics detects {:.1f}% (80% "
                     "power; policy mde {:.1f}%): {}",
                     metrics.size(), 100 * worst.mde_at_first, 100 * worst.policy_mde, worst.name);
    if (const size_t n = Unreachable())
      s += fmt::format("\nplan: {} metric(s) cannot reach the policy's mde within {} processes", n, max_processes);
  }
  return s;
}

GatePlan PlanGate(const RunData& baseline, int baseline_repetitions, const Policy& policy, const PlanLimits& limits) {
  if (limits.first < 0 || (limits.first == 0 && limits.max_processes < 0))
    throw std::invalid_argument("--processes must be at least 1");
  GatePlan p;
  p.repetitions = GateRepetitions(baseline_repetitions);
  p.process_seconds = limits.process_seconds;
  p.max_processes = Cap(limits, limits.first);
  if (limits.first > 0 && p.max_processes < limits.first)
    throw std::invalid_argument("--max-processes must be at least --processes (" + std::to_string(limits.first) + ")");
  const auto spreads = Spreads(baseline, policy);
  const bool spread = std::any_of(spreads.begin(), spreads.end(), [](const auto& s) { return s.processes >= 2; });
  if (limits.first > 0) {
    p.first = limits.first;
    p.sizing = "--processes";
  } else if (!spread) {
    p.first = std::min(GatePlan::kNoSpreadFirst, p.max_processes);
    p.sizing = "the baseline has one process per metric: no between-process spread to size by";
  } else {
    p.first = SizeFirst(spreads, p.max_processes, policy.alpha / 2, &p);
    if (p.first >= p.max_processes) p.first = SizeFirst(spreads, p.max_processes, policy.alpha, &p);
    p.sizing = fmt::format("sized for the policy's mde from the baseline's {} processes and {} judged metrics",
                           spreads.front().processes, spreads.size());
  }
  SetLooks(&p, policy, p.max_processes > p.first ? 2 : 1);
  p.confirm = limits.confirm < 0 ? std::max(p.first, GatePlan::kMinConfirm) : limits.confirm;
  if (p.confirm > 0)  // judged on its own, so enough samples for the policy
    p.confirm = std::max(p.confirm, (policy.min_samples + p.repetitions - 1) / p.repetitions);
  if (p.metrics.empty() && spread) SizeFirst(spreads, p.max_processes, p.policy.alpha, &p);
  if (!p.metrics.empty()) FillMdes(spreads, p.policy.alpha, &p);
  return p;
}

int NextRound(const GatePlan& plan, int processes_so_far) {
  return std::max(0, plan.max_processes - processes_so_far);
}

}  // namespace perfbench
