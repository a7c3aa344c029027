// The verdict rules under simulated noise (bench/verdict_sim.h), with fixed
// seeds: false alarms stay rare in A/A, real regressions are found. Margins
// leave room for the simulation's own sampling error; the full figures come
// from build/bench/verdict_quality.
#include <gtest/gtest.h>

#include "gate/plan.h"
#include "gate_sim.h"
#include "verdict_sim.h"

namespace perfbench {
namespace {

sim::Config Base(uint64_t seed) {
  sim::Config c;
  c.metrics = 200;
  c.seed = seed;
  c.policy = sim::PolicyWithThreshold(0.02, 0.05);
  return c;
}

TEST(VerdictQuality, AAComparisonsRarelyRaiseAnyFalseRegression) {
  auto c = Base(7);
  c.comparisons = 100;
  c.samples = 10;
  const auto o = sim::Simulate(c);
  EXPECT_EQ(o.comparisons, 100);
  EXPECT_EQ(o.null_metrics, 100 * 200);
  // Goal <= 1% of comparisons; expected about 0.5%: allow 3 in 100.
  EXPECT_LE(o.comparisons_with_false_regression, 3);
}

TEST(VerdictQuality, ThreePercentRegressionsAreFoundWithTwentySamples) {
  auto c = Base(11);
  c.comparisons = 20;
  c.samples = 20;
  c.fixed_cv = 0.02;
  c.regression = 0.03;
  const auto o = sim::Simulate(c);
  EXPECT_EQ(o.regressed_metrics, 20 * 10);
  EXPECT_GE(o.Power(), 0.75);  // goal 80%; about 85% measured
  // Equivalence is two one-sided tests at alpha = 0.05: a false "unchanged"
  // on a metric truly 3% worse (limit 2%) is allowed at most 5% of the time.
  EXPECT_LE(o.unchanged_claims_on_regressed, o.regressed_metrics / 20);
}

TEST(VerdictQuality, PowerGrowsWithTheEffectAndTheSamples) {
  auto c = Base(13);
  c.comparisons = 10;
  c.fixed_cv = 0.02;
  c.samples = 10;
  c.regression = 0.10;
  const double big10 = sim::Simulate(c).Power();
  c.regression = 0.02;
  const double small10 = sim::Simulate(c).Power();
  c.samples = 20;
  const double small20 = sim::Simulate(c).Power();
  EXPECT_GT(big10, small10);
  EXPECT_GT(small20, small10);
  EXPECT_GE(big10, 0.6);
}

TEST(VerdictQuality, TheSimulationIsDeterministic) {
  auto c = Base(5);
  c.comparisons = 3;
  const auto x = sim::Simulate(c), y = sim::Simulate(c);
  EXPECT_EQ(x.false_regressions, y.false_regressions);
  EXPECT_EQ(x.false_improvements, y.false_improvements);
  RunData a1, b1, a2, b2;
  sim::MakeRuns(c, &a1, &b1);
  sim::MakeRuns(c, &a2, &b2);
  EXPECT_EQ(a1.results.front().samples, a2.results.front().samples);
}

// Two levels of noise (processes, then repetitions): one process a side
// cannot see process noise, so its verdict is inconclusive (a within-process
// test called most of these A/A trials regressions); the gate does not cry
// wolf and still finds a large regression.
TEST(GateQuality, ProcessesAreTheUnitTheGateDoesNotCryWolf) {
  sim::GateConfig c;
  c.metrics = 50;
  c.trials = 12;
  c.between = 0.04;
  c.within = 0.03;
  c.seed = 5;
  const auto single = sim::SimulateScheme(sim::Scheme::kSingle, c);
  EXPECT_EQ(single.trials_with_false_regression, 0);
  EXPECT_EQ(single.inconclusive, single.null_metrics) << "one process a side: between-process noise unknown";
  const auto gate = sim::SimulateScheme(sim::Scheme::kGate, c);
  EXPECT_LE(gate.trials_with_false_regression, 1);  // about 1% of trials (300-trial run: 3)
  EXPECT_GT(gate.unchanged, gate.null_metrics * 8 / 10);  // most null metrics decided, not inconclusive
  EXPECT_LE(gate.processes, 5.0 + GatePlan::kDefaultMax);  // baseline + the planned gate processes
  c.regression = 0.25;
  EXPECT_GE(sim::SimulateScheme(sim::Scheme::kGate, c).Power(), 0.7);
  EXPECT_GE(sim::SimulateScheme(sim::Scheme::kAb, c).Power(), 0.9);
}

// The rolling, planned gate at this machine's measured noise: no false
// alarms, a 10% regression found, and an honest detectable effect.
TEST(GateQuality, ARollingPlannedGateCatchesTenPercentAndItsMdeIsHonest) {
  sim::GateConfig c;
  c.metrics = 10;
  c.trials = 20;
  c.between = 0.04;
  c.within = 0.03;
  c.window_runs = 20;
  c.regressed_share = 0.1;
  c.seed = 21;
  const auto aa = sim::SimulateScheme(sim::Scheme::kRolling, c);
  EXPECT_LE(aa.trials_with_false_regression, 1);
  EXPECT_GT(aa.candidate_processes, 1.9);
  EXPECT_LE(aa.candidate_processes, GatePlan::kDefaultMax);
  c.regression = 0.10;
  c.trials = 40;
  EXPECT_GE(sim::SimulateScheme(sim::Scheme::kRolling, c).Power(), 0.75);
  c.regression = 0.02;
  EXPECT_LE(sim::SimulateScheme(sim::Scheme::kRolling, c).Power(), 0.3);  // below the limit: rarely called
  c.regression = 0;
  c.trials = 60;
  const auto h = sim::SimulateMdeHonesty(c);
  EXPECT_GE(h.reported, 55);
  EXPECT_GE(h.Rate(), 0.6) << "mean mde " << h.mean_mde;
  EXPECT_LE(h.Rate(), 0.97) << "mean mde " << h.mean_mde;
}

}  // namespace
}  // namespace perfbench
