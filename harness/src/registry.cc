#include "registry.h"

#include "perfbench/backend.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

namespace perfbench {
namespace {

// Function-local static: registration happens from other translation units'
// static initialisers, whose order is unspecified.
std::vector<RegisteredWorkload>& Registry() {
  static std::vector<RegisteredWorkload> registry;
  return registry;
}

}  // namespace

const MetricSpec* WorkloadInfo::FindMetric(std::string_view metric) const {
  for (const auto& m : metrics)
    if (m.name == metric) return &m;
  return nullptr;
}

const std::string* WorkloadInfo::OptionalDefault(const std::string& param) const {
  const bool declared = std::any_of(variants.begin(), variants.end(), [&](const Params& p) { return p.Has(param); });
  if (declared) return nullptr;
  for (const auto& k : knobs)
    for (const auto& [key, value] : k.defaults.items())
      if (key == param) return &value;
  if (auto it = optional_params.find(param); it != optional_params.end()) return &it->second;
  return nullptr;
}

namespace {
std::map<std::string, InternalCommand>& InternalCommands() {
  static std::map<std::string, InternalCommand> commands;
  return commands;
}
}  // namespace

bool RegisterInternalCommand(const std::string& name, InternalCommand command) {
  InternalCommands()[name] = std::move(command);
  return true;
}

const InternalCommand* FindInternalCommand(const std::string& name) {
  auto it = InternalCommands().find(name);
  return it == InternalCommands().end() ? nullptr : &it->second;
}

bool RegisterWorkload(WorkloadInfo info, WorkloadFactory factory) {
  // The runner times the steps of a workload without an engine: one that
  // reports throughput gets its control-normalised throughput too (not the
  // hidden suites: the control itself, and selftest's synthetic step times).
  if (!info.engine && !info.hidden && info.FindMetric("throughput") && !info.FindMetric(kThroughputPerControl.name))
    info.metrics.push_back(kThroughputPerControl);
  Registry().push_back({std::move(info), std::move(factory)});
  return true;
}

std::string VariantRef::FullName() const {
  std::string name = workload->info.FullName();
  if (!params.empty()) {
    // Two appends, not "/" + Encode(): GCC 12 warns falsely on that (PR 105651).
    name += '/';
    name += params.Encode();
  }
  return name;
}

std::vector<const RegisteredWorkload*> AllWorkloads() {
  std::vector<const RegisteredWorkload*> out;
  for (const auto& w : Registry()) out.push_back(&w);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    return std::tie(a->info.suite, a->info.name) < std::tie(b->info.suite, b->info.name);
  });
  return out;
}

std::vector<std::string> SuiteNames(bool include_hidden) {
  std::set<std::string> names;
  for (const auto* w : AllWorkloads())
    if (include_hidden || !w->info.hidden) names.insert(w->info.suite);
  return {names.begin(), names.end()};
}

namespace {

void CheckSuites(const std::vector<std::string>& suites) {
  const auto known = SuiteNames(/*include_hidden=*/true);
  for (const auto& s : suites) {
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("unknown suite '" + s + "' (known: " + list + ")");
    }
  }
}

// A workload the suites select: the named ones, or every visible one when
// none is named.
bool InSuites(const RegisteredWorkload& w, const std::vector<std::string>& suites) {
  const bool named = std::find(suites.begin(), suites.end(), w.info.suite) != suites.end();
  return suites.empty() ? !w.info.hidden : named;
}

