#include "perfbench/server_scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <thread>

#include "perfbench/statistics.h"

namespace perfbench::server {

std::vector<double> PoissonArrivals(double rate, size_t n, uint64_t seed) {
  if (!(rate > 0) || !std::isfinite(rate)) throw std::invalid_argument("arrival rate must be positive");
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  std::vector<double> t(n);
  double now = 0;
  for (auto& x : t) x = now += gap(rng);
  return t;
}

std::vector<double> ServeAtArrivals(const std::vector<double>& arrivals, const std::function<void()>& query,
                                    const Clock& clock, double* busy_s) {
  std::vector<double> latency;
  latency.reserve(arrivals.size());
  const double start = clock.now();
  double busy = 0;
  for (const double a : arrivals) {
    const double due = start + a;
    if (clock.now() < due) clock.sleep_until(due);  // idle until it arrives; a late one waited in the queue
    const double begin = clock.now();
    query();
    const double end = clock.now();
    busy += end - begin;
    latency.push_back(end - due);
  }
  if (busy_s) *busy_s = busy;
  return latency;
}

namespace {

RatePoint Measure(double rate, const std::function<void()>& query, const SearchLimits& limits, const Clock& clock) {
  double busy = 0;
  const auto latency = ServeAtArrivals(PoissonArrivals(rate, limits.queries_per_rate, limits.seed), query, clock, &busy);
  RatePoint p;
  p.rate = rate;
  p.queries = latency.size();
  p.p50 = stats::PercentileNearestRank(latency, 0.50);
  p.p90 = stats::PercentileNearestRank(latency, 0.90);
  p.p99 = stats::PercentileNearestRank(latency, 0.99);
  p.utilisation = rate * busy / static_cast<double>(latency.size());
  p.meets = p.p99 <= limits.latency_bound_s && p.utilisation < kMaxUtilisation;
  return p;
}

}  // namespace

namespace {

// The search's state: the highest rate that met the bound, the lowest that did not.
struct Search {
  ServerResult r;
  double pass = 0, fail = 0;
  void Fold(const RatePoint& p) {
    if (p.meets) {
      pass = p.rate;
      r.best = p;
    } else {
      fail = p.rate;
    }
  }
};

void NotFound(ServerResult& r, const SearchLimits& limits) {
  if (r.tried.empty()) {
    r.why = r.cut;
    return;
  }
  const RatePoint& low = r.tried.back();
  r.why = fmt::format("p99 {:.4g} s at {:.4g} queries/s exceeds the {:.4g} s bound", low.p99, low.rate,
                      limits.latency_bound_s);
  if (!r.cut.empty()) r.why += "; " + r.cut;
}

}  // namespace

ServerResult FindServerRate(const std::function<void()>& query, double service_s, const SearchLimits& limits,
                            const Clock& clock) {
  if (!(service_s > 0) || !(limits.latency_bound_s > 0) || limits.queries_per_rate < 100)
    throw std::invalid_argument("server scenario: needs a positive service time and bound, and >= 100 queries a rate");
  Search s;
  const double start = clock.now();
  // A rate whose arrivals would end past the budget is not measured: it
  // reads as a failure at that rate, and `cut` says so.
  auto measure = [&](double rate) {
    const double needs = static_cast<double>(limits.queries_per_rate) / rate;
    if (clock.now() - start + needs > limits.max_seconds) {
      if (s.r.cut.empty())
        s.r.cut = fmt::format("{:.4g} queries/s not tried: its {} queries arrive over {:.3g} s, past the search's {:g} s",
                              rate, limits.queries_per_rate, needs, limits.max_seconds);
      RatePoint p;
      p.rate = rate;
      return p;
    }
    s.r.tried.push_back(Measure(rate, query, limits, clock));
    return s.r.tried.back();
  };
  // Bracket: 1 / service_s saturates the server. Halve until the bound
  // holds; when it holds there already (a bound of many service times, or a
  // service time measured slow), double until it fails.
  double rate = 1 / service_s;
  s.Fold(measure(rate));
  if (s.pass > 0)
    for (int i = 0; i < 4 && s.fail == 0; ++i) s.Fold(measure(rate *= 2));
  else
    for (int i = 0; i < 6 && s.pass == 0; ++i) s.Fold(measure(rate /= 2));
  if (s.pass == 0) {
    NotFound(s.r, limits);
    return s.r;
  }
  s.r.found = true;
  // Rates span orders of magnitude: bisect in log rate.
  for (int i = 0; i < limits.steps && s.fail > 0; ++i) s.Fold(measure(std::sqrt(s.pass * s.fail)));
  return s.r;
}

double MD1LatencyCdf(double lambda, double d, double t) {
  const double rho = lambda * d;
  if (!(rho < 1) || !(rho > 0)) throw std::invalid_argument("M/D/1 needs 0 < lambda * d < 1");
  const double w = t - d;  // the wait
  if (w < 0) return 0;
  // Erlang: P(W <= w) = (1 - rho) sum_{k=0}^{floor(w/d)} (lambda (k d - w))^k / k! e^{-lambda (k d - w)};
  // alternating terms, summed in long double.
  // Alternating terms: summed in long double, exact enough for lambda * w up
  // to about 15 (rho <= 0.7 at p99), where they peak near e^30.
  long double sum = 0;
  const auto kmax = static_cast<long>(std::floor(w / d));
  for (long k = 0; k <= kmax; ++k) {
    const long double x = static_cast<long double>(lambda) * (k * d - w);  // <= 0
    long double term = 0;
    if (k == 0) term = std::exp(-x);
    else if (x < 0) term = std::exp(k * std::log(-x) - std::lgamma(k + 1.0L) - x);
    sum += k % 2 == 1 ? -term : term;
  }
  return std::clamp(static_cast<double>((1 - rho) * sum), 0.0, 1.0);
}

double MD1LatencyQuantile(double lambda, double d, double q) {
  double lo = d, hi = d;
  while (MD1LatencyCdf(lambda, d, hi) < q) hi = 2 * hi;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (MD1LatencyCdf(lambda, d, mid) < q ? lo : hi) = mid;
  }
  return hi;
}

Clock RealClock() {
  using Steady = std::chrono::steady_clock;
  const auto origin = Steady::now();
  const auto now = [origin] { return std::chrono::duration<double>(Steady::now() - origin).count(); };
  const auto sleep_until = [now](double t) {
    if (const double ahead = t - now() - 200e-6; ahead > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
    while (now() < t) {
    }
  };
  return {now, sleep_until};
}

}  // namespace perfbench::server
