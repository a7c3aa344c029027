// Import of Google Benchmark's `--benchmark_format=json` (or
// `--benchmark_out_format=json`) output as a perfbench run.
//
// Mapping (each benchmark one workload, repetitions as samples):
//   suite      `gbench` (or the caller's choice)
//   workload   the benchmark's `run_name` ("BM_Copy/64/real_time")
//   params     `threads` when the benchmark ran on more than one thread
//   metrics    real_time and cpu_time (converted to s, lower is better),
//              items_per_second (items/s) and bytes_per_second (B/s),
//              higher is better; one sample per `run_type: iteration` entry.
//   Aggregates (mean, median, stddev, cv) are recomputed by perfbench from the
//   samples and not read. User counters are not imported: their direction is
//   unknown. A benchmark with `error_occurred` is a failed result.
//   Fingerprint from `context`: host_name, num_cpus, mhz_per_cpu, caches,
//   library_build_type, executable; `date` becomes started_at.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace perfbench {

// True when `doc` looks like Google Benchmark output ("context" and "benchmarks").
bool IsGoogleBenchmarkJson(const nlohmann::ordered_json& doc);

// Throws std::invalid_argument naming the first problem
// ("benchmarks[3].real_time: expected a number").
void RunFromGoogleBenchmarkJson(const nlohmann::ordered_json& doc, const std::string& suite, RunRecord* run,
                                std::vector<ResultRecord>* results);

}  // namespace perfbench
