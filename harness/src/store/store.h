// The SQLite result store: runs, results, raw samples and fingerprints in one
// file. Schema and migrations: store/schema.cc. Every multi-row write is one
// transaction, so a crash leaves whole results or none.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perfbench/params.h"
#include "records.h"

struct sqlite3;

namespace perfbench {

// The database file is unusable as given (missing, foreign, too new): a
// user input error (exit 2).
class StoreInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// SQLite failed while working (disk full, I/O error, locked too long): exit 4.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Store {
 public:
  // kReadOnly: the read commands (runs, show, compare, history, report,
  // procure, export, diagnose RUN). Never writes the file: a read-only file,
  // folder or mount is read as it is, and an older schema is upgraded in
  // memory (the file's bytes do not change).
  enum class Mode { kCreate, kExisting, kReadOnly };
  inline static constexpr int kSchemaVersion = 4;
  inline static constexpr int32_t kApplicationId = 0x50464231;  // "PFB1"

  // kCreate makes the file if missing; kExisting refuses a missing file.
  // Refuses files that are not perfbench databases, or newer than this build.
  // Migrates older schemas in one transaction (kReadOnly: in memory).
  static std::unique_ptr<Store> Open(const std::string& path, Mode mode);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Inserts the run with status "running"; returns its id.
  int64_t BeginRun(const RunRecord& run);
  // Appends results of one run in one transaction.
  void AppendResults(int64_t run_id, const std::vector<ResultRecord>& results);
  // Replaces the run's results with the same suite, workload, params and
  // metric as `results` (gate: a result grown by more repetitions), in one transaction.
  void ReplaceResults(int64_t run_id, const std::vector<ResultRecord>& results);
  void FinishRun(int64_t run_id, RunStatus status);
  // Inserts a whole run and its results in one transaction (import).
  int64_t InsertRun(const RunRecord& run, const std::vector<ResultRecord>& results);


  // Newest first.
  std::vector<RunRecord> ListRuns(int64_t limit = -1);
  // `ref`: a run id, "latest", or a label (its newest run). nullopt if none.
  std::optional<int64_t> ResolveRun(const std::string& ref);
  // All runs carrying `label`, newest first.
  std::vector<int64_t> RunsWithLabel(const std::string& label);
  RunRecord GetRun(int64_t id);
  std::vector<ResultRecord> GetResults(int64_t run_id);

  // Named baselines: each names one or more runs (schema v3). SetBaseline
  // points NAME at `run_ids`, replacing what it named before; returns the
  // runs it named before (empty if new). StoreInputError for a missing run.
  std::vector<int64_t> SetBaseline(const std::string& name, const std::vector<int64_t>& run_ids);
  // Adds a run to an existing baseline; false if it was already there.
  bool AddBaselineRun(const std::string& name, int64_t run_id);
  std::vector<BaselineRecord> ListBaselines();
  std::optional<BaselineRecord> GetBaseline(const std::string& name);
  // Removes the name; the runs stay. False if there was none.
  bool DeleteBaseline(const std::string& name);
  // Inserts runs and points NAME at them, in one transaction (baseline import).
  struct RunWithResults {
    RunRecord run;
    std::vector<ResultRecord> results;
  };
  // Inserts several whole runs in one transaction: all or none (import of a
  // baseline file of several runs).
  std::vector<int64_t> InsertRuns(const std::vector<RunWithResults>& runs);
  std::vector<int64_t> InsertBaselineRuns(const std::string& name, const std::string& created_at,
                                          const std::vector<RunWithResults>& runs);

  // A run's verdict as a baseline candidate (schema v4): "pass",
  // "regression", "inconclusive" (its own gate's) or "accepted" (baseline
  // accept), replacing an earlier one. StoreInputError for a missing run or
  // another verdict.
  void SetRunVerdict(int64_t run_id, const std::string& verdict);
  // nullopt for a run no gate judged and nobody accepted.
  std::optional<std::string> GetRunVerdict(int64_t run_id);

  int SchemaVersion();
  const std::string& path() const { return path_; }

 private:
  Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  void Exec(const std::string& sql);
  void InsertResults(int64_t run_id, const std::vector<ResultRecord>& results);
  int64_t InsertRunRow(const RunRecord& run);
  std::vector<int64_t> BaselineRuns(const std::string& name);
  void CheckRunExists(int64_t run_id);
  std::vector<int64_t> PointBaseline(const std::string& name, const std::vector<int64_t>& run_ids,
                                     const std::string& created_at);
  sqlite3* db_;
  std::string path_;
};

// Canonical JSON of params in declaration order, as stored.
std::string ParamsToJson(const Params& params);
Params ParamsFromJson(const std::string& json);
std::string UtcNowIso8601();

}  // namespace perfbench