std::regex CompileFilter(const std::string& filter) {
  if (filter.empty()) return {};
  try {
    return std::regex(filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--filter '" + filter + "' is not a valid regex: " + e.what());
  }
}

// A declared variant with the overrides applied: one variant per value (the
// last override of a param wins), in the declared param order; an optional
// param (WorkloadInfo::OptionalDefault) overridden is added after them, and
// left out where its value is the default.
std::vector<Params> Expand(const WorkloadInfo& info, const Params& p, const std::vector<ParamOverride>& overrides) {
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  for (const auto& [key, value] : p.items()) {
    axes.push_back({key, {value}});
    for (const auto& o : overrides)
      if (o.param == key) axes.back().second = o.values;
  }
  std::map<std::string, std::vector<std::string>> optional;
  for (const auto& o : overrides)
    if (!p.Has(o.param) && info.OptionalDefault(o.param)) optional[o.param] = o.values;
  for (const auto& [key, values] : optional) axes.push_back({key, values});
  std::vector<Params> out;
  for (Params c : Params::Product(axes)) {
    for (const auto& [key, values] : optional)
      if (c.Get(key) == *info.OptionalDefault(key)) c = c.Without(key);
    out.push_back(std::move(c));
  }
  return out;
}

// A declared variant with its per-device params (WorkloadInfo::device_params)
// for `device` ("auto": the backend's choice) where it lacks them.
Params WithDeviceParams(const WorkloadInfo& info, const Params& declared, std::string device) {
  if (!info.device_params) return declared;
  if (device != "cpu" && device != "cuda") device = GetDeviceBackend().CudaAvailable() ? "cuda" : "cpu";
  Params out = declared;
  const Params extra = info.device_params(declared, device);
  for (const auto& [key, value] : extra.items())
    if (!out.Has(key)) out.Set(key, value);
  return out;
}

std::vector<Params> ExpandAll(const RegisteredWorkload& w, const RunSettings& s) {
  const std::vector<Params> declared = w.info.settings_variants ? w.info.settings_variants(s)
                                       : (s.quick && !w.info.quick_variants.empty()) ? w.info.quick_variants
                                                                                     : w.info.variants;
  std::vector<Params> expanded;
  for (const auto& d : declared) {
    const Params p = WithDeviceParams(w.info, d, s.device);
    for (auto& c : Expand(w.info, p, s.overrides)) {
      const bool seen = std::any_of(expanded.begin(), expanded.end(),
                                    [&](const Params& e) { return e.Encode() == c.Encode(); });
      if (!seen) expanded.push_back(std::move(c));
    }
  }
  return expanded;
}

}  // namespace

std::vector<VariantRef> SelectVariants(const RunSettings& s) {
  CheckSuites(s.suites);
  const std::regex re = CompileFilter(s.filter);
  std::vector<VariantRef> out;
  for (const auto* w : AllWorkloads()) {
    if (!InSuites(*w, s.suites)) continue;
    for (const auto& p : ExpandAll(*w, s)) {
      VariantRef ref{w, p};
      if (!s.filter.empty() && !std::regex_search(ref.FullName(), re)) continue;
      out.push_back(std::move(ref));
    }
  }
  return out;
}

void CheckOverridesKnown(const RunSettings& s) {
  CheckSuites(s.suites);
  std::set<std::string> known;  // the params of the selected suites' workloads
  for (const auto* w : AllWorkloads()) {
    if (!InSuites(*w, s.suites)) continue;
    for (const auto& o : s.overrides)
      if (w->info.OptionalDefault(o.param)) known.insert(o.param);
    known.insert(w->info.run_params.begin(), w->info.run_params.end());
    for (const auto& p : ExpandAll(*w, s))
      for (const auto& item : p.items()) known.insert(item.first);
  }
  const std::vector<std::string> rank = RankParams();  // --world-sizes sets them, for the suites that have them
  for (const auto& o : s.overrides) {
    if (known.count(o.param) || std::find(rank.begin(), rank.end(), o.param) != rank.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw std::invalid_argument("--param '" + o.param + "': no workload of the selected suites has this param (theirs: " +
                                list + "; see `perfbench list`)");
  }
}

std::string SkipReason(const VariantRef& v, const std::string& device) {
  const auto& info = v.workload->info;
  for (const auto& need : info.needs)
    if (need == "cuda" && device != "cuda") return "needs cuda; running on " + device;
  return info.skip_reason ? info.skip_reason(v.params, device) : "";
}

std::vector<std::string> RankParams() {
  std::set<std::string> names;
  for (const auto* w : AllWorkloads())
    if (!w->info.rank_param.empty()) names.insert(w->info.rank_param);
  return {names.begin(), names.end()};
}

std::string GroupName(const VariantGroup& g) {
  std::string name = g.workload->info.FullName();
  Params shared = g.variants.front().Without(g.workload->info.compare_param);
  if (!shared.empty()) {
    name += '/';
    name += shared.Encode();
  }
  return name;
}

std::vector<VariantGroup> GroupVariants(const std::vector<VariantRef>& variants) {
  std::vector<VariantGroup> groups;
  for (const auto& v : variants) {
    const auto& cp = v.workload->info.compare_param;
    VariantGroup* target = nullptr;
    if (!cp.empty()) {
      for (auto& g : groups) {
        if (g.workload == v.workload && g.variants.front().Without(cp) == v.params.Without(cp)) {
          target = &g;
          break;
        }
      }
    }
    if (target == nullptr) {
      groups.push_back({v.workload, {}});
      target = &groups.back();
    }
    target->variants.push_back(v.params);
  }
  return groups;
}

}  // namespace perfbench
