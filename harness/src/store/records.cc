#include "store/records.h"

#include <algorithm>
#include <array>
#include <utility>

namespace perfbench {
namespace {

constexpr std::array<std::pair<ResultStatus, std::string_view>, 3> kResultNames = {
    {{ResultStatus::kOk, "ok"}, {ResultStatus::kFailed, "failed"}, {ResultStatus::kSkipped, "skipped"}}};
constexpr std::array<std::pair<RunStatus, std::string_view>, 4> kRunNames = {{{RunStatus::kRunning, "running"},
                                                                              {RunStatus::kComplete, "complete"},
                                                                              {RunStatus::kAborted, "aborted"},
                                                                              {RunStatus::kImported, "imported"}}};

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (const auto& [e, name] : names)
    if (e == value) return name;
  return "?";
}

template <typename E, size_t N>
std::optional<E> ValueOf(const std::array<std::pair<E, std::string_view>, N>& names, std::string_view text) {
  for (const auto& [e, name] : names)
    if (name == text) return e;
  return std::nullopt;
}

}  // namespace

std::string_view ToString(ResultStatus s) { return NameOf(kResultNames, s); }
std::optional<ResultStatus> ParseResultStatus(std::string_view t) { return ValueOf(kResultNames, t); }
std::string_view ToString(RunStatus s) { return NameOf(kRunNames, s); }
std::optional<RunStatus> ParseRunStatus(std::string_view t) { return ValueOf(kRunNames, t); }

std::string VariantKey(const std::string& suite, const std::string& workload, const Params& params) {
  std::string key = suite + "/" + workload;
  for (const auto& [name, value] : params.AsMap()) key += "/" + name + ":" + value;
  return key;
}

std::string ResultKey(const ResultRecord& r) { return VariantKey(r.suite, r.workload, r.params) + "\x1f" + r.metric; }

void ResultRecord::AppendSamples(const ResultRecord& other) {
  const bool marked = !process.empty() || !other.process.empty();
  if (marked && process.empty()) process.assign(samples.size(), 0);
  for (size_t i = 0; i < other.samples.size(); ++i) {
    samples.push_back(other.samples[i]);
    if (marked) process.push_back(other.ProcessOf(i));
  }
}

void ResultRecord::AppendProcesses(const ResultRecord& other) {
  int next = 0;
  for (size_t i = 0; i < samples.size(); ++i) next = std::max(next, ProcessOf(i) + 1);
  if (process.empty()) process.assign(samples.size(), 0);
  for (size_t i = 0; i < other.samples.size(); ++i) {
    samples.push_back(other.samples[i]);
    process.push_back(next + other.ProcessOf(i));
  }
}

}  // namespace perfbench
