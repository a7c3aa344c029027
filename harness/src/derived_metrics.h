// Metrics the runner derives from a group's reference variant, as the
// workload declares them (WorkloadInfo::derived; see DerivedMetric).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "perfbench/workload.h"

namespace perfbench {

// The compare_param value a derived metric is taken against.
const std::string& ReferenceOf(const WorkloadInfo& info, const DerivedMetric& d);

// Appends every declared derived metric of `variant` whose reference value
// (ReferenceOf) is `reference`'s to `samples`, paired per repetition with
// the reference's (the shorter series sets the count).
void DeriveMetrics(const WorkloadInfo& info, const Params& reference,
                   const std::map<std::string, std::vector<double>>& reference_samples, const Params& variant,
                   std::map<std::string, std::vector<double>>& samples, bool is_reference);

}  // namespace perfbench
