#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

#include "perfbench/statistics.h"
#include "two_level.h"
#include "store/schema.h"
#include "store/store.h"

namespace perfbench {
namespace {

// RAII prepared statement. Values are always bound, never spliced into SQL.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      throw StoreError(std::string("sqlite prepare: ") + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& Bind(int i, const std::string& v) {
    Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    Check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Stmt& Bind(int i, double v) {
    Check(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Stmt& BindNull(int i) {
    Check(sqlite3_bind_null(stmt_, i));
    return *this;
  }
  // True while a row is available.
  bool Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(std::string("sqlite: ") + sqlite3_errmsg(db_));
  }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : "";
  }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK) throw StoreError(std::string("sqlite bind: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Commits on Commit(); rolls back when destroyed without it (exceptions).
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) { Run("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void Commit() {
    Run("COMMIT");
    done_ = true;
  }

 private:
  void Run(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown";
      sqlite3_free(err);
      throw StoreError(std::string("sqlite ") + sql + ": " + msg);
    }
  }
  sqlite3* db_;
  bool done_ = false;
};

bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Reads the SQLite header magic without opening the file as a database, so a
// foreign file is refused before SQLite touches it.
void CheckHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StoreInputError("cannot read database file '" + path + "': " + std::strerror(errno));
  char magic[16] = {};
  in.read(magic, sizeof magic);
  const auto got = in.gcount();
  if (got == 0) return;  // empty file: SQLite treats it as a new database
  if (got < 16 || std::memcmp(magic, "SQLite format 3", 16) != 0)
    throw StoreInputError("'" + path + "' is not a perfbench database (not an SQLite file)");
}

int64_t PragmaInt(sqlite3* db, const char* pragma) {
  Stmt s(db, pragma);
  return s.Step() ? s.Int(0) : 0;
}

bool ProcessAlive(int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string Hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// A store that writes needs its file and folder writable (WAL keeps -wal
// and -shm files beside it); say so rather than SQLite's "unable to open".
void CheckWritable(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  for (const std::string& p : {path, dir})
    if (access(p.c_str(), W_OK) != 0)
      throw StoreInputError("database '" + path + "' is read-only (" + p + ": " + std::strerror(errno) +
                            "): the read commands can use it; writing needs a writable file and folder");
}

// A URI for sqlite3_open_v2 (SQLITE_OPEN_URI): the path percent-encoded
// where a URI would read it otherwise.
std::string FileUri(const std::string& path, const std::string& query) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

sqlite3* OpenConnection(const std::string& name, int flags) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(name.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw StoreError(msg);
  }
  sqlite3_busy_timeout(db, 10000);
  sqlite3_extended_result_codes(db, 1);
  return db;
}

// Read-only: mode=ro reads a WAL database whose -shm it may not create only
// when the -wal and -shm files are there; a database with no -wal file (all
// of it in the main file) in a read-only folder opens as immutable instead.
sqlite3* OpenReadOnly(const std::string& path) {
  const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  sqlite3* db = OpenConnection(FileUri(path, "mode=ro"), flags);
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) == SQLITE_OK) return db;
  const std::string first = sqlite3_errmsg(db);
  sqlite3_close(db);
  if (FileExists(path + "-wal")) throw StoreError(first);
  return OpenConnection(FileUri(path, "immutable=1"), flags);
}

// A copy of `db` in memory (the backup API), for an in-memory schema upgrade.
sqlite3* CopyToMemory(sqlite3* db) {
  sqlite3* mem = OpenConnection(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  sqlite3_backup* b = sqlite3_backup_init(mem, "main", db, "main");
  const int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    std::string msg = sqlite3_errmsg(mem);
    sqlite3_close(mem);
    throw StoreError("copying into memory for the schema upgrade: " + msg);
  }
  return mem;
}

}  // namespace

std::string UtcNowIso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ParamsToJson(const Params& params) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : params.items()) j[k] = v;
  return j.dump();
}

Params ParamsFromJson(const std::string& text) {
  Params p;
  auto j = nlohmann::ordered_json::parse(text);
  for (auto it = j.begin(); it != j.end(); ++it) p.Set(it.key(), it.value().get<std::string>());
  return p;
}

