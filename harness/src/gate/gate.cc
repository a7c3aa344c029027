#include "gate/gate.h"

#include "exit_code.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace perfbench::gate {
namespace {

Comparison CompareWith(const GateInputs& in, const RunData& baseline, VerdictKind kind, const RunData& candidate) {
  Comparison c = Compare(baseline, candidate, in.plan.policy, false, in.history);
  c.kind = kind;
  return c;
}

std::string WorkloadOf(const MetricVerdict& m) { return m.suite + "/" + m.workload; }

// The variants of `variants` belonging to one of `workloads` (a workload's
// variants are interleaved, so all of them run again together).
std::vector<std::string> VariantsOf(const std::set<std::string>& workloads, const std::vector<std::string>& variants) {
  std::vector<std::string> keys;
  for (const auto& v : variants) {
    const auto second = v.find('/', v.find('/') + 1);
    if (workloads.count(v.substr(0, second))) keys.push_back(v);
  }
  return keys;
}

// A regression the statistics called (a failure needs no second look).
bool Suspect(const MetricVerdict& m) { return m.verdict == Verdict::kRegression && m.tested && !m.control; }

void AddSuspects(const Comparison& c, std::set<std::string>* workloads) {
  for (const auto& m : c.metrics)
    if (Suspect(m)) workloads->insert(WorkloadOf(m));
}

std::string KeyOf(const MetricVerdict& m) { return VariantKey(m.suite, m.workload, m.params) + " " + m.metric; }

// One-sided p of a change in the regression direction.
double WorseP(const MetricVerdict& m) {
  const double change = m.absolute ? m.difference : m.ratio - 1;
  const bool worse = m.higher_is_better ? change < 0 : change > 0;
  return worse ? m.p_value / 2 : 1 - m.p_value / 2;
}

// Runs the confirmation round for the suspects of the comparisons and
// settles them.
void Confirm(const GateInputs& in, const RunData& candidate, ProcessRunner& runner,
             const std::function<void(const std::string&)>& progress, GateOutcome& o) {
  std::set<std::string> workloads;
  AddSuspects(o.comparison, &workloads);
  if (o.anchor) AddSuspects(*o.anchor, &workloads);
  const auto keys = VariantsOf(workloads, in.variants);
  if (keys.empty() || in.plan.confirm <= 0) return;
  const int first = o.processes, count = in.plan.confirm;
  if (progress)
    progress(fmt::format("gate: regression in {} workload(s); confirming with {} fresh processes", workloads.size(), count));
  o.failed += runner.Run(keys, first, count, first + count);
  o.confirm_processes = count;
  RunData again = candidate;
  again.results = ProcessesFrom(runner.Results(), first);
  const auto settle = [&](Comparison& c, const RunData& base, VerdictKind kind) {
    const auto [yes, no] = SettleConfirmation(c, CompareWith(in, base, kind, again), count);
    o.confirmed += yes;
    o.unconfirmed += no;
  };
  settle(o.comparison, in.baseline, in.kind);
  if (o.anchor) settle(*o.anchor, *in.anchor, in.anchor_kind);
}

}  // namespace

std::string GateOutcome::Verdict() const {
  const bool regressed = comparison.verdict == Overall::kRegression || (anchor && anchor->verdict == Overall::kRegression);
  if (regressed) return "regression";
  // A regression the confirmation did not show again, here or against the
  // anchor, is no pass.
  return comparison.verdict == Overall::kPass && unconfirmed == 0 ? "pass" : "inconclusive";
}

std::vector<std::string> Undecided(const Comparison& c, const std::vector<std::string>& variants) {
  std::set<std::string> workloads;
  for (const auto& m : c.metrics) {
    const bool unknown = m.verdict == Verdict::kInconclusive && !m.has_mde;
    const bool unresolved = m.tested && !m.informational && !m.control && m.verdict != Verdict::kRegression &&
                            m.verdict != Verdict::kImprovement && !m.Resolves();
    if (unknown || unresolved) workloads.insert(WorkloadOf(m));
  }
  return VariantsOf(workloads, variants);
}

std::vector<ResultRecord> ProcessesFrom(std::vector<ResultRecord> results, int first) {
  for (auto& r : results) {
    std::vector<double> samples;
    std::vector<int> process;
    for (size_t i = 0; i < r.samples.size(); ++i)
      if (r.ProcessOf(i) >= first) {
        samples.push_back(r.samples[i]);
        process.push_back(r.ProcessOf(i));
      }
    r.samples = std::move(samples);
    r.process = std::move(process);
  }
  return results;
}

std::pair<size_t, size_t> SettleConfirmation(Comparison& c, const Comparison& again, int processes) {
  std::map<std::string, const MetricVerdict*> second;
  for (const auto& m : again.metrics) second.emplace(KeyOf(m), &m);
  size_t yes = 0, no = 0;
  for (auto& m : c.metrics) {
    if (!Suspect(m)) continue;
    const auto it = second.find(KeyOf(m));
    const MetricVerdict* a = it == second.end() ? nullptr : it->second;
    // Worse, and not shown to lie within the margin (a confirmation that is
    // sure of 2% under a 5% limit does not show a 30% regression again).
    const bool shown = a && (a->verdict == Verdict::kRegression ||
                             (a->tested && a->verdict != Verdict::kUnchanged && WorseP(*a) < kConfirmAlpha));
    const std::string then = a ? a->reason : "not measured again";
    if (shown) {
      m.reason += fmt::format("; confirmed by {} fresh processes: {}", processes, then);
      ++yes;
    } else {
      m.verdict = Verdict::kInconclusive;
      m.reason = fmt::format("a regression {} fresh processes did not show again (the machine's moment, not the code?): "
                             "first {}; then {}", processes, m.reason, then);
      ++no;
    }
  }
  c.verdict = OverallVerdict(c);
  if (no && c.verdict == Overall::kPass) c.verdict = Overall::kInconclusive;
  return {yes, no};
}

GateOutcome RunGate(const GateInputs& in, RunData candidate, ProcessRunner& runner,
                    const std::function<void(const std::string&)>& progress) {
  GateOutcome o;
  const GatePlan& plan = in.plan;
  o.failed += runner.Run({}, 0, plan.first, plan.max_processes);
  o.processes = plan.first;
  o.rounds = 1;
  candidate.results = runner.Results();
  o.comparison = CompareWith(in, in.baseline, in.kind, candidate);
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
    o.comparison = CompareWith(in, in.baseline, in.kind, candidate);
  }
  if (in.anchor) o.anchor = CompareWith(in, *in.anchor, in.anchor_kind, candidate);
  Confirm(in, candidate, runner, progress, o);
  return o;
}

int GateExit(const GateOutcome& o, bool allow_inconclusive, bool require_mde) {
  return VerdictExit(o.Verdict() == "regression", o.Verdict() == "inconclusive", o.failed, allow_inconclusive,
                     require_mde && o.comparison.verdict == Overall::kPass && !o.comparison.Unresolved().empty());
}

}  // namespace perfbench::gate
