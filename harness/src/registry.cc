#include "registry.h"

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

std::vector<VariantRef> SelectVariants(const Selection& selection) {
  const auto known = SuiteNames(/*include_hidden=*/true);
  for (const auto& s : selection.suites) {
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("unknown suite '" + s + "' (known: " + list + ")");
    }
  }
  std::regex re;
  if (!selection.filter.empty()) {
    try {
      re = std::regex(selection.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("--filter '" + selection.filter + "' is not a valid regex: " + e.what());
    }
  }
  std::vector<VariantRef> out;
  for (const auto* w : AllWorkloads()) {
    const bool named = std::find(selection.suites.begin(), selection.suites.end(), w->info.suite) !=
                       selection.suites.end();
    if (selection.suites.empty() ? w->info.hidden : !named) continue;
    const auto& variants = (selection.quick && !w->info.quick_variants.empty()) ? w->info.quick_variants
                                                                                : w->info.variants;
    std::vector<Params> expanded;
    for (const auto& p : variants) {
      std::vector<Params> current = {p};
      for (const auto& [key, values] : selection.overrides) {
        if (!p.Has(key)) continue;
        std::vector<Params> next;
        for (const auto& c : current)
          for (const auto& value : values) {
            Params q = c;
            q.Set(key, value);
            next.push_back(std::move(q));
          }
        current = std::move(next);
      }
      for (auto& c : current) {
        const bool seen = std::any_of(expanded.begin(), expanded.end(),
                                      [&](const Params& e) { return e.Encode() == c.Encode(); });
        if (!seen) expanded.push_back(std::move(c));
      }
    }
    for (const auto& p : expanded) {
      VariantRef ref{w, p};
      if (!selection.filter.empty() && !std::regex_search(ref.FullName(), re)) continue;
      out.push_back(std::move(ref));
    }
  }
  return out;
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