std::unique_ptr<Store> Store::Open(const std::string& path, Mode mode) {
  if (path.empty()) throw StoreInputError("database path is empty");
  const bool exists = FileExists(path);
  if (!exists && mode != Mode::kCreate)
    throw StoreInputError("no perfbench database at '" + path + "' (run `perfbench run` first, or pass --db)");
  if (exists) CheckHeader(path);
  if (exists && mode != Mode::kReadOnly) CheckWritable(path);

  const bool read_only = mode == Mode::kReadOnly;
  sqlite3* db = nullptr;
  try {
    db = read_only ? OpenReadOnly(path)
                   : OpenConnection(path, SQLITE_OPEN_READWRITE | (mode == Mode::kCreate ? SQLITE_OPEN_CREATE : 0));
  } catch (const StoreError& e) {
    throw StoreInputError("cannot open database '" + path + "'" + (read_only ? " for reading" : "") + ": " +
                          e.what());
  }
  std::unique_ptr<Store> store(new Store(db, path));

  int64_t app_id = 0, version = 0, tables = 0;
  try {
    app_id = PragmaInt(db, "PRAGMA application_id");
    version = PragmaInt(db, "PRAGMA user_version");
    tables = PragmaInt(db, "SELECT count(*) FROM sqlite_master");
  } catch (const StoreError& e) {
    throw StoreInputError("'" + path + "' is not a perfbench database (" + e.what() + ")");
  }
  const bool fresh = app_id == 0 && version == 0 && tables == 0;
  if (!fresh && app_id != kApplicationId)
    throw StoreInputError("'" + path + "' is an SQLite database but not a perfbench one");
  if (version > kSchemaVersion)
    throw StoreInputError("'" + path + "' has schema version " + std::to_string(version) +
                          ", newer than this perfbench (" + std::to_string(kSchemaVersion) +
                          "); upgrade perfbench");

  if (read_only && fresh) throw StoreInputError("'" + path + "' is an empty database, not a perfbench one");
  if (read_only && version < kSchemaVersion) {  // upgrade a copy in memory; the file stays as it is
    sqlite3* mem = CopyToMemory(db);
    sqlite3_close_v2(db);
    store->db_ = db = mem;
  }
  store->Exec("PRAGMA foreign_keys = ON");
  if (!read_only) {
    // WAL: readers never block the writer; a crash loses at most uncommitted work.
    PragmaInt(db, "PRAGMA journal_mode = WAL");
    store->Exec("PRAGMA synchronous = NORMAL");
  }

  if (version < kSchemaVersion) {
    const auto& steps = schema::Migrations();
    Transaction tx(db);
    version = PragmaInt(db, "PRAGMA user_version");  // another process may have migrated meanwhile
    for (int64_t v = version; v < kSchemaVersion; ++v) store->Exec(steps.at(static_cast<size_t>(v)));
    store->Exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    store->Exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    tx.Commit();
  }
  return store;
}

Store::~Store() { sqlite3_close_v2(db_); }

void Store::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw StoreError("sqlite: " + msg);
  }
}

int Store::SchemaVersion() { return static_cast<int>(PragmaInt(db_, "PRAGMA user_version")); }

int64_t Store::BeginRun(const RunRecord& run) {
  Stmt s(db_,
         "INSERT INTO runs (label, started_at, status, hostname, pid, profile_key, fingerprint,"
         " settings, command) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)");
  if (run.label.empty()) s.BindNull(1); else s.Bind(1, run.label);
  s.Bind(2, run.started_at.empty() ? UtcNowIso8601() : run.started_at)
      .Bind(3, run.hostname.empty() ? Hostname() : run.hostname)
      .Bind(4, run.pid != 0 ? run.pid : static_cast<int64_t>(getpid()))
      .Bind(5, run.profile_key)
      .Bind(6, run.fingerprint.dump())
      .Bind(7, run.settings.dump())
      .Bind(8, run.command);
  s.Step();
  return sqlite3_last_insert_rowid(db_);
}

namespace {

// Columns 20-22: processes and the variance components (NULL when a level
// has too little data to estimate).
void BindComponents(Stmt& r, const ResultRecord& res) {
  const auto c = stats::EstimateComponents(stats::Groups(res.samples, res.process));
  r.Bind(20, static_cast<int64_t>(std::max<size_t>(c.processes, 1)));
  if (c.has_within) r.Bind(21, c.within); else r.BindNull(21);
  if (c.has_between) r.Bind(22, c.between); else r.BindNull(22);
}

}  // namespace

