// The process-wide workload registry and variant selection.
#pragma once

#include <string>
#include <vector>

#include "perfbench/workload.h"

namespace perfbench {

struct RegisteredWorkload {
  WorkloadInfo info;
  WorkloadFactory factory;
};

// One runnable variant: a workload and one set of params.
struct VariantRef {
  const RegisteredWorkload* workload = nullptr;
  Params params;
  std::string FullName() const;  // "amp/mlp/precision:bf16/size:quick"
};

// Variants of one workload that are run interleaved (see WorkloadInfo::compare_param).
struct VariantGroup {
  const RegisteredWorkload* workload = nullptr;
  std::vector<Params> variants;
};

// All registered workloads, sorted by suite then name.
std::vector<const RegisteredWorkload*> AllWorkloads();
// Suite names, sorted; hidden suites included only when `include_hidden`.
std::vector<std::string> SuiteNames(bool include_hidden);

struct Selection {
  std::vector<std::string> suites;  // empty: every non-hidden suite
  std::string filter;               // ECMAScript regex searched in FullName(); empty: all
  bool quick = false;
  // Replaces the values of a param in every variant that has it, in order
  // (e.g. {"world_size", {"1", "2", "4"}}), dropping duplicates.
  std::vector<std::pair<std::string, std::vector<std::string>>> overrides;
};

// Expands and filters variants. Throws std::invalid_argument naming an unknown
// suite or a malformed regex.
std::vector<VariantRef> SelectVariants(const Selection& selection);
// Groups selected variants for interleaving, keeping registry order.
std::vector<VariantGroup> GroupVariants(const std::vector<VariantRef>& variants);

}  // namespace perfbench
