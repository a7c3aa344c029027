#include "verdict_sim.h"

#include <cmath>
#include <random>
#include <string>

namespace perfbench::sim {
namespace {

class Noise {
 public:
  Noise(const Config& c, std::mt19937_64& rng) : c_(c), rng_(rng) {}
  // Draws one metric's parameters.
  void NextMetric() {
    const double cv = c_.fixed_cv > 0 ? c_.fixed_cv : std::uniform_real_distribution<>(c_.cv_min, c_.cv_max)(rng_);
    sigma_ = std::sqrt(std::log(1 + cv * cv));
    heavy_ = std::uniform_real_distribution<>(0, 1)(rng_) < c_.heavy_share;
  }
  double Sample(double scale) {
    double e;
    if (heavy_) {
      std::student_t_distribution<> t(c_.t_dof);
      e = t(rng_) / std::sqrt(c_.t_dof / (c_.t_dof - 2));  // unit variance
    } else {
      e = std::normal_distribution<>(0, 1)(rng_);
    }
    double x = scale * std::exp(sigma_ * e);
    if (std::uniform_real_distribution<>(0, 1)(rng_) < c_.outlier_prob)
      x *= 1 + std::uniform_real_distribution<>(c_.outlier_min, c_.outlier_max)(rng_);
    return x;
  }

 private:
  const Config& c_;
  std::mt19937_64& rng_;
  double sigma_ = 0.02;
  bool heavy_ = false;
};

int RegressedCount(const Config& c) {
  if (c.regression == 0) return 0;
  return std::max(1, static_cast<int>(std::lround(c.metrics * c.regressed_share)));
}

void Fill(const Config& c, std::mt19937_64& rng, RunData* a, RunData* b) {
  a->results.clear();
  b->results.clear();
  Noise noise(c, rng);
  const int regressed = RegressedCount(c);
  for (int i = 0; i < c.metrics; ++i) {
    noise.NextMetric();
    ResultRecord ra = Metric(i), rb = Metric(i);
    const double factor = i < regressed ? 1 + c.regression : 1.0;
    for (int k = 0; k < c.samples; ++k) ra.samples.push_back(noise.Sample(1.0));
    for (int k = 0; k < c.samples; ++k) rb.samples.push_back(noise.Sample(factor));
    a->results.push_back(std::move(ra));
    b->results.push_back(std::move(rb));
  }
}

}  // namespace

ResultRecord Metric(int i) {
  ResultRecord r;
  r.suite = "sim";
  r.workload = "w" + std::to_string(i);
  r.metric = "step_time";
  r.unit = "s";
  r.higher_is_better = false;
  return r;
}

Policy PolicyWithThreshold(double relative, double alpha) {
  Policy p = Policy::Default();
  p.alpha = alpha;
  p.defaults = {{"*", {false, relative}}};
  return p;
}

// The samples here are independent draws (no process or run effects), as
// on a machine whose history shows no run-to-run noise: five identical
// earlier medians per metric, a noise floor of 0, so the within-process
// statistics decide at the policy's limits (without any floor a side of one
// process is inconclusive: compare.h).
History QuietHistory(const RunData& a) {
  History h;
  for (const auto& r : a.results) h.series[ResultKey(r)] = {std::vector<double>(kMinHistoryRuns, 1.0)};
  return h;
}

void MakeRuns(const Config& config, RunData* baseline, RunData* candidate) {
  std::mt19937_64 rng(config.seed);
  Fill(config, rng, baseline, candidate);
}

Outcome Simulate(const Config& c) {
  std::mt19937_64 rng(c.seed);
  Outcome out;
  RunData a, b;
  const int regressed = RegressedCount(c);
  for (int k = 0; k < c.comparisons; ++k) {
    Fill(c, rng, &a, &b);
    const Comparison cmp = Compare(a, b, c.policy, false, QuietHistory(a));
    bool false_alarm = false;
    for (const auto& m : cmp.metrics) {
      const int i = std::stoi(m.workload.substr(1));
      if (i < regressed) {
        ++out.regressed_metrics;
        out.detected += m.verdict == Verdict::kRegression;
        out.unchanged_claims_on_regressed += m.verdict == Verdict::kUnchanged;
      } else {
        ++out.null_metrics;
        if (m.verdict == Verdict::kRegression) {
          ++out.false_regressions;
          false_alarm = true;
        }
        out.false_improvements += m.verdict == Verdict::kImprovement;
      }
    }
    ++out.comparisons;
    out.comparisons_with_false_regression += false_alarm;
  }
  return out;
}

}  // namespace perfbench::sim
