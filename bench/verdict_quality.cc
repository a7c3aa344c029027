// How good are perfbench's verdicts? Simulates A/A and A/B comparisons with
// realistic noise (see verdict_sim.h) and prints: the share of A/A comparisons
// with any false regression, detection power, and the time to compare 1,000
// metrics. Not a test: figures for the README and for judging policy changes.
//
//   build/bench/verdict_quality [--comparisons N] [--metrics M] [--seed S] [--threshold T] [--alpha A]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "perfbench/statistics.h"
#include "verdict_sim.h"

using namespace perfbench;

int main(int argc, char** argv) {
  int comparisons = 300, metrics = 200;
  uint64_t seed = 20261202;
  double threshold = 0.02, alpha = Policy::Default().alpha;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "verdict_quality: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--comparisons")) comparisons = std::atoi(next("--comparisons"));
    else if (!std::strcmp(argv[i], "--metrics")) metrics = std::atoi(next("--metrics"));
    else if (!std::strcmp(argv[i], "--seed")) seed = std::strtoull(next("--seed"), nullptr, 10);
    else if (!std::strcmp(argv[i], "--threshold")) threshold = std::atof(next("--threshold"));
    else if (!std::strcmp(argv[i], "--alpha")) alpha = std::atof(next("--alpha"));
    else {
      std::fprintf(stderr,
                   "usage: verdict_quality [--comparisons N] [--metrics M] [--seed S] [--threshold T] [--alpha A]\n");
      return std::strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (comparisons < 1 || metrics < 1 || !(threshold >= 0) || !(alpha > 0 && alpha < 1)) {
    std::fprintf(stderr, "verdict_quality: bad arguments\n");
    return 2;
  }
  const Policy policy = sim::PolicyWithThreshold(threshold, alpha);
  std::printf("policy: alpha (BH FDR) %.3g, limit %.3g%% on every metric, min_samples %d\n", alpha, threshold * 100,
              policy.min_samples);
  std::printf("noise: log-normal, CV 1-5%% per metric, half the metrics Student-t(3) tails, 2%% outliers x1.2-2.0\n\n");

  std::printf("A/A: %d comparisons x %d metrics\n", comparisons, metrics);
  std::printf("  samples/side  comparisons with any false regression  false regressions/metric  false improvements/metric\n");
  for (int n : {10, 20}) {
    sim::Config c;
    c.metrics = metrics;
    c.comparisons = comparisons;
    c.samples = n;
    c.seed = seed + n;
    c.policy = policy;
    const auto o = sim::Simulate(c);
    std::printf("  %12d  %5d / %d = %5.2f%%                  %.2e                  %.2e\n", n,
                o.comparisons_with_false_regression, o.comparisons, 100 * o.FalseAlarmShare(),
                double(o.false_regressions) / o.null_metrics, double(o.false_improvements) / o.null_metrics);
  }

  std::printf("\nA/B power: 2%% noise (CV), 5%% of %d metrics regressed, %d comparisons\n", metrics, std::max(1, comparisons / 3));
  std::printf("  regression  samples/side  detected  called unchanged  false-alarm comparisons\n");
  for (double d : {0.02, 0.03, 0.05, 0.10}) {
    for (int n : {10, 20}) {
      sim::Config c;
      c.metrics = metrics;
      c.comparisons = std::max(1, comparisons / 3);
      c.samples = n;
      c.fixed_cv = 0.02;
      c.regression = d;
      c.seed = seed + 1000 + n + static_cast<uint64_t>(d * 1000);
      c.policy = policy;
      const auto o = sim::Simulate(c);
      std::printf("  %9.0f%%  %12d  %7.1f%%  %15.1f%%  %5.2f%%\n", d * 100, n, 100 * o.Power(),
                  100.0 * o.unchanged_claims_on_regressed / o.regressed_metrics, 100 * o.FalseAlarmShare());
    }
  }

  // Time to compare 1,000 metrics (20 samples each), repeated.
  sim::Config c;
  c.metrics = 1000;
  c.samples = 20;
  c.seed = seed;
  c.policy = policy;
  RunData a, b;
  sim::MakeRuns(c, &a, &b);
  std::vector<double> times;
  for (int rep = 0; rep < 15; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto cmp = Compare(a, b, policy, false);
    const auto t1 = std::chrono::steady_clock::now();
    if (cmp.metrics.size() != 1000) return 1;
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  const auto s = stats::Summarize(times);
  std::printf("\ncompare 1,000 metrics x 20 samples/side: median %.1f ms (min %.1f, max %.1f, %zu repetitions)\n",
              s.median * 1e3, s.min * 1e3, s.max * 1e3, times.size());
  return 0;
}
