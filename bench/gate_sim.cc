#include "gate_sim.h"

#include <cmath>
#include <random>
#include <map>
#include <set>

#include "gate/gate.h"
#include "gate/plan.h"
#include "verdict_sim.h"
#include "perfbench/statistics.h"

namespace perfbench::sim {

std::string ToString(Scheme s) {
  switch (s) {
    case Scheme::kSingle: return "single-process compare";
    case Scheme::kGate: return "default gate, 5-run baseline";
    case Scheme::kGateHistory: return "gate after 25 earlier gates";
    case Scheme::kAb: return "ab, 10 pairs";
    case Scheme::kRolling: return "rolling gate, planned";
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

// One run of `processes` processes for every metric, sharing one moment.
RunData MakeRun(const GateConfig& c, int processes, int reps, bool candidate, std::mt19937_64& rng) {
  RunData d;
  const int regressed = Regressed(c);
  const double moment = std::exp(c.run_sd * std::normal_distribution<double>()(rng));
  for (int i = 0; i < c.metrics; ++i) {
    ResultRecord r = Metric(i);
    const double scale = moment * (candidate && i < regressed ? 1 + c.regression : 1.0);
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
  pooled.run_count = static_cast<size_t>(c.baseline_runs);
  return pooled;
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

// The candidate of one gate: processes made on demand for the core's rounds,
// all sharing the gate's moment.
class SimRunner final : public gate::ProcessRunner {
 public:
  SimRunner(const GateConfig& c, int reps, std::mt19937_64& rng)
      : c_(c), reps_(reps), rng_(rng), moment_(std::exp(c.run_sd * std::normal_distribution<double>()(rng))) {
    for (int i = 0; i < c.metrics; ++i) results_.push_back(Metric(i));
  }
  size_t Run(const std::vector<std::string>& keys, int first, int count, int) override {
    const std::set<std::string> wanted(keys.begin(), keys.end());
    const int regressed = Regressed(c_);
    if (c_.moment_per_round && calls_++ > 0) moment_ = std::exp(c_.run_sd * std::normal_distribution<double>()(rng_));
    for (size_t i = 0; i < results_.size(); ++i) {
      auto& r = results_[i];
      if (!wanted.empty() && !wanted.count(VariantKey(r.suite, r.workload, r.params))) continue;
      const double scale = moment_ * (static_cast<int>(i) < regressed ? 1 + c_.regression : 1.0);
      for (int p = 0; p < count; ++p) AddProcess(r, first + p, reps_, scale, c_, rng_);
      spent_ += count / static_cast<double>(c_.metrics);
    }
    return 0;
  }
  std::vector<ResultRecord> Results() override { return results_; }
  double spent() const { return spent_; }

 private:
  const GateConfig& c_;
  int reps_;
  std::mt19937_64& rng_;
  double moment_;
  int calls_ = 0;
  double spent_ = 0;
  std::vector<ResultRecord> results_;
};

// A gate through the core: plan, rounds, verdict.
Comparison CoreGate(const GateConfig& c, const RunData& base, int base_reps, const History& history,
                    std::mt19937_64& rng, double* candidate_processes) {
  gate::GateInputs in;
  in.baseline = base;
  in.history = history;
  PlanLimits limits;
  limits.confirm = c.confirm;
  in.plan = PlanGate(base, base_reps, c.policy, limits);
  for (int i = 0; i < c.metrics; ++i) {
    const ResultRecord r = Metric(i);
    in.variants.push_back(VariantKey(r.suite, r.workload, r.params));
  }
  SimRunner runner(c, in.plan.repetitions, rng);
  const auto o = gate::RunGate(in, RunData{}, runner);
  *candidate_processes = runner.spent();
  return o.comparison;
}

Comparison RunGate(const GateConfig& c, bool with_history, std::mt19937_64& rng, double* processes) {
  History history;
  const RunData base = BaselineRuns(c, rng, &history);
  if (with_history) EarlierGates(c, PlanGate(base, c.repetitions, c.policy), rng, &history);
  double candidate = 0;
  Comparison cmp = CoreGate(c, base, c.repetitions, history, rng, &candidate);
  *processes = c.baseline_runs + candidate;
  return cmp;
}

// The rolling window: W default runs, pooled, and the history they make.
RunData Window(const GateConfig& c, std::mt19937_64& rng, History* h) {
  RunData pooled;
  for (int run = 0; run < c.window_runs; ++run) {
    RunData one = MakeRun(c, c.run_processes, c.run_repetitions, false, rng);
    for (auto& r : one.results) {
      auto& series = h->series[ResultKey(r)];
      if (series.empty()) series.emplace_back();
      series.front().push_back(stats::Median(r.samples));
      h->processes_per_run[ResultKey(r)] = c.run_processes;
      r.process.assign(r.process.size(), 0);
      for (size_t k = 0; k < r.samples.size(); ++k)  // each run's processes are further processes of the pool
        r.process[k] = run * c.run_processes + static_cast<int>(k) / c.run_repetitions;
      pooled.results.push_back(std::move(r));
    }
  }
  // One record per metric, as Compare pools a label's runs.
  std::map<std::string, ResultRecord> merged;
  for (auto& r : pooled.results) {
    auto [it, fresh] = merged.emplace(ResultKey(r), r);
    if (!fresh) {
      it->second.samples.insert(it->second.samples.end(), r.samples.begin(), r.samples.end());
      it->second.process.insert(it->second.process.end(), r.process.begin(), r.process.end());
    }
  }
  RunData out;
  out.run_count = static_cast<size_t>(c.window_runs);
  for (int i = 0; i < c.metrics; ++i) out.results.push_back(merged.at(ResultKey(Metric(i))));
  return out;
}

Comparison RunRolling(const GateConfig& c, std::mt19937_64& rng, double* processes, double* candidate) {
  History history;
  const RunData base = Window(c, rng, &history);
  Comparison cmp = CoreGate(c, base, c.run_repetitions, history, rng, candidate);
  *processes = *candidate;  // the window's runs are nightly runs made anyway
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
  double cost = 0, candidates = 0, mde = 0;
  for (int t = 0; t < c.trials; ++t) {
    double processes = 2, candidate = 0;
    Comparison cmp;
    if (scheme == Scheme::kSingle)
      cmp = Compare(MakeRun(c, 1, c.repetitions, false, rng), MakeRun(c, 1, c.repetitions, true, rng), c.policy, false);
    else if (scheme == Scheme::kGate || scheme == Scheme::kGateHistory)
      cmp = RunGate(c, scheme == Scheme::kGateHistory, rng, &processes);
    else if (scheme == Scheme::kRolling)
      cmp = RunRolling(c, rng, &processes, &candidate);
    else
      cmp = RunAb(c, rng, &processes);
    Count(cmp, c, &out);
    cost += processes;
    candidates += candidate;
    mde += cmp.metrics.empty() ? 0 : cmp.metrics.front().mde;
    ++out.trials;
  }
  out.processes = cost / c.trials;
  out.candidate_processes = candidates / c.trials;
  out.mde = mde / c.trials;
  return out;
}

Honesty SimulateMdeHonesty(const GateConfig& config) {
  std::mt19937_64 rng(config.seed);
  Honesty h;
  double sum = 0;
  for (int t = 0; t < config.trials; ++t) {
    GateConfig null = config;
    null.regression = 0;
    double processes = 0, candidate = 0;
    const Comparison first = RunRolling(null, rng, &processes, &candidate);
    ++h.gates;
    // Metric 0 ("w0"): the metrics are ordered by verdict in no report here.
    const MetricVerdict* m0 = nullptr;
    for (const auto& m : first.metrics)
      if (m.workload == Metric(0).workload) m0 = &m;
    if (!m0 || !m0->has_mde) continue;
    ++h.reported;
    sum += m0->mde;
    GateConfig effect = config;
    effect.regression = m0->mde;
    effect.regressed_share = 0;  // Regressed() keeps at least one: metric 0
    const Comparison second = RunRolling(effect, rng, &processes, &candidate);
    for (const auto& m : second.metrics)
      if (m.workload == Metric(0).workload) h.detected += m.verdict == Verdict::kRegression;
  }
  h.mean_mde = h.reported ? sum / h.reported : 0;
  return h;
}

}  // namespace perfbench::sim
