#include "gate/gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace perfbench::gate {
namespace {

constexpr int kExitOk = 0, kExitRegression = 1, kExitInconclusive = 3, kExitRuntime = 4;

Comparison CompareWith(const GateInputs& in, const RunData& baseline, const RunData& candidate) {
  return Compare(baseline, candidate, in.plan.policy, false, in.history);
}

}  // namespace

std::string GateOutcome::Verdict() const {
  const bool regressed = comparison.verdict == Overall::kRegression || (anchor && anchor->verdict == Overall::kRegression);
  if (regressed) return "regression";
  return comparison.verdict == Overall::kPass ? "pass" : "inconclusive";
}

std::vector<std::string> Undecided(const Comparison& c, const std::vector<std::string>& variants) {
  std::set<std::string> workloads;
  for (const auto& m : c.metrics) {
    const bool unknown = m.verdict == Verdict::kInconclusive && !m.has_mde;
    const bool unresolved = m.tested && !m.informational && !m.control && m.verdict != Verdict::kRegression &&
                            m.verdict != Verdict::kImprovement && !m.Resolves();
    if (unknown || unresolved) workloads.insert(m.suite + "/" + m.workload);
  }
  std::vector<std::string> keys;
  for (const auto& v : variants) {
    const auto second = v.find('/', v.find('/') + 1);
    if (workloads.count(v.substr(0, second))) keys.push_back(v);
  }
  return keys;
}

GateOutcome RunGate(const GateInputs& in, RunData candidate, ProcessRunner& runner,
                    const std::function<void(const std::string&)>& progress) {
  GateOutcome o;
  const GatePlan& plan = in.plan;
  o.failed += runner.Run({}, 0, plan.first, plan.max_processes);
  o.processes = plan.first;
  o.rounds = 1;
  candidate.results = runner.Results();
  o.comparison = CompareWith(in, in.baseline, candidate);
  for (int round = 1; round <= plan.extra_rounds; ++round) {
    const auto again = Undecided(o.comparison, in.variants);
    const int more = NextRound(plan, o.processes);
    if (again.empty() || more <= 0) break;
    if (progress)
      progress(fmt::format("gate: round {}: {} variant(s) inconclusive, +{} processes", round + 1, again.size(), more));
    o.failed += runner.Run(again, o.processes, more, plan.max_processes);
    o.processes += more;
    ++o.rounds;
    candidate.results = runner.Results();
    o.comparison = CompareWith(in, in.baseline, candidate);
  }
  if (in.anchor) o.anchor = CompareWith(in, *in.anchor, candidate);
  return o;
}

int GateExit(const GateOutcome& o, bool allow_inconclusive, bool require_mde) {
  if (o.Verdict() == "regression") return kExitRegression;
  if (o.failed) return kExitRuntime;
  if (o.comparison.verdict == Overall::kInconclusive && !allow_inconclusive) return kExitInconclusive;
  if (require_mde && o.comparison.verdict == Overall::kPass && !o.comparison.Unresolved().empty())
    return kExitInconclusive;
  return kExitOk;
}

}  // namespace perfbench::gate
