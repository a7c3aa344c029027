#include "advice_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace perfbench {

size_t Trial::Runnable() const {
  return static_cast<size_t>(
      std::count_if(variants.begin(), variants.end(), [](const TrialVariant& v) { return v.skip.empty(); }));
}

namespace {

// `v` with every knob param at its default: a declared param set to it, an
// optional one left out.
VariantRef AtDefaults(const VariantRef& v) {
  const WorkloadInfo& info = v.workload->info;
  Params p = v.params;
  for (const auto& k : info.knobs)
    for (const auto& [key, value] : k.defaults.items()) {
      if (info.OptionalDefault(key))
        p = p.Without(key);
      else if (p.Has(key))
        p.Set(key, value);
    }
  return {v.workload, p};
}

// `base` changed by `setting`, optional params after the declared ones in
// name order (as `--param` adds them); nullopt when the setting names a
// param the variant does not have.
std::optional<VariantRef> Applied(const VariantRef& base, const Params& setting) {
  const WorkloadInfo& info = base.workload->info;
  Params p = base.params;
  std::map<std::string, std::string> optional;
  for (const auto& [key, value] : setting.items()) {
    if (const std::string* def = info.OptionalDefault(key)) {
      if (value != *def) optional[key] = value;
    } else if (p.Has(key)) {
      p.Set(key, value);
    } else {
      return std::nullopt;
    }
  }
  for (const auto& [key, value] : optional) p.Set(key, value);
  return VariantRef{base.workload, p};
}

std::vector<ParamOverride> Overrides(const Params& setting) {
  std::vector<ParamOverride> out;
  for (const auto& [key, value] : setting.items()) out.push_back({key, {value}});
  return out;
}

bool Wanted(const std::vector<std::string>& only, const std::string& knob) {
  return only.empty() || std::find(only.begin(), only.end(), knob) != only.end();
}

// One trial per knob setting of the baselines' workloads, in first-seen order.
std::vector<Trial> KnobTrials(const std::vector<VariantRef>& baselines, const std::string& device,
                              const std::vector<std::string>& only) {
  std::vector<Trial> trials;
  for (const auto& b : baselines) {
    for (const auto& k : b.workload->info.knobs) {
      if (!Wanted(only, k.name)) continue;
      for (const auto& setting : k.settings) {
        const auto candidate = Applied(b, setting);
        if (!candidate || candidate->FullName() == b.FullName()) continue;
        auto t = std::find_if(trials.begin(), trials.end(),
                              [&](const Trial& x) { return x.knob == k.name && x.setting == setting.Encode(); });
        if (t == trials.end()) t = trials.insert(trials.end(), Trial{k.name, setting.Encode(), Overrides(setting), -1, {}});
        t->variants.push_back({b, *candidate, SkipReason(*candidate, device)});
      }
    }
  }
  return trials;
}

std::vector<Trial> ThreadTrials(const std::vector<VariantRef>& baselines, const RunSettings& s, int hardware) {
  const int own = s.threads > 0 ? s.threads : hardware;
  std::vector<Trial> trials;
  for (int n : std::set<int>{1, hardware / 2, hardware}) {
    if (n < 1 || n == own) continue;
    Trial t{"threads", "threads:" + std::to_string(n), {}, n, {}};
    for (const auto& b : baselines) t.variants.push_back({b, b, ""});
    trials.push_back(std::move(t));
  }
  return trials;
}

}  // namespace

AdvicePlan PlanAdvice(const std::vector<VariantRef>& selected, const RunSettings& settings, int hardware_threads,
                      const std::vector<std::string>& only) {
  AdvicePlan plan;
  std::set<std::string> seen;
  for (const auto& v : selected) {
    VariantRef b = AtDefaults(v);
    if (!seen.insert(b.FullName()).second) continue;
    if (std::string why = SkipReason(b, settings.device); !why.empty())
      plan.skipped.emplace_back(std::move(b), std::move(why));
    else
      plan.baselines.push_back(std::move(b));
  }
  std::set<std::string> known{"threads"};
  for (const auto& b : plan.baselines)
    for (const auto& k : b.workload->info.knobs) known.insert(k.name);
  for (const auto& k : only)
    if (!known.count(k)) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument("--knob '" + k + "': no selected workload has it (" + list + ")");
    }
  plan.trials = KnobTrials(plan.baselines, settings.device, only);
  if (Wanted(only, "threads"))
    for (auto& t : ThreadTrials(plan.baselines, settings, hardware_threads)) plan.trials.push_back(std::move(t));
  return plan;
}

std::vector<ParamOverride> DefaultOverrides(const AdvicePlan& plan) {
  std::vector<ParamOverride> out;
  std::set<std::string> seen;
  for (const auto& b : plan.baselines)
    for (const auto& k : b.workload->info.knobs)
      for (const auto& [key, value] : k.defaults.items())
        if (seen.insert(key).second) out.push_back({key, {value}});
  return out;
}

std::string PrimaryMetric(const WorkloadInfo& info) {
  for (const char* m : {"throughput", "step_throughput"})
    if (info.FindMetric(m)) return m;
  return "step_time";
}

std::string MemoryMetric(const WorkloadInfo& info) {
  for (const char* m : {"peak_memory", "peak_rss", "model_bytes"})
    if (info.FindMetric(m)) return m;
  return "";
}

}  // namespace perfbench
