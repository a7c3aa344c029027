#include "gate/history.h"

#include <algorithm>
#include <map>
#include <set>

#include "perfbench/statistics.h"
#include "two_level.h"

namespace perfbench::gate {

bool SameConditions(const RunRecord& r, const RunRecord& c) {
  if (r.profile_key != c.profile_key) return false;
  for (const char* k : {"threads", "quick", "device"})
    if (r.settings.value(k, nlohmann::json()) != c.settings.value(k, nlohmann::json())) return false;
  return true;
}

bool SameHostConditions(const Store& store, const RunRecord& r, const RunRecord& c) {
  return SameConditions(r, c) && (!store.IsServer() || r.machine == c.machine);
}

History LoadHistory(Store& store, const RunData& baseline, const RunData& candidate) {
  std::set<int64_t> ids(baseline.run_ids.begin(), baseline.run_ids.end());
  if (!candidate.run.label.empty())
    for (int64_t id : store.RunsWithLabel(candidate.run.label)) ids.insert(id);
  for (int64_t id : candidate.run_ids) ids.erase(id);
  if (!candidate.run_ids.empty()) {  // earlier runs only
    const int64_t first = *std::min_element(candidate.run_ids.begin(), candidate.run_ids.end());
    ids.erase(ids.lower_bound(first), ids.end());
  }
  std::vector<int64_t> usable;
  for (int64_t id : ids) {  // ascending: time order
    const RunRecord r = store.GetRun(id);
    if (!(r.status == RunStatus::kComplete || r.status == RunStatus::kImported) || !SameHostConditions(store, r, candidate.run))
      continue;
    // A run a gate rejected (or left undecided) teaches no noise.
    const auto verdict = store.GetRunVerdict(id);
    if (verdict && *verdict != "pass" && *verdict != "accepted") continue;
    usable.push_back(id);
  }
  if (usable.size() > kMaxHistoryRuns) usable.erase(usable.begin(), usable.end() - kMaxHistoryRuns);
  History h;
  std::map<std::string, std::vector<double>> processes, within;
  for (int64_t id : usable)
    for (const auto& r : store.GetResults(id))
      if (r.status == ResultStatus::kOk && !r.samples.empty()) {
        const std::string key = ResultKey(r);
        auto& series = h.series[key];
        if (series.empty()) series.emplace_back();
        series.front().push_back(stats::Median(r.samples));
        const auto medians = stats::ProcessMedians(stats::Groups(r.samples, r.process));
        processes[key].push_back(static_cast<double>(medians.size()));
        if (medians.size() >= 2 && std::all_of(medians.begin(), medians.end(), [](double x) { return x > 0; })) {
          const double sd = stats::StdDev(stats::Logs(medians));
          within[key].push_back(sd * sd);
        }
      }
  for (const auto& [key, p] : processes) h.processes_per_run[key] = stats::Median(p);
  for (const auto& [key, v] : within) h.process_var[key] = stats::Mean(v);
  return h;
}

}  // namespace perfbench::gate
