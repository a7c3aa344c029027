// perfbench profile: each selected variant's steps under the backend's
// profiler (Kineto on the torch backend), one Chrome trace per variant.
// Never timed: a profiled step is not a measured one.
#pragma once

#include <string>
#include <vector>

#include "perfbench/backend.h"
#include "perfbench/settings.h"
#include "registry.h"
#include "store/records.h"

namespace perfbench {

struct ProfileOutcome {
  VariantRef variant;
  ResultStatus status = ResultStatus::kOk;
  std::string reason;  // why failed or skipped
  std::string trace;   // the Chrome trace written
  int steps = 0;       // steps recorded in it
};

// "amp/mlp/precision:fp32/size:quick" -> "amp_mlp_precision-fp32_size-quick.json".
std::string TraceFileName(const VariantRef& v);

// For each variant: set-up, settings.warmup_steps steps unprofiled, then
// `steps` steps under the profiler, step i inside "ProfilerStep#<i>", the
// trace written to `dir`/TraceFileName, tear-down. A variant that fails is
// recorded as failed and the others go on; one with its own engine (the
// micro suite) is skipped.
std::vector<ProfileOutcome> ProfileVariants(const std::vector<VariantRef>& variants, const RunSettings& settings,
                                            DeviceBackend& backend, int steps, const std::string& dir);

}  // namespace perfbench
