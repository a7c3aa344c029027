// MLPerf LoadGen's server scenario, as a harness core with no torch: queries
// arrive as a seeded Poisson process at a target rate and are served one at a
// time in arrival order (one issuer, as LoadGen issues); a query's latency is
// its completion minus its arrival, so queueing counts. The result is the
// highest rate whose p99 latency stays within the model's bound, found by a
// bounded search. The clock is a parameter, so tests can drive a fake model
// with a known service time in virtual time and check the percentiles
// against the M/D/1 queue's exact waiting-time distribution.
//
// How this differs from LoadGen: LoadGen's server runs need at least 270,336
// queries and 600 s per rate (and its early-stopping tables); here each rate
// is judged on `queries_per_rate` queries (default 1,000, so the p99 rests on
// the 10 slowest), and every figure carries the number of queries behind it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace perfbench::server {

// Arrival times in seconds from 0 of `n` queries of a Poisson process of
// `rate` queries per second (exponential gaps), the same for the same seed.
std::vector<double> PoissonArrivals(double rate, size_t n, uint64_t seed);

// How the scenario reads and waits for time: a real clock, or a virtual one.
struct Clock {
  std::function<double()> now;                // seconds, monotonic
  std::function<void(double)> sleep_until;    // returns at or after the given time
};

// The steady clock; sleep_until sleeps to within 200 us of the time, then
// spins (a query may be shorter than a timer tick).
Clock RealClock();

// Serves the queries at their arrival times (relative to the clock's time at
// the call), one at a time; returns each query's latency in seconds, and in
// `busy_s` (when given) the seconds spent serving.
std::vector<double> ServeAtArrivals(const std::vector<double>& arrivals, const std::function<void()>& query,
                                    const Clock& clock, double* busy_s = nullptr);

struct RatePoint {
  double rate = 0;     // target queries per second
  size_t queries = 0;  // behind each percentile
  double p50 = 0, p90 = 0, p99 = 0;
  // rate x mean service time: at 1 or more the queue grows without end,
  // and a finite run's p99 only says how few queries it had.
  double utilisation = 0;
  bool meets = false;  // p99 <= the bound and utilisation < kMaxUtilisation
};

// Near saturation a queue needs far more queries than a run has to show its
// p99: a rate this close to the service rate never meets the bound.
inline constexpr double kMaxUtilisation = 0.99;

struct SearchLimits {
  double latency_bound_s = 0;    // LoadGen's targets: ResNet-50 0.015, BERT 0.130
  size_t queries_per_rate = 1000;
  int steps = 7;                 // bisections after the bracket
  uint64_t seed = 42;
  // The whole search's time: a rate whose queries would not arrive within
  // what is left is not tried (a slow low rate takes queries / rate seconds).
  double max_seconds = 60;
};

struct ServerResult {
  bool found = false;          // some rate met the bound
  RatePoint best;              // the highest rate that met it
  std::vector<RatePoint> tried;
  std::string why;             // when !found: the lowest rate tried and its p99, or the budget
  std::string cut;             // when the budget ended the search early: what was left out
};

// Measures `query` at target rates: from the rate one query's `service_s`
// allows (1 / service_s, the saturation bound) down by halves until the p99
// meets the bound (at most 6 halvings), or up by doublings while it does (at
// most 4), then `steps` bisections (in log rate) between the highest rate
// that met it and the lowest that did not.
ServerResult FindServerRate(const std::function<void()>& query, double service_s, const SearchLimits& limits,
                            const Clock& clock);

// The M/D/1 queue (Poisson arrivals at `lambda`, one server, deterministic
// service `d`, lambda * d < 1): P(latency <= t), latency = wait + d, by
// Erlang's formula for the waiting time; and its quantile q.
double MD1LatencyCdf(double lambda, double d, double t);
double MD1LatencyQuantile(double lambda, double d, double q);

}  // namespace perfbench::server
