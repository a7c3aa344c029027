#include "derived_metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace perfbench {
namespace {

double Pair(DerivedMetric::Kind kind, double ref, double value, double scale) {
  switch (kind) {
    case DerivedMetric::Kind::kReferenceOverVariant: return ref / value;
    case DerivedMetric::Kind::kVariantOverScaledReference: return value / (scale * ref);
    case DerivedMetric::Kind::kAbsDifference: return std::fabs(value - ref);
  }
  return 0;
}

// compare_param(variant) / compare_param(reference), e.g. N ranks / 1 rank.
double Scale(const WorkloadInfo& info, const Params& reference, const Params& variant) {
  try {
    return std::stod(variant.Get(info.compare_param)) / std::stod(reference.Get(info.compare_param));
  } catch (const std::exception&) {
    throw std::invalid_argument(info.FullName() + ": " + info.compare_param + " is not numeric; it cannot scale");
  }
}

}  // namespace

const std::string& ReferenceOf(const WorkloadInfo& info, const DerivedMetric& d) {
  return d.reference_value.empty() ? info.reference_value : d.reference_value;
}

void DeriveMetrics(const WorkloadInfo& info, const Params& reference,
                   const std::map<std::string, std::vector<double>>& reference_samples, const Params& variant,
                   std::map<std::string, std::vector<double>>& samples, bool is_reference) {
  for (const auto& d : info.derived) {
    if (!info.FindMetric(d.metric)) continue;
    if (ReferenceOf(info, d) != reference.Get(info.compare_param)) continue;
    const bool self = d.kind == DerivedMetric::Kind::kVariantOverScaledReference;
    if (is_reference && !self) continue;
    auto ra = reference_samples.find(d.from);
    auto rb = samples.find(d.from);
    if (ra == reference_samples.end() || rb == samples.end()) continue;
    // Copies: `samples` may be the reference's own map, and it grows here.
    const std::vector<double> a = ra->second, b = rb->second;
    const double scale = self ? Scale(info, reference, variant) : 1.0;
    auto& out = samples[d.metric];
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) out.push_back(Pair(d.kind, a[i], b[i], scale));
  }
}

}  // namespace perfbench
