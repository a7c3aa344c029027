// The records perfbench stores and compares: runs, results, baselines, their
// status enums (strings only at the store and JSON boundaries), and the one
// identity of a result that compare, gate, baselines and import share.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "perfbench/params.h"

namespace perfbench {

enum class ResultStatus { kOk, kFailed, kSkipped };
// kAborted is never stored: a run left kRunning by a process that no longer
// exists reads back as aborted.
enum class RunStatus { kRunning, kComplete, kAborted, kImported };

// "ok" | "failed" | "skipped"
std::string_view ToString(ResultStatus s);
std::optional<ResultStatus> ParseResultStatus(std::string_view text);
// "running" | "complete" | "aborted" | "imported"
std::string_view ToString(RunStatus s);
std::optional<RunStatus> ParseRunStatus(std::string_view text);

struct RunRecord {
  int64_t id = 0;
  std::string label;
  std::string started_at;   // ISO-8601 UTC, "2026-12-02T18:52:54Z"
  std::string finished_at;  // empty while running
  RunStatus status = RunStatus::kRunning;
  std::string hostname;
  int64_t pid = 0;
  std::string profile_key;
  nlohmann::json fingerprint = nlohmann::json::object();
  nlohmann::json settings = nlohmann::json::object();
  std::string command;
  // The run's identity across stores (schema v5): 32 hex digits, made when
  // the run begins, kept by export, import and push. Empty: made on insert.
  std::string uuid;
  // The machine that measured it (host identity: history, noise floors);
  // its hardware is profile_key. Empty: this machine (MachineName()).
  std::string machine;
  // Filled by reads: counts of results by status.
  int64_t ok_results = 0, failed_results = 0, skipped_results = 0;
};

// A named baseline: one or more runs (schema v3), oldest first. Every run is
// at least one process: pooled, they are the baseline's process-level samples.
struct BaselineRecord {
  std::string name;
  std::vector<int64_t> run_ids;
  std::string created_at;
};

// Suites measured around a run rather than selected by it: the control
// (RunSettings::control) and the harness's own time (run_cost.h).
inline constexpr const char* kControlSuite = "control";
inline constexpr const char* kHarnessSuite = "harness";
// True for either: never a suite to select, run again or diagnose.
inline bool AroundRun(const std::string& suite) { return suite == kControlSuite || suite == kHarnessSuite; }

struct ResultRecord {
  std::string suite, workload;
  Params params;
  std::string metric, unit;
  bool higher_is_better = false;
  ResultStatus status = ResultStatus::kOk;
  std::string reason;
  std::vector<double> samples;
  // The process index of each sample (schema v3), parallel to `samples`;
  // empty means all from process 0. `run --processes K` numbers 0..K-1.
  std::vector<int> process;
  std::map<std::string, std::string> attributes;

  // The process of sample i.
  int ProcessOf(size_t i) const { return process.empty() ? 0 : process[i]; }
  // Appends another record's samples with their process indices (a further
  // process of the same run).
  void AppendSamples(const ResultRecord& other);
  // Appends another record's samples, renumbering its processes after this
  // one's (pooling runs: each run's processes are distinct processes).
  void AppendProcesses(const ResultRecord& other);
};


// The identity of a variant: "suite/workload/k1:v1/k2:v2" with params sorted
// by name, so that the same variant matches whatever order its params were
// declared or written in.
std::string VariantKey(const std::string& suite, const std::string& workload, const Params& params);
// The identity of a result: VariantKey + the metric.
std::string ResultKey(const ResultRecord& r);

}  // namespace perfbench
