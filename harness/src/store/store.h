// The result store: runs, results, raw samples and fingerprints. SQLite (one
// file, the default) or PostgreSQL (a server a fleet of machines shares,
// postgresql://...), the same schema and queries over either (store/sql.h).
// Schema and migrations: store/schema.cc. Every multi-row write is one
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


namespace perfbench {

namespace sql {
class Connection;
}

// The database file is unusable as given (missing, foreign, too new): a
// user input error (exit 2).
class StoreInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The database failed while working (disk full, I/O error, locked too long, a
// server unreachable or refusing the login): exit 4.
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
  inline static constexpr int kSchemaVersion = 5;
  inline static constexpr int32_t kApplicationId = 0x50464231;  // "PFB1"

  // `location`: a file path (SQLite) or postgresql://... (a server).
  // kCreate makes the file (the tables) if missing; kExisting refuses a
  // missing one. Refuses databases that are not perfbench's, or newer than
  // this build. Migrates older schemas in one transaction (kReadOnly: SQLite
  // in memory; a server is refused until a writing command upgrades it).
  static std::unique_ptr<Store> Open(const std::string& location, Mode mode);
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
  // The gate's end: the run finished and its verdict, in one transaction, so
  // no reader (a push) sees a judged run without its verdict. Not inside
  // another transaction (they do not nest).
  void FinishRun(int64_t run_id, RunStatus status, const std::string& verdict);
  // Inserts a whole run and its results in one transaction (import). A run
  // whose uuid the store holds already is not inserted again: its id comes
  // back (import and push land a run once).
  int64_t InsertRun(const RunRecord& run, const std::vector<ResultRecord>& results);
  std::optional<int64_t> FindRunByUuid(const std::string& uuid);

  // Newest first; only `machine`'s runs when given.
  std::vector<RunRecord> ListRuns(int64_t limit = -1, const std::string& machine = "");
  // The machines that measured runs here, the most recent first.
  std::vector<std::string> Machines();
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
    std::optional<std::string> verdict = std::nullopt;  // as SetRunVerdict (push keeps it)
  };
  // Inserts several whole runs in one transaction: all or none (import of a
  // baseline file of several runs).
  std::vector<int64_t> InsertRuns(const std::vector<RunWithResults>& runs);
  // As InsertRuns, saying of each run whether it was new.
  struct Inserted {
    int64_t id = 0;
    bool inserted = false;
  };
  std::vector<Inserted> InsertRunsReporting(const std::vector<RunWithResults>& runs);
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
  // The file path, or the server URL without its password.
  const std::string& path() const { return path_; }
  bool IsServer() const;

 private:
  Store(std::unique_ptr<sql::Connection> db, std::string shown);
  void InsertResults(int64_t run_id, const std::vector<ResultRecord>& results);
  Inserted InsertRunRow(const RunRecord& run);
  Inserted InsertWhole(const RunWithResults& r);
  std::vector<int64_t> BaselineRuns(const std::string& name);
  void CheckRunExists(int64_t run_id);
  void WriteVerdict(int64_t run_id, const std::string& verdict);
  std::vector<int64_t> PointBaseline(const std::string& name, const std::vector<int64_t>& run_ids,
                                     const std::string& created_at);
  std::unique_ptr<sql::Connection> db_;
  std::string path_;
};

// Canonical JSON of params in declaration order, as stored.
std::string ParamsToJson(const Params& params);
Params ParamsFromJson(const std::string& json);
std::string UtcNowIso8601();
// A fresh run identity: 32 random hex digits.
std::string NewRunUuid();
// The identity of a run recorded before runs had one (schema < 5, a run
// JSON document of version 1): derived from when, where and how it ran, so
// every copy of it gets the same one.
std::string DerivedRunUuid(const RunRecord& run);
// This machine's name for the fleet: $PERFBENCH_MACHINE, else the hostname.
std::string MachineName();
// Test-only fault injection: kills this process (SIGKILL) when
// $PERFBENCH_FAILPOINT names `name`, stops it (SIGSTOP) for `name:stop`.
// Points: store:after-run-row, store:after-results, store:before-commit
// (inside an insert's transaction), push:after-run.
void Failpoint(const char* name);

}  // namespace perfbench
