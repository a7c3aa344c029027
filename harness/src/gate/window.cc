#include "gate/window.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "changepoint.h"
#include "gate/history.h"
#include "perfbench/statistics.h"

namespace perfbench::gate {
namespace {

struct Candidate {
  RunRecord run;
  std::vector<ResultRecord> results;
};

// Complete runs of the label on these conditions, oldest first; notes what
// a gate rejected.
std::vector<Candidate> EligibleRuns(Store& store, const std::string& label, const RunRecord& conditions,
                                    int64_t before, Window* w) {
  std::vector<Candidate> out;
  auto ids = store.RunsWithLabel(label);  // newest first
  std::reverse(ids.begin(), ids.end());
  for (int64_t id : ids) {
    if (before != 0 && id >= before) continue;
    RunRecord r = store.GetRun(id);
    if ((r.status != RunStatus::kComplete && r.status != RunStatus::kImported) || !SameHostConditions(store, r, conditions))
      continue;
    ++w->considered;
    const auto verdict = store.GetRunVerdict(id);
    if (verdict && *verdict != "pass" && *verdict != "accepted") {
      w->dropped.push_back(fmt::format("run {}: its gate said {} (accept it with `perfbench baseline accept {}`)", id,
                                       *verdict, id));
      continue;
    }
    out.push_back({std::move(r), store.GetResults(id)});
  }
  return out;
}

std::map<std::string, double> Medians(const std::vector<ResultRecord>& results, bool control) {
  std::map<std::string, double> m;
  for (const auto& r : results)
    if ((r.suite == kControlSuite) == control && r.status == ResultStatus::kOk && !r.samples.empty())
      m[ResultKey(r)] = stats::Median(r.samples);
  return m;
}

// Why run `c`'s control moved against the others' median, or "".
std::string ControlMoved(const Candidate& c, const std::vector<Candidate>& all, const Policy& policy) {
  for (const auto& r : c.results) {
    if (r.suite != kControlSuite || r.status != ResultStatus::kOk || r.samples.empty()) continue;
    const std::string key = ResultKey(r);
    std::vector<double> logs;
    for (const auto& o : all)
      if (auto m = Medians(o.results, true); m.count(key) && m[key] > 0) logs.push_back(std::log(m[key]));
    if (logs.size() < kMinWindowRuns) continue;
    const double center = stats::Median(logs);
    std::vector<double> dev;
    for (double x : logs) dev.push_back(std::fabs(x - center));
    const double robust_sd = 1.4826 * stats::Median(dev);
    const double mine = std::log(stats::Median(r.samples));
    const double limit = std::max(std::log1p(policy.For(r).value), 4 * robust_sd);
    if (std::fabs(mine - center) > limit)
      return fmt::format("its control moved ({}/{} {} {:+.1f}% against the window's median)", r.suite, r.workload,
                         r.metric, 100 * std::expm1(mine - center));
  }
  return "";
}

// Index of the first run after the last change point in any judged metric
// (relative thresholds) that moves it by more than its limit: a step below
// the limit is no change the gate would report, and E-divisive finds such
// steps in unchanged series now and then (one of 3.5% at p = 0.0009 in 20
// runs of 4% noise here).
size_t AfterLastChange(const std::vector<Candidate>& runs, const Policy& policy) {
  std::map<std::string, std::vector<double>> series;
  std::map<std::string, std::vector<size_t>> at;
  std::map<std::string, double> limit;
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& r : runs[i].results) {
      const Threshold t = policy.For(r);
      if (AroundRun(r.suite) || r.status != ResultStatus::kOk || r.samples.empty() || t.informational || t.absolute)
        continue;
      series[ResultKey(r)].push_back(stats::Median(r.samples));
      at[ResultKey(r)].push_back(i);
      limit[ResultKey(r)] = t.value;
    }
  size_t start = 0;
  for (const auto& [key, x] : series) {
    ChangePointOptions options;
    options.min_magnitude = limit[key];
    for (const auto& cp : FindChangePoints(x, options)) start = std::max(start, at[key][cp.index]);
  }
  return start;
}

}  // namespace

std::optional<std::string> RollingLabel(const std::string& ref) {
  if (ref.rfind("label:", 0) != 0) return std::nullopt;
  return ref.substr(6);
}

Window SelectWindow(Store& store, const std::string& label, size_t last, const RunRecord& conditions,
                    const Policy& policy, int64_t before) {
  if (label.empty()) throw std::invalid_argument("--baseline label:NAME needs a label name");
  if (last < kMinWindowRuns)
    throw std::invalid_argument(fmt::format("--last must be at least {} (runs a rolling baseline needs)", kMinWindowRuns));
  Window w;
  auto runs = EligibleRuns(store, label, conditions, before, &w);
  std::vector<std::string> moved;  // decided against all runs before any is moved out
  for (const auto& c : runs) moved.push_back(ControlMoved(c, runs, policy));
  std::vector<Candidate> kept;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!moved[i].empty())
      w.dropped.push_back(fmt::format("run {}: {}", runs[i].run.id, moved[i]));
    else
      kept.push_back(std::move(runs[i]));
  }
  const size_t start = AfterLastChange(kept, policy);
  if (start > 0)
    w.dropped.push_back(fmt::format("runs {}..{}: before the last change point (run {})", kept.front().run.id,
                                    kept[start - 1].run.id, kept[start].run.id));
  kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(start));
  if (kept.size() > last) kept.erase(kept.begin(), kept.end() - static_cast<std::ptrdiff_t>(last));
  if (kept.size() < kMinWindowRuns) {
    std::string why;
    for (const auto& d : w.dropped) why += "; " + d;
    throw WindowError(fmt::format("label '{}' has {} usable run(s) on this machine and conditions ({} considered), a "
                                  "rolling baseline needs at least {}{}",
                                  label, kept.size(), w.considered, kMinWindowRuns, why));
  }
  std::reverse(kept.begin(), kept.end());  // newest first, as labels
  w.data.source = fmt::format("label {}, last {} of {} runs", label, kept.size(), w.considered);
  w.data.run = kept.front().run;
  w.data.run_count = kept.size();
  for (auto& c : kept) {
    w.data.run_ids.push_back(c.run.id);
    w.data.results.insert(w.data.results.end(), c.results.begin(), c.results.end());
  }
  return w;
}

}  // namespace perfbench::gate
