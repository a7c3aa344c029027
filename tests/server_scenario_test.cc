// The server scenario (perfbench/server_scenario.h): its arrival process,
// its queue on a fake model with a fixed service time against the M/D/1
// queue's exact distribution, and its search for the highest rate.
#include "perfbench/server_scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "perfbench/statistics.h"

namespace perfbench::server {
namespace {

// A fake model in virtual time: each query takes exactly `service` seconds.
struct FakeModel {
  double now = 0, service = 0;
  size_t queries = 0;
  Clock clock() {
    return {[this] { return now; }, [this](double t) { now = std::max(now, t); }};
  }
  std::function<void()> query() {
    return [this] {
      now += service;
      ++queries;
    };
  }
};

TEST(ServerScenario, ArrivalsAreASeededPoissonProcess) {
  const auto a = PoissonArrivals(200, 100000, 7);
  EXPECT_EQ(a, PoissonArrivals(200, 100000, 7));
  EXPECT_NE(a, PoissonArrivals(200, 100000, 8));
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  std::vector<double> gaps(a.size());
  std::adjacent_difference(a.begin(), a.end(), gaps.begin());
  EXPECT_NEAR(stats::Mean(gaps) * 200, 1.0, 0.01);  // mean gap 1 / rate
  const double longer = static_cast<double>(std::count_if(gaps.begin(), gaps.end(), [](double g) { return g > 1.0 / 200; }));
  EXPECT_NEAR(longer / gaps.size(), std::exp(-1.0), 0.01);  // exponential: P(gap > mean) = 1/e
  EXPECT_THROW(PoissonArrivals(0, 10, 1), std::invalid_argument);
}

TEST(ServerScenario, MD1DistributionHasItsKnownAtomAndPollaczekKhinchineMean) {
  const double d = 0.01;
  for (const double rho : {0.3, 0.5, 0.7}) {
    const double lambda = rho / d;
    EXPECT_NEAR(MD1LatencyCdf(lambda, d, d), 1 - rho, 1e-12) << "no wait with probability 1 - rho";
    EXPECT_EQ(MD1LatencyCdf(lambda, d, d / 2), 0.0);
    // E[latency] = d + rho d / (2 (1 - rho)), the integral of 1 - F.
    double mean = d, t = d;
    const double h = d / 200;
    while (MD1LatencyCdf(lambda, d, t) < 1 - 1e-10) {
      mean += h * (1 - (MD1LatencyCdf(lambda, d, t) + MD1LatencyCdf(lambda, d, t + h)) / 2);
      t += h;
    }
    EXPECT_NEAR(mean, d + rho * d / (2 * (1 - rho)), 1e-3 * d) << "rho " << rho;
    const double p99 = MD1LatencyQuantile(lambda, d, 0.99);
    EXPECT_NEAR(MD1LatencyCdf(lambda, d, p99), 0.99, 1e-9);
  }
  EXPECT_THROW(MD1LatencyCdf(100, 0.01, 1), std::invalid_argument);  // rho = 1: no steady state
}

TEST(ServerScenario, QueueOnAFixedServiceTimeMatchesTheMD1Percentiles) {
  FakeModel m;
  m.service = 0.01;
  for (const double rho : {0.3, 0.6}) {
    const double lambda = rho / m.service;
    const auto latency = ServeAtArrivals(PoissonArrivals(lambda, 200000, 3), m.query(), m.clock());
    ASSERT_EQ(latency.size(), 200000u);
    EXPECT_GE(*std::min_element(latency.begin(), latency.end()), m.service - 1e-12);
    for (const double q : {0.5, 0.9, 0.99}) {
      const double want = MD1LatencyQuantile(lambda, m.service, q);
      EXPECT_NEAR(stats::PercentileNearestRank(latency, q) / want, 1.0, 0.03) << "rho " << rho << " q " << q;
    }
  }
}

TEST(ServerScenario, SearchFindsTheHighestRateWithinTheP99Bound) {
  FakeModel m;
  m.service = 0.01;
  const double bound = 0.05;  // 5 service times
  // The rate at which the exact p99 equals the bound.
  double lo = 1, hi = 99.9;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (MD1LatencyQuantile(mid, m.service, 0.99) <= bound ? lo : hi) = mid;
  }
  SearchLimits limits;
  limits.latency_bound_s = bound;
  limits.queries_per_rate = 5000;
  limits.steps = 8;
  limits.max_seconds = 1e6;  // virtual time
  const ServerResult r = FindServerRate(m.query(), m.service, limits, m.clock());
  ASSERT_TRUE(r.found) << r.why;
  EXPECT_NEAR(r.best.rate / lo, 1.0, 0.08) << "found " << r.best.rate << "/s, exact " << lo << "/s";
  EXPECT_TRUE(r.best.meets);
  EXPECT_LE(r.best.p99, bound);
  EXPECT_LE(r.best.p50, r.best.p90);
  EXPECT_EQ(r.best.queries, 5000u);
  EXPECT_EQ(m.queries, 5000u * r.tried.size()) << "every rate judged on its own queries";
  EXPECT_EQ(r.tried.front().rate, 100.0) << "the search starts at the saturation rate, 1 / service";
  EXPECT_FALSE(r.tried.front().meets);
  EXPECT_NEAR(r.best.utilisation, r.best.rate * m.service, 1e-9) << "rate x service time";
}

// A run too short to fill its queue cannot pass a rate the server cannot
// sustain: with a bound of 1,000 service times, 1,000 queries at any rate
// would finish within it, but a utilisation near 1 or above never meets it.
TEST(ServerScenario, ARateAboveTheServiceRateNeverMeetsTheBound) {
  FakeModel m;
  m.service = 0.001;
  SearchLimits limits;
  limits.latency_bound_s = 1.0;
  limits.max_seconds = 1e6;  // virtual time
  const ServerResult r = FindServerRate(m.query(), m.service / 4, limits, m.clock());  // service measured 4x fast
  ASSERT_TRUE(r.found) << r.why;
  EXPECT_LT(r.best.rate * m.service, kMaxUtilisation);
  EXPECT_GT(r.best.rate * m.service, 0.95) << "the search closes in on the service rate, 1000/s; found " << r.best.rate;
  for (const auto& p : r.tried) EXPECT_EQ(p.meets, p.utilisation < kMaxUtilisation) << p.rate;
}

TEST(ServerScenario, ABoundBelowTheServiceTimeIsNeverMetAndSaysWhy) {
  FakeModel m;
  m.service = 0.02;
  SearchLimits limits;
  limits.latency_bound_s = 0.01;
  limits.max_seconds = 1e6;  // virtual time
  const ServerResult r = FindServerRate(m.query(), m.service, limits, m.clock());
  EXPECT_FALSE(r.found);
  EXPECT_NE(r.why.find("exceeds the 0.01 s bound"), std::string::npos) << r.why;
  EXPECT_EQ(r.tried.size(), 7u);
  // A budget that the low rates would overrun: they are not tried, and it says so.
  FakeModel slow;
  slow.service = 0.02;
  limits.max_seconds = 30;  // 1,000 queries at 50/s take 20 s, at 25/s 40 s
  const ServerResult cut = FindServerRate(slow.query(), slow.service, limits, slow.clock());
  EXPECT_FALSE(cut.found);
  EXPECT_EQ(cut.tried.size(), 1u);
  EXPECT_NE(cut.why.find("past the search's 30 s"), std::string::npos) << cut.why;
  EXPECT_LE(slow.now, 30.0);
  limits.queries_per_rate = 10;
  EXPECT_THROW(FindServerRate(m.query(), m.service, limits, m.clock()), std::invalid_argument);
}

}  // namespace
}  // namespace perfbench::server