void Store::InsertResults(int64_t run_id, const std::vector<ResultRecord>& results) {
  Stmt r(db_,
         "INSERT INTO results (run_id, suite, workload, params, variant, metric, unit,"
         " higher_is_better, status, reason, n, median, mean, stddev, min, max, iqr_rel, noisy,"
         " attributes, processes, var_within, var_between) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  Stmt smp(db_, "INSERT INTO samples (result_id, seq, value, process) VALUES (?, ?, ?, ?)");
  for (const auto& res : results) {
    const auto sum = stats::Summarize(res.samples);
    nlohmann::json attrs(res.attributes);
    r.Reset();
    r.Bind(1, run_id).Bind(2, res.suite).Bind(3, res.workload).Bind(4, ParamsToJson(res.params));
    r.Bind(5, res.params.Encode()).Bind(6, res.metric).Bind(7, res.unit);
    r.Bind(8, static_cast<int64_t>(res.higher_is_better)).Bind(9, std::string(ToString(res.status))).Bind(10, res.reason);
    r.Bind(11, static_cast<int64_t>(sum.n));
    if (sum.n == 0) {
      for (int i = 12; i <= 17; ++i) r.BindNull(i);
    } else {
      r.Bind(12, sum.median).Bind(13, sum.mean).Bind(14, sum.stddev).Bind(15, sum.min);
      r.Bind(16, sum.max).Bind(17, sum.iqr_rel);
    }
    r.Bind(18, static_cast<int64_t>(sum.noisy)).Bind(19, attrs.dump());
    BindComponents(r, res);
    r.Step();
    const int64_t result_id = sqlite3_last_insert_rowid(db_);
    for (size_t i = 0; i < res.samples.size(); ++i) {
      smp.Reset();
      smp.Bind(1, result_id).Bind(2, static_cast<int64_t>(i)).Bind(3, res.samples[i]);
      smp.Bind(4, static_cast<int64_t>(res.ProcessOf(i)));
      smp.Step();
    }
  }
}

void Store::AppendResults(int64_t run_id, const std::vector<ResultRecord>& results) {
  Transaction tx(db_);
  InsertResults(run_id, results);
  tx.Commit();
}

void Store::ReplaceResults(int64_t run_id, const std::vector<ResultRecord>& results) {
  Transaction tx(db_);
  Stmt del(db_, "DELETE FROM results WHERE run_id = ? AND suite = ? AND workload = ? AND variant = ? AND metric = ?");
  for (const auto& r : results) {
    del.Reset();
    del.Bind(1, run_id).Bind(2, r.suite).Bind(3, r.workload).Bind(4, r.params.Encode()).Bind(5, r.metric);
    del.Step();
  }
  InsertResults(run_id, results);
  tx.Commit();
}

void Store::FinishRun(int64_t run_id, RunStatus status) {
  Stmt s(db_, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?");
  s.Bind(1, std::string(ToString(status))).Bind(2, UtcNowIso8601()).Bind(3, run_id);
  s.Step();
}

int64_t Store::InsertRunRow(const RunRecord& run) {
  Stmt s(db_,
         "INSERT INTO runs (label, started_at, finished_at, status, hostname, pid, profile_key,"
         " fingerprint, settings, command) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (run.label.empty()) s.BindNull(1); else s.Bind(1, run.label);
  s.Bind(2, run.started_at);
  if (run.finished_at.empty()) s.BindNull(3); else s.Bind(3, run.finished_at);
  s.Bind(4, std::string(ToString(run.status))).Bind(5, run.hostname).Bind(6, run.pid).Bind(7, run.profile_key);
  s.Bind(8, run.fingerprint.dump()).Bind(9, run.settings.dump()).Bind(10, run.command);
  s.Step();
  return sqlite3_last_insert_rowid(db_);
}

std::vector<int64_t> Store::InsertRuns(const std::vector<RunWithResults>& runs) {
  Transaction tx(db_);
  std::vector<int64_t> ids;
  for (const auto& r : runs) {
    ids.push_back(InsertRunRow(r.run));
    InsertResults(ids.back(), r.results);
  }
  tx.Commit();
  return ids;
}

int64_t Store::InsertRun(const RunRecord& run, const std::vector<ResultRecord>& results) {
  Transaction tx(db_);
  const int64_t id = InsertRunRow(run);
  InsertResults(id, results);
  tx.Commit();
  return id;
}

std::vector<int64_t> Store::BaselineRuns(const std::string& name) {
  Stmt q(db_, "SELECT run_id FROM baseline_runs WHERE name = ? ORDER BY run_id");
  q.Bind(1, name);
  std::vector<int64_t> ids;
  while (q.Step()) ids.push_back(q.Int(0));
  return ids;
}

void Store::CheckRunExists(int64_t run_id) {
  Stmt q(db_, "SELECT 1 FROM runs WHERE id = ?");
  q.Bind(1, run_id);
  if (!q.Step()) throw StoreInputError("no run with id " + std::to_string(run_id));
}

std::vector<int64_t> Store::PointBaseline(const std::string& name, const std::vector<int64_t>& run_ids,
                                          const std::string& created_at) {
  const std::vector<int64_t> before = BaselineRuns(name);
  {
    Stmt s(db_,
           "INSERT INTO baselines (name, created_at) VALUES (?, ?)"
           " ON CONFLICT(name) DO UPDATE SET created_at = excluded.created_at");
    s.Bind(1, name).Bind(2, created_at);
    s.Step();
  }
  Stmt del(db_, "DELETE FROM baseline_runs WHERE name = ?");
  del.Bind(1, name);
  del.Step();
  Stmt add(db_, "INSERT OR IGNORE INTO baseline_runs (name, run_id) VALUES (?, ?)");
  for (int64_t id : run_ids) {
    add.Reset();
    add.Bind(1, name).Bind(2, id);
    add.Step();
  }
  return before;
}

std::vector<int64_t> Store::SetBaseline(const std::string& name, const std::vector<int64_t>& run_ids) {
  if (run_ids.empty()) throw StoreInputError("a baseline needs at least one run");
  Transaction tx(db_);
  for (int64_t id : run_ids) CheckRunExists(id);
  auto before = PointBaseline(name, run_ids, UtcNowIso8601());
  tx.Commit();
  return before;
}

bool Store::AddBaselineRun(const std::string& name, int64_t run_id) {
  Transaction tx(db_);
  CheckRunExists(run_id);
  auto ids = BaselineRuns(name);
  if (ids.empty()) throw StoreInputError("no baseline '" + name + "'");
  if (std::find(ids.begin(), ids.end(), run_id) != ids.end()) return false;
  Stmt add(db_, "INSERT INTO baseline_runs (name, run_id) VALUES (?, ?)");
  add.Bind(1, name).Bind(2, run_id);
  add.Step();
  tx.Commit();
  return true;
}

std::vector<BaselineRecord> Store::ListBaselines() {
  std::vector<BaselineRecord> out;
  {
    Stmt s(db_, "SELECT name, created_at FROM baselines ORDER BY name");
    while (s.Step()) out.push_back({s.Text(0), {}, s.Text(1)});
  }
  for (auto& b : out) b.run_ids = BaselineRuns(b.name);
  return out;
}

std::optional<BaselineRecord> Store::GetBaseline(const std::string& name) {
  Stmt s(db_, "SELECT name, created_at FROM baselines WHERE name = ?");
  s.Bind(1, name);
  if (!s.Step()) return std::nullopt;
  return BaselineRecord{s.Text(0), BaselineRuns(name), s.Text(1)};
}

void Store::SetRunVerdict(int64_t run_id, const std::string& verdict) {
  if (verdict != "pass" && verdict != "regression" && verdict != "inconclusive" && verdict != "accepted")
    throw StoreInputError("run verdict '" + verdict + "': expected pass, regression, inconclusive or accepted");
  CheckRunExists(run_id);
  Stmt s(db_, "INSERT OR REPLACE INTO run_verdicts (run_id, verdict, decided_at) VALUES (?, ?, ?)");
  s.Bind(1, run_id);
  s.Bind(2, verdict);
  s.Bind(3, UtcNowIso8601());
  s.Step();
}

std::optional<std::string> Store::GetRunVerdict(int64_t run_id) {
  Stmt s(db_, "SELECT verdict FROM run_verdicts WHERE run_id = ?");
  s.Bind(1, run_id);
  if (!s.Step()) return std::nullopt;
  return s.Text(0);
}

bool Store::DeleteBaseline(const std::string& name) {
  Stmt s(db_, "DELETE FROM baselines WHERE name = ?");
  s.Bind(1, name);
  s.Step();
  return sqlite3_changes(db_) > 0;
}

std::vector<int64_t> Store::InsertBaselineRuns(const std::string& name, const std::string& created_at,
                                               const std::vector<RunWithResults>& runs) {
  Transaction tx(db_);
  std::vector<int64_t> ids;
  for (const auto& r : runs) {
    ids.push_back(InsertRunRow(r.run));
    InsertResults(ids.back(), r.results);
  }
  PointBaseline(name, ids, created_at.empty() ? UtcNowIso8601() : created_at);
  tx.Commit();
  return ids;
}

namespace {
constexpr const char* kRunColumns =
    "SELECT r.id, COALESCE(r.label, ''), r.started_at, COALESCE(r.finished_at, ''), r.status,"
    " r.hostname, r.pid, r.profile_key, r.fingerprint, r.settings, r.command,"
    " (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'ok'),"
    " (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'failed'),"
    " (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'skipped')"
    " FROM runs r ";

RunRecord ReadRun(const Stmt& s) {
  RunRecord r;
  r.id = s.Int(0);
  r.label = s.Text(1);
  r.started_at = s.Text(2);
  r.finished_at = s.Text(3);
  r.status = ParseRunStatus(s.Text(4)).value_or(RunStatus::kAborted);
  r.hostname = s.Text(5);
  r.pid = s.Int(6);
  r.profile_key = s.Text(7);
  r.fingerprint = nlohmann::json::parse(s.Text(8));
  r.settings = nlohmann::json::parse(s.Text(9));
  r.command = s.Text(10);
  r.ok_results = s.Int(11);
  r.failed_results = s.Int(12);
  r.skipped_results = s.Int(13);
  // A run left "running" by a process that no longer exists was killed.
  if (r.status == RunStatus::kRunning && (r.hostname != Hostname() || !ProcessAlive(r.pid))) r.status = RunStatus::kAborted;
  return r;
}
}  // namespace

std::vector<RunRecord> Store::ListRuns(int64_t limit) {
  Stmt s(db_, (std::string(kRunColumns) + "ORDER BY r.id DESC LIMIT ?").c_str());
  s.Bind(1, limit);
  std::vector<RunRecord> out;
  while (s.Step()) out.push_back(ReadRun(s));
  return out;
}

std::optional<int64_t> Store::ResolveRun(const std::string& ref) {
  if (ref == "latest") {
    Stmt s(db_, "SELECT max(id) FROM runs");
    if (s.Step() && s.Int(0) > 0) return s.Int(0);
    return std::nullopt;
  }
  const bool numeric = !ref.empty() && ref.find_first_not_of("0123456789") == std::string::npos;
  if (numeric && ref.size() < 18) {
    Stmt s(db_, "SELECT id FROM runs WHERE id = ?");
    s.Bind(1, static_cast<int64_t>(std::stoll(ref)));
    if (s.Step()) return s.Int(0);
  }
  auto ids = RunsWithLabel(ref);
  if (!ids.empty()) return ids.front();
  return std::nullopt;
}

std::vector<int64_t> Store::RunsWithLabel(const std::string& label) {
  Stmt s(db_, "SELECT id FROM runs WHERE label = ? ORDER BY id DESC");
  s.Bind(1, label);
  std::vector<int64_t> ids;
  while (s.Step()) ids.push_back(s.Int(0));
  return ids;
}

RunRecord Store::GetRun(int64_t id) {
  Stmt s(db_, (std::string(kRunColumns) + "WHERE r.id = ?").c_str());
  s.Bind(1, id);
  if (!s.Step()) throw StoreInputError("no run with id " + std::to_string(id));
  return ReadRun(s);
}

std::vector<ResultRecord> Store::GetResults(int64_t run_id) {
  Stmt s(db_,
         "SELECT id, suite, workload, params, metric, unit, higher_is_better, status, reason,"
         " attributes FROM results WHERE run_id = ? ORDER BY id");
  Stmt smp(db_, "SELECT value, process FROM samples WHERE result_id = ? ORDER BY seq");
  s.Bind(1, run_id);
  std::vector<ResultRecord> out;
  while (s.Step()) {
    ResultRecord r;
    r.suite = s.Text(1);
    r.workload = s.Text(2);
    r.params = ParamsFromJson(s.Text(3));
    r.metric = s.Text(4);
    r.unit = s.Text(5);
    r.higher_is_better = s.Int(6) != 0;
    r.status = ParseResultStatus(s.Text(7)).value_or(ResultStatus::kFailed);
    r.reason = s.Text(8);
    r.attributes = nlohmann::json::parse(s.Text(9)).get<std::map<std::string, std::string>>();
    smp.Reset();
    smp.Bind(1, s.Int(0));
    bool several = false;
    while (smp.Step()) {
      r.samples.push_back(smp.Real(0));
      r.process.push_back(static_cast<int>(smp.Int(1)));
      several = several || r.process.back() != 0;
    }
    if (!several) r.process.clear();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace perfbench
