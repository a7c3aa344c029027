// Micro-benchmarks of the verdict statistics with Google Benchmark:
//   build/bench/stats_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <random>

#include "inference.h"
#include "verdict_sim.h"

namespace {

std::vector<double> Draw(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<> d(1.0, 0.02);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

void BM_MannWhitneyU(benchmark::State& state) {
  const auto a = Draw(static_cast<int>(state.range(0)), 1), b = Draw(static_cast<int>(state.range(0)), 2);
  for (auto _ : state) benchmark::DoNotOptimize(perfbench::stats::MannWhitneyU(a, b));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MannWhitneyU)->Arg(8)->Arg(20)->Arg(100);

void BM_HodgesLehmann(benchmark::State& state) {
  const auto a = Draw(static_cast<int>(state.range(0)), 3), b = Draw(static_cast<int>(state.range(0)), 4);
  for (auto _ : state) benchmark::DoNotOptimize(perfbench::stats::HodgesLehmannShift(a, b, 0.95));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HodgesLehmann)->Arg(20)->Arg(100);

void BM_Compare(benchmark::State& state) {
  perfbench::sim::Config c;
  c.metrics = static_cast<int>(state.range(0));
  c.samples = 20;
  perfbench::RunData a, b;
  perfbench::sim::MakeRuns(c, &a, &b);
  for (auto _ : state) benchmark::DoNotOptimize(perfbench::Compare(a, b, c.policy, false));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Compare)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
