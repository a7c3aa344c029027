// The process-wide workload registry and variant selection.
#pragma once

#include <string>
#include <vector>

#include "perfbench/settings.h"
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

// Expands and filters the variants `settings` selects (suites, filter, quick,
// overrides). Throws std::invalid_argument naming an unknown suite or a
// malformed regex.
std::vector<VariantRef> SelectVariants(const RunSettings& settings);
// Throws std::invalid_argument for an override (`--param KEY=V`) whose KEY no
// workload of the selected suites declares, takes as optional or reads as a
// run param: a typo would otherwise measure the defaults. Rank params
// (--world-sizes) pass. The user's flags are checked; a stored run's settings
// (gate) are not, as variants are matched by key there.
void CheckOverridesKnown(const RunSettings& settings);
// Why `variant` cannot run on `device` ("needs cuda; running on cpu", or the
// workload's own skip_reason); empty when it can.
std::string SkipReason(const VariantRef& variant, const std::string& device);
// The params every workload names as its rank count (WorkloadInfo::rank_param).
std::vector<std::string> RankParams();
// Groups selected variants for interleaving, keeping registry order.
std::vector<VariantGroup> GroupVariants(const std::vector<VariantRef>& variants);
// "suite/workload" and the params its variants share ("amp/mlp/size:quick").
std::string GroupName(const VariantGroup& group);

}  // namespace perfbench
