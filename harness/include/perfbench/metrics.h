// Metric declarations: every metric names its unit and direction exactly once.
#pragma once

#include <string>

namespace perfbench {

enum class Better { kLower, kHigher };

// Units are stored as strings in the database and JSON ("s", "samples/s",
// "bytes", "ratio", "GB/s", "1"), so they are part of the output contract.
struct MetricSpec {
  std::string name;  // "throughput"; a database key within one variant
  std::string unit;  // "samples/s"
  Better better = Better::kLower;
};

inline bool HigherIsBetter(const MetricSpec& m) { return m.better == Better::kHigher; }

// The control-normalised throughput (issue 38.2): each timed step is
// followed by a control block (DeviceBackend::ControlBlock: a pinned GEMM),
// and the step's throughput times that block's seconds is the work done in
// one block's time. A machine that runs slower slows the step and the block
// alike and the ratio stays; code that runs slower moves it. Declared for
// every workload whose steps the runner times and that reports throughput
// (registry.cc); informational in the default policy, judged where a policy
// or --per-control asks.
inline const MetricSpec kThroughputPerControl{"throughput_per_control", "samples/block", Better::kHigher};

}  // namespace perfbench
