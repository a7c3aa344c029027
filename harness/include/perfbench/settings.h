// RunSettings: the tuning knobs of a run. None of them changes what a workload
// *is*; they change how long and how often it is measured.
#pragma once

#include <cstdint>
#include <string>

#include "perfbench/launch.h"

namespace perfbench {

struct RunSettings {
  int warmup_steps = 3;     ///< Steps run and discarded before timing, per variant.
  int repetitions = 10;     ///< Timed steps recorded per variant (samples).
  double timeout_s = 300;   ///< Wall-clock limit per comparison group; exceeded -> failed.
  uint64_t seed = 42;       ///< Seeds model init and data; stored with the run.
  bool quick = false;       ///< Small problem sizes (CI, smoke runs).
  std::string device = "cpu";  ///< Resolved device: "cpu" or "cuda" (never "auto" here).
  int threads = 0;          ///< Intra-op threads; 0: the library default.
  DistributedLaunch launch; ///< How multi-rank workloads start their ranks.
  std::string data_dir;     ///< Dataset cache (suites that need "data").
};

}  // namespace perfbench
