// One repetition of MLPerf LoadGen's server scenario (perfbench/server_scenario.h)
// for a workload whose query is one answered call: shared by the quant and
// model suites.
#pragma once

#include <functional>
#include <string>

#include "perfbench/server_scenario.h"
#include "perfbench/status.h"
#include "perfbench/workload.h"

namespace perfbench::common {

// Measures the service time as the queries will see it (the least disturbed
// of 5 answered queries, after one untimed), searches for the highest rate
// whose p99 stays within `limits` on the real clock, and records
// step_time = 1 / rate, server_rate and latency_p50/p90/p99 at that rate.
// `note` gets the result attribute "server" (the bound, the rate, the rates
// tried and the queries behind each). An error when no rate met the bound.
Status ServerRepetition(const std::function<void()>& query, const server::SearchLimits& limits, StepRecorder& rec,
                        std::string& note);

}  // namespace perfbench::common
