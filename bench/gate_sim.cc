#include "gate_sim.h"

#include <cmath>
#include <random>
#include <set>

#include "compare/gate_plan.h"
#include "verdict_sim.h"
#include "perfbench/statistics.h"

namespace perfbench::sim {

std::string ToString(Scheme s) {
  switch (s) {
    case Scheme::kSingle: return "single-process compare";
    case Scheme::kGate: return "default gate, 5-run baseline";
    case Scheme::kGateHistory: return "gate after 25 earlier gates";
    case Scheme::kAb: return "ab, 10 pairs";
  }
  return "?";
}

namespace {

int Regressed(const GateConfig& c) {
  return c.regression == 0 ? 0 : std::max(1, static_cast<int>(std::lround(c.metrics * c.regressed_share)));
}

// Appends one process of `reps` repetitions to `r`, as process `index`.
void AddProcess(ResultRecord& r, int index, int reps, double scale, const GateConfig& c, std::mt19937_64& rng) {
  std::normal_distribution<double> z;
  const double offset = scale * std::exp(c.between * z(rng));
  for (int k = 0; k < reps; ++k) {
    r.samples.push_back(offset * std::exp(c.within * z(rng)));
    r.process.push_back(index);
  }
}

// One run of `processes` processes for every metric.
RunData MakeRun(const GateConfig& c, int processes, int reps, bool candidate, std::mt19937_64& rng) {
  RunData d;
  const int regressed = Regressed(c);
  for (int i = 0; i < c.metrics; ++i) {
    ResultRecord r = Metric(i);
    const double scale = candidate && i < regressed ? 1 + c.regression : 1.0;
    for (int p = 0; p < processes; ++p) AddProcess(r, p, reps, scale, c, rng);
    d.results.push_back(std::move(r));
  }
  return d;
}

void Count(const Comparison& cmp, const GateConfig& c, GateOutcome* out) {
  const int regressed = Regressed(c);
  bool false_alarm = false;
  for (const auto& m : cmp.metrics) {
    const int i = std::stoi(m.workload.substr(1));
    if (i < regressed) {
      ++out->regressed_metrics;
      out->detected += m.verdict == Verdict::kRegression;
      continue;
    }
    ++out->null_metrics;
    out->unchanged += m.verdict == Verdict::kUnchanged;
    out->inconclusive += m.verdict == Verdict::kInconclusive;
    false_alarm = false_alarm || m.verdict == Verdict::kRegression;
  }
  out->trials_with_false_regression += false_alarm;
}

// The 5-run baseline: pooled data and the history its runs make.
RunData BaselineRuns(const GateConfig& c, std::mt19937_64& rng, History* h) {
  RunData pooled;
  for (int run = 0; run < c.baseline_runs; ++run) {
    RunData one = MakeRun(c, 1, c.repetitions, false, rng);
    for (auto& r : one.results) {
      auto& series = h->series[ResultKey(r)];
      if (series.empty()) series.emplace_back();
      series.front().push_back(stats::Median(r.samples));
      pooled.results.push_back(std::move(r));
    }
  }
  return pooled;
}

// Adds `more` processes to the metrics `undecided` names (all when empty).
void AddRound(RunData& cand, const std::set<std::string>& undecided, int first_index, int more, int reps,
              const GateConfig& c, std::mt19937_64& rng) {
  const int regressed = Regressed(c);
  for (size_t i = 0; i < cand.results.size(); ++i) {
    auto& r = cand.results[i];
    if (!undecided.empty() && !undecided.count(r.workload)) continue;
    const double scale = static_cast<int>(i) < regressed ? 1 + c.regression : 1.0;
    for (int p = 0; p < more; ++p) AddProcess(r, first_index + p, reps, scale, c, rng);
  }
}

// Earlier gates of the unchanged build (first round only) join the history.
void EarlierGates(const GateConfig& c, const GatePlan& plan, std::mt19937_64& rng, History* h) {
  GateConfig null = c;
  null.regression = 0;
  for (int g = 0; g < c.earlier_gates; ++g)
    for (const auto& r : MakeRun(null, plan.first, plan.repetitions, false, rng).results) {
      h->series[ResultKey(r)].front().push_back(stats::Median(r.samples));
      h->processes_per_run[ResultKey(r)] = plan.first;  // the median over 5 + 25 runs
    }
}

Comparison RunGate(const GateConfig& c, bool with_history, std::mt19937_64& rng, double* processes) {
  History history;
  const RunData base = BaselineRuns(c, rng, &history);
  const GatePlan plan = PlanGate(base, c.repetitions, c.policy);
  if (with_history) EarlierGates(c, plan, rng, &history);
  RunData cand = MakeRun(c, plan.first, plan.repetitions, true, rng);
  *processes = c.baseline_runs + static_cast<double>(plan.first);
  Comparison cmp = Compare(base, cand, plan.policy, false, history);
  int next = plan.first;
  for (int round = 1; round <= plan.extra_rounds; ++round) {
    std::set<std::string> undecided;
    for (const auto& m : cmp.metrics)
      if (m.verdict == Verdict::kInconclusive) undecided.insert(m.workload);
    const int more = NextRound(plan, next);
    if (undecided.empty() || more <= 0) break;
    AddRound(cand, undecided, next, more, plan.repetitions, c, rng);
    *processes += more * static_cast<double>(undecided.size()) / c.metrics;
    next += more;
    cmp = Compare(base, cand, plan.policy, false, history);
  }
  return cmp;
}

Comparison RunAb(const GateConfig& c, std::mt19937_64& rng, double* processes) {
  PairedData d;
  for (int i = 0; i < c.pairs; ++i) {
    d.a_pairs.push_back(MakeRun(c, 1, c.repetitions, false, rng).results);
    d.b_pairs.push_back(MakeRun(c, 1, c.repetitions, true, rng).results);
    d.a.results.insert(d.a.results.end(), d.a_pairs.back().begin(), d.a_pairs.back().end());
    d.b.results.insert(d.b.results.end(), d.b_pairs.back().begin(), d.b_pairs.back().end());
  }
  *processes = 2.0 * c.pairs;
  return ComparePaired(d, c.policy);
}

}  // namespace

GateOutcome SimulateScheme(Scheme scheme, const GateConfig& c) {
  std::mt19937_64 rng(c.seed);
  GateOutcome out;
  double cost = 0;
  for (int t = 0; t < c.trials; ++t) {
    double processes = 2;
    Comparison cmp;
    if (scheme == Scheme::kSingle)
      cmp = Compare(MakeRun(c, 1, c.repetitions, false, rng), MakeRun(c, 1, c.repetitions, true, rng), c.policy, false);
    else if (scheme == Scheme::kGate || scheme == Scheme::kGateHistory)
      cmp = RunGate(c, scheme == Scheme::kGateHistory, rng, &processes);
    else
      cmp = RunAb(c, rng, &processes);
    Count(cmp, c, &out);
    cost += processes;
    ++out.trials;
  }
  out.processes = cost / c.trials;
  return out;
}

}  // namespace perfbench::sim
