// Diagnose before optimising: which of four bottlenecks holds a variant back
// (the source documents' table), from what a run measured.
//
//   memory         peak memory above 90% of the device's capacity (RAM on a
//                  CPU, the first GPU's memory on a GPU), or a failure from
//                  running out of memory
//   communication  comm_share (ddp: exposed communication / step) above 30%
//                  (the source documents' threshold)
//   input          data_wait_share (dataloader: the share of a training step
//                  spent waiting for its batch) above 10%
//   compute        a reduced precision that runs slower than fp32 (amp
//                  speedup below 0.8: AMP should give 1.5-2x), named as
//                  emulated where the CPU lacks AVX512-BF16/AMX-BF16 (bf16) or
//                  AVX512-FP16/AMX-FP16 (fp16)
//                  and, with a profile trace (see trace_breakdown.h):
//                  GEMM/convolution at least half the step while reaching
//                  under 80% of the achievable peak (`perfbench peak`), or
//                  many short ops (dispatch/launch overhead)
//                  and, on a GPU: NVML utilisation during the timed steps
//                  below 80% (the source documents' warning; NVML counts
//                  time with any kernel running, so 100% can still leave
//                  most SMs idle: sm_activity, from GPM, says how many)
//   balanced       no threshold crossed (the evidence is listed all the same)
// A GPU that throttled (power or thermal violation time, slow-down clock
// events) during the timed steps marks the variant's timings as suspect.
// A variant's verdict is its most severe finding, in the order above
// (memory first: nothing else matters until a step fits). Failed and
// skipped variants that are not out of memory read "not measured".
// Findings carry their evidence, the threshold they crossed and remedies in
// order of expected gain (the source documents' first fixes).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <optional>

#include "perfbench/params.h"
#include "store/records.h"
#include "trace_breakdown.h"

namespace perfbench {

inline constexpr double kCommShareLimit = 0.30, kDataWaitLimit = 0.10, kMemoryLimit = 0.90, kPrecisionLimit = 0.8;
// With a profile trace: GEMM/convolution at least half the step and below
// 80% of the achievable peak (the source documents' utilisation warning);
// or many short ops (median under 20 us, at least 100 a step) with GEMM and
// convolution under half the step: dispatch/launch overhead.
inline constexpr double kMatmulShare = 0.5, kUtilisationLimit = 0.8, kShortOpS = 20e-6, kManyOps = 100;

struct Finding {
  std::string kind;       // memory | communication | input | compute
  std::string evidence;   // "comm_share 0.42 (median of 7)"
  std::string threshold;  // "above 0.30 (source documents)"
  std::vector<std::string> remedies;  // by expected gain
};

struct Diagnosis {
  std::string suite, workload;
  Params params;
  std::string verdict;  // memory | communication | input | compute | balanced | not measured
  std::string reason;   // why a variant failed or was skipped; empty when it ran
  std::map<std::string, double> breakdown;  // metric -> median (step_time, shares, peak_memory...)
  std::vector<Finding> findings;
  // Why the timings are suspect (the GPU throttled while they were taken);
  // empty when not. Not a verdict: it qualifies all of them.
  std::string suspect;
};

// What a diagnosis needs to know of the machine, from a run's fingerprint
// and settings.
struct MachineFacts {
  std::string device = "cpu";
  double memory_bytes = 0;  // of the device measured on; 0 when unknown
  std::set<std::string> cpu_isa;
  static MachineFacts FromRun(const RunRecord& run);
};

// One variant's evidence: its results' medians, status and reason.
struct Evidence {
  std::string suite, workload;
  Params params;
  ResultStatus status = ResultStatus::kOk;
  std::string reason;
  std::map<std::string, double> medians;
  std::map<std::string, size_t> counts;
  // The variant's result attributes (on a GPU: gpu_utilization, sm_activity,
  // throttled_s, clock_events from the GPU monitor, see gpu_monitor.h).
  std::map<std::string, std::string> attributes;
  std::optional<TraceBreakdown> trace;  // from `perfbench profile`, when one exists
  double achievable_flops = 0;          // `perfbench peak` for the variant's dtype; 0 when unknown
};

// Groups a run's results by variant (result order kept).
std::vector<Evidence> CollectEvidence(const std::vector<ResultRecord>& results);
Diagnosis Classify(const Evidence& e, const MachineFacts& m);

// The versioned JSON: {"schema_version": 1, "variants": [{"suite", "workload",
// "params", "verdict", "reason" (null when it ran), "suspect" (null unless
// the GPU throttled), "breakdown", "findings": [{"kind", "evidence",
// "threshold", "remedies"}]}]}.
nlohmann::ordered_json DiagnosisJson(const std::vector<Diagnosis>& d);
std::string DiagnosisText(const std::vector<Diagnosis>& d, bool markdown);

}  // namespace perfbench
