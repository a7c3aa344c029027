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

}  // namespace perfbench
