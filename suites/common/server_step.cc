#include "server_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace perfbench::common {

Status ServerRepetition(const std::function<void()>& query, const server::SearchLimits& limits, StepRecorder& rec,
                        std::string& note) {
  const auto once = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    query();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  query();
  double service = once();
  for (int i = 0; i < 4; ++i) service = std::min(service, once());
  const server::ServerResult r = server::FindServerRate(query, service, limits, server::RealClock());
  if (!r.found) return Status::Error("server scenario: " + r.why);
  rec.SetStepSeconds(1 / r.best.rate);
  rec.Add("server_rate", r.best.rate);
  rec.Add("latency_p50", r.best.p50);
  rec.Add("latency_p90", r.best.p90);
  rec.Add("latency_p99", r.best.p99);
  note = fmt::format("p99 <= {:g} ms at {:.4g} queries/s ({} rates tried, {} queries each, Poisson arrivals seeded {}; "
                     "one query at a time, latency from arrival){}",
                     1000 * limits.latency_bound_s, r.best.rate, r.tried.size(), limits.queries_per_rate, limits.seed,
                     r.cut.empty() ? "" : "; " + r.cut);
  return Status::Ok();
}

}  // namespace perfbench::common
