#include "gate/history.h"

#include <algorithm>
#include <cstdint>
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

namespace {

// A run whose medians belong in the candidate's history: finished, the same
// host and conditions, and not rejected (or left undecided) by a gate.
bool Usable(Store& store, const RunRecord& r, const RunRecord& candidate) {
  if (!(r.status == RunStatus::kComplete || r.status == RunStatus::kImported) || !SameHostConditions(store, r, candidate))
    return false;
  const auto verdict = store.GetRunVerdict(r.id);
  return !verdict || *verdict == "pass" || *verdict == "accepted";
}

// One series of run medians per result key, in the runs' order.
History FromRuns(const std::vector<std::vector<ResultRecord>>& runs) {
  History h;
  std::map<std::string, std::vector<double>> processes, within;
  for (const auto& run : runs)
    for (const auto& r : run)
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

}  // namespace

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
  for (int64_t id : ids)  // ascending: time order
    if (Usable(store, store.GetRun(id), candidate.run)) usable.push_back(id);
  if (usable.size() > kMaxHistoryRuns) usable.erase(usable.begin(), usable.end() - kMaxHistoryRuns);
  std::vector<std::vector<ResultRecord>> results;
  for (int64_t id : usable) results.push_back(store.GetResults(id));
  return FromRuns(results);
}

History LoadMachineHistory(Store& store, const RunData& baseline, const RunData& candidate) {
  std::set<std::string> keys;
  for (const auto* d : {&baseline, &candidate})
    for (const auto& r : d->results) keys.insert(ResultKey(r));
  const std::set<int64_t> own(candidate.run_ids.begin(), candidate.run_ids.end());
  const int64_t first = own.empty() ? INT64_MAX : *own.begin();
  std::vector<std::vector<ResultRecord>> kept;  // newest first
  size_t scanned = 0;
  for (const RunRecord& r : store.ListRuns()) {
    if (kept.size() >= kMaxHistoryRuns || scanned >= kMachineHistoryScan) break;
    if (own.count(r.id) || r.id >= first) continue;  // earlier runs only
    ++scanned;
    if (!Usable(store, r, candidate.run)) continue;
    auto results = store.GetResults(r.id);
    if (std::any_of(results.begin(), results.end(), [&](const ResultRecord& x) { return keys.count(ResultKey(x)) > 0; }))
      kept.push_back(std::move(results));
  }
  std::reverse(kept.begin(), kept.end());  // time order
  return FromRuns(kept);
}

}  // namespace perfbench::gate
