#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <random>

#include "perfbench/statistics.h"
#include "two_level.h"
#include "store/location.h"
#include "store/postgres_connection.h"
#include "store/sql.h"
#include "store/sqlite_connection.h"
#include "store/store.h"

namespace perfbench {
namespace {

using Stmt = std::unique_ptr<sql::Statement>;

bool ProcessAlive(int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string Hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// Steps an INSERT ... RETURNING id; nullopt when it inserted nothing (ON
// CONFLICT DO NOTHING).
std::optional<int64_t> ReturnedId(sql::Statement& s) {
  if (!s.Step()) return std::nullopt;
  const int64_t id = s.Int(0);
  while (s.Step()) {
  }
  return id;
}

void CheckVerdict(const std::string& verdict) {
  if (verdict != "pass" && verdict != "regression" && verdict != "inconclusive" && verdict != "accepted")
    throw StoreInputError("run verdict '" + verdict + "': expected pass, regression, inconclusive or accepted");
}

// JSON text to keep: a string that is not UTF-8 (an environment variable's
// value, a hostname) is kept with U+FFFD instead of failing the write.
template <class Json>
std::string JsonText(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
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
  return JsonText(j);
}

Params ParamsFromJson(const std::string& text) {
  Params p;
  auto j = nlohmann::ordered_json::parse(text);
  for (auto it = j.begin(); it != j.end(); ++it) p.Set(it.key(), it.value().get<std::string>());
  return p;
}

std::string NewRunUuid() {
  static thread_local std::mt19937_64 gen{[] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(getpid());
  }()};
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(gen()),
                static_cast<unsigned long long>(gen()));
  return buf;
}

std::string DerivedRunUuid(const RunRecord& run) {
  const std::string key = run.started_at + '\x1f' + run.hostname + '\x1f' + run.profile_key + '\x1f' + run.command;
  auto fnv = [&](uint64_t h) {  // FNV-1a, 64 bits
    for (const unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
    return h;
  };
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv(0xcbf29ce484222325ULL)),
                static_cast<unsigned long long>(fnv(0x84222325cbf29ce4ULL)));
  return buf;
}

std::string MachineName() {
  if (const char* env = std::getenv("PERFBENCH_MACHINE"); env != nullptr && *env != '\0') return env;
  return Hostname();
}

void Failpoint(const char* name) {
  const char* env = std::getenv("PERFBENCH_FAILPOINT");
  if (env == nullptr) return;
  const std::string point = env;
  if (point == name) raise(SIGKILL);
  if (point == std::string(name) + ":stop") raise(SIGSTOP);  // the test acts, then continues it
}

std::unique_ptr<Store> Store::Open(const std::string& location, Mode mode) {
  if (IsServerUrl(location))
    return std::unique_ptr<Store>(new Store(OpenPostgres(location, mode), RedactLocation(location)));
  return std::unique_ptr<Store>(new Store(OpenSqlite(location, mode), location));
}

Store::Store(std::unique_ptr<sql::Connection> db, std::string shown) : db_(std::move(db)), path_(std::move(shown)) {}

Store::~Store() = default;

bool Store::IsServer() const { return db_->engine() == sql::Connection::Engine::kPostgres; }

int Store::SchemaVersion() { return static_cast<int>(db_->SchemaVersion()); }

int64_t Store::BeginRun(const RunRecord& run) {
  auto s = db_->Prepare(
      "INSERT INTO runs (label, started_at, status, hostname, pid, profile_key, fingerprint,"
      " settings, command, uuid, machine) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id");
  if (run.label.empty()) s->BindNull(1); else s->Bind(1, run.label);
  s->Bind(2, run.started_at.empty() ? UtcNowIso8601() : run.started_at)
      .Bind(3, run.hostname.empty() ? Hostname() : run.hostname)
      .Bind(4, run.pid != 0 ? run.pid : static_cast<int64_t>(getpid()))
      .Bind(5, run.profile_key)
      .Bind(6, JsonText(run.fingerprint))
      .Bind(7, JsonText(run.settings))
      .Bind(8, RedactCommandLine(run.command))
      .Bind(9, run.uuid.empty() ? NewRunUuid() : run.uuid)
      .Bind(10, run.machine.empty() ? MachineName() : run.machine);
  return ReturnedId(*s).value_or(0);
}

namespace {

// Columns 20-22: processes and the variance components (NULL when a level
// has too little data to estimate).
void BindComponents(sql::Statement& r, const ResultRecord& res) {
  const auto c = stats::EstimateComponents(stats::Groups(res.samples, res.process));
  r.Bind(20, static_cast<int64_t>(std::max<size_t>(c.processes, 1)));
  if (c.has_within) r.Bind(21, c.within); else r.BindNull(21);
  if (c.has_between) r.Bind(22, c.between); else r.BindNull(22);
}

void BindResult(sql::Statement& r, int64_t run_id, const ResultRecord& res) {
  const auto sum = stats::Summarize(res.samples);
  nlohmann::json attrs(res.attributes);
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
  r.Bind(18, static_cast<int64_t>(sum.noisy)).Bind(19, JsonText(attrs));
  BindComponents(r, res);
}

// A result's samples, many rows per statement (one round trip to a server
// per chunk, not per sample).
void InsertSamples(sql::Connection& db, int64_t result_id, const ResultRecord& res) {
  constexpr size_t kChunk = 256;
  for (size_t begin = 0; begin < res.samples.size(); begin += kChunk) {
    const size_t end = std::min(res.samples.size(), begin + kChunk);
    std::string text = "INSERT INTO samples (result_id, seq, value, process) VALUES ";
    for (size_t i = begin; i < end; ++i) text += i == begin ? "(?, ?, ?, ?)" : ", (?, ?, ?, ?)";
    auto smp = db.Prepare(text);
    for (size_t i = begin; i < end; ++i) {
      const int k = 4 * static_cast<int>(i - begin) + 1;
      smp->Bind(k, result_id).Bind(k + 1, static_cast<int64_t>(i)).Bind(k + 2, res.samples[i]);
      smp->Bind(k + 3, static_cast<int64_t>(res.ProcessOf(i)));
    }
    smp->Step();
  }
}

}  // namespace

void Store::InsertResults(int64_t run_id, const std::vector<ResultRecord>& results) {
  auto r = db_->Prepare(
      "INSERT INTO results (run_id, suite, workload, params, variant, metric, unit,"
      " higher_is_better, status, reason, n, median, mean, stddev, min, max, iqr_rel, noisy,"
      " attributes, processes, var_within, var_between) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
      " RETURNING id");
  for (const auto& res : results) {
    r->Reset();
    BindResult(*r, run_id, res);
    const int64_t result_id = ReturnedId(*r).value_or(0);
    InsertSamples(*db_, result_id, res);
  }
}

void Store::AppendResults(int64_t run_id, const std::vector<ResultRecord>& results) {
  sql::Transaction tx(*db_);
  InsertResults(run_id, results);
  tx.Commit();
}

void Store::ReplaceResults(int64_t run_id, const std::vector<ResultRecord>& results) {
  sql::Transaction tx(*db_);
  auto del = db_->Prepare(
      "DELETE FROM results WHERE run_id = ? AND suite = ? AND workload = ? AND variant = ? AND metric = ?");
  for (const auto& r : results) {
    del->Reset();
    del->Bind(1, run_id).Bind(2, r.suite).Bind(3, r.workload).Bind(4, r.params.Encode()).Bind(5, r.metric);
    del->Step();
  }
  InsertResults(run_id, results);
  tx.Commit();
}

void Store::FinishRun(int64_t run_id, RunStatus status) {
  auto s = db_->Prepare("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?");
  s->Bind(1, std::string(ToString(status))).Bind(2, UtcNowIso8601()).Bind(3, run_id);
  s->Step();
}

void Store::FinishRun(int64_t run_id, RunStatus status, const std::string& verdict) {
  CheckVerdict(verdict);
  CheckRunExists(run_id);
  sql::Transaction tx(*db_);
  FinishRun(run_id, status);
  WriteVerdict(run_id, verdict);
  tx.Commit();
}

std::optional<int64_t> Store::FindRunByUuid(const std::string& uuid) {
  auto s = db_->Prepare("SELECT id FROM runs WHERE uuid = ?");
  s->Bind(1, uuid);
  if (!s->Step()) return std::nullopt;
  return s->Int(0);
}

// Inserts the run row unless a run with its uuid is there already (a second
// import or push of the same run): then that run's id, and `inserted` false.
Store::Inserted Store::InsertRunRow(const RunRecord& run) {
  const std::string uuid = run.uuid.empty() ? NewRunUuid() : run.uuid;
  auto s = db_->Prepare(
      "INSERT INTO runs (label, started_at, finished_at, status, hostname, pid, profile_key,"
      " fingerprint, settings, command, uuid, machine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (uuid) DO NOTHING RETURNING id");
  if (run.label.empty()) s->BindNull(1); else s->Bind(1, run.label);
  s->Bind(2, run.started_at);
  if (run.finished_at.empty()) s->BindNull(3); else s->Bind(3, run.finished_at);
  s->Bind(4, std::string(ToString(run.status))).Bind(5, run.hostname).Bind(6, run.pid).Bind(7, run.profile_key);
  s->Bind(8, JsonText(run.fingerprint)).Bind(9, JsonText(run.settings)).Bind(10, RedactCommandLine(run.command));
  s->Bind(11, uuid).Bind(12, run.machine.empty() ? run.hostname : run.machine);
  if (auto id = ReturnedId(*s)) return {*id, true};
  if (auto id = FindRunByUuid(uuid)) return {*id, false};
  throw StoreError("run " + uuid + " was neither inserted nor found");
}

Store::Inserted Store::InsertWhole(const RunWithResults& r) {
  const Inserted row = InsertRunRow(r.run);
  Failpoint("store:after-run-row");
  if (row.inserted) InsertResults(row.id, r.results);
  Failpoint("store:after-results");
  if (row.inserted && r.verdict) {
    auto s = db_->Prepare("INSERT INTO run_verdicts (run_id, verdict, decided_at) VALUES (?, ?, ?)");
    s->Bind(1, row.id).Bind(2, *r.verdict).Bind(3, UtcNowIso8601());
    s->Step();
  }
  return row;
}

std::vector<int64_t> Store::InsertRuns(const std::vector<RunWithResults>& runs) {
  std::vector<int64_t> ids;
  for (const Inserted& row : InsertRunsReporting(runs)) ids.push_back(row.id);
  return ids;
}

std::vector<Store::Inserted> Store::InsertRunsReporting(const std::vector<RunWithResults>& runs) {
  sql::Transaction tx(*db_);
  std::vector<Inserted> rows;
  for (const auto& r : runs) rows.push_back(InsertWhole(r));
  Failpoint("store:before-commit");
  tx.Commit();
  return rows;
}

int64_t Store::InsertRun(const RunRecord& run, const std::vector<ResultRecord>& results) {
  return InsertRuns({RunWithResults{run, results}}).front();
}

std::vector<int64_t> Store::BaselineRuns(const std::string& name) {
  auto q = db_->Prepare("SELECT run_id FROM baseline_runs WHERE name = ? ORDER BY run_id");
  q->Bind(1, name);
  std::vector<int64_t> ids;
  while (q->Step()) ids.push_back(q->Int(0));
  return ids;
}

void Store::CheckRunExists(int64_t run_id) {
  auto q = db_->Prepare("SELECT 1 FROM runs WHERE id = ?");
  q->Bind(1, run_id);
  if (!q->Step()) throw StoreInputError("no run with id " + std::to_string(run_id));
}

std::vector<int64_t> Store::PointBaseline(const std::string& name, const std::vector<int64_t>& run_ids,
                                          const std::string& created_at) {
  const std::vector<int64_t> before = BaselineRuns(name);
  auto s = db_->Prepare(
      "INSERT INTO baselines (name, created_at) VALUES (?, ?)"
      " ON CONFLICT (name) DO UPDATE SET created_at = excluded.created_at");
  s->Bind(1, name).Bind(2, created_at);
  s->Step();
  auto del = db_->Prepare("DELETE FROM baseline_runs WHERE name = ?");
  del->Bind(1, name);
  del->Step();
  auto add = db_->Prepare("INSERT INTO baseline_runs (name, run_id) VALUES (?, ?) ON CONFLICT DO NOTHING");
  for (int64_t id : run_ids) {
    add->Reset();
    add->Bind(1, name).Bind(2, id);
    add->Step();
  }
  return before;
}

std::vector<int64_t> Store::SetBaseline(const std::string& name, const std::vector<int64_t>& run_ids) {
  if (run_ids.empty()) throw StoreInputError("a baseline needs at least one run");
  sql::Transaction tx(*db_);
  for (int64_t id : run_ids) CheckRunExists(id);
  auto before = PointBaseline(name, run_ids, UtcNowIso8601());
  tx.Commit();
  return before;
}

bool Store::AddBaselineRun(const std::string& name, int64_t run_id) {
  sql::Transaction tx(*db_);
  CheckRunExists(run_id);
  auto ids = BaselineRuns(name);
  if (ids.empty()) throw StoreInputError("no baseline '" + name + "'");
  if (std::find(ids.begin(), ids.end(), run_id) != ids.end()) return false;
  auto add = db_->Prepare("INSERT INTO baseline_runs (name, run_id) VALUES (?, ?)");
  add->Bind(1, name).Bind(2, run_id);
  add->Step();
  tx.Commit();
  return true;
}

std::vector<BaselineRecord> Store::ListBaselines() {
  std::vector<BaselineRecord> out;
  {
    auto s = db_->Prepare("SELECT name, created_at FROM baselines ORDER BY name");
    while (s->Step()) out.push_back({s->Text(0), {}, s->Text(1)});
  }
  for (auto& b : out) b.run_ids = BaselineRuns(b.name);
  return out;
}

std::optional<BaselineRecord> Store::GetBaseline(const std::string& name) {
  auto s = db_->Prepare("SELECT name, created_at FROM baselines WHERE name = ?");
  s->Bind(1, name);
  if (!s->Step()) return std::nullopt;
  return BaselineRecord{s->Text(0), BaselineRuns(name), s->Text(1)};
}

void Store::SetRunVerdict(int64_t run_id, const std::string& verdict) {
  CheckVerdict(verdict);
  CheckRunExists(run_id);
  WriteVerdict(run_id, verdict);
}

void Store::WriteVerdict(int64_t run_id, const std::string& verdict) {
  CheckVerdict(verdict);
  auto s = db_->Prepare(
      "INSERT INTO run_verdicts (run_id, verdict, decided_at) VALUES (?, ?, ?)"
      " ON CONFLICT (run_id) DO UPDATE SET verdict = excluded.verdict, decided_at = excluded.decided_at");
  s->Bind(1, run_id).Bind(2, verdict).Bind(3, UtcNowIso8601());
  s->Step();
}

std::optional<std::string> Store::GetRunVerdict(int64_t run_id) {
  auto s = db_->Prepare("SELECT verdict FROM run_verdicts WHERE run_id = ?");
  s->Bind(1, run_id);
  if (!s->Step()) return std::nullopt;
  return s->Text(0);
}

bool Store::DeleteBaseline(const std::string& name) {
  auto s = db_->Prepare("DELETE FROM baselines WHERE name = ? RETURNING name");
  s->Bind(1, name);
  return ReturnedId(*s).has_value();
}

std::vector<int64_t> Store::InsertBaselineRuns(const std::string& name, const std::string& created_at,
                                               const std::vector<RunWithResults>& runs) {
  sql::Transaction tx(*db_);
  std::vector<int64_t> ids;
  for (const auto& r : runs) ids.push_back(InsertWhole(r).id);
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
    " (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'skipped'),"
    " COALESCE(r.uuid, ''), r.machine"
    " FROM runs r ";

RunRecord ReadRun(const sql::Statement& s) {
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
  r.uuid = s.Text(14);
  r.machine = s.Text(15);
  // A run left "running" by a process that no longer exists was killed.
  if (r.status == RunStatus::kRunning && (r.hostname != Hostname() || !ProcessAlive(r.pid))) r.status = RunStatus::kAborted;
  return r;
}
}  // namespace

std::vector<RunRecord> Store::ListRuns(int64_t limit, const std::string& machine) {
  auto s = db_->Prepare(std::string(kRunColumns) + (machine.empty() ? "" : "WHERE r.machine = ? ") +
                        "ORDER BY r.id DESC LIMIT ?");
  int k = 1;
  if (!machine.empty()) s->Bind(k++, machine);
  s->Bind(k, limit < 0 ? std::numeric_limits<int64_t>::max() : limit);
  std::vector<RunRecord> out;
  while (s->Step()) out.push_back(ReadRun(*s));
  return out;
}

std::vector<std::string> Store::Machines() {
  auto s = db_->Prepare("SELECT machine FROM runs GROUP BY machine ORDER BY max(id) DESC");
  std::vector<std::string> out;
  while (s->Step()) out.push_back(s->Text(0));
  return out;
}

std::optional<int64_t> Store::ResolveRun(const std::string& ref) {
  if (ref == "latest") {
    auto s = db_->Prepare("SELECT max(id) FROM runs");
    if (s->Step() && !s->IsNull(0)) return s->Int(0);
    return std::nullopt;
  }
  const bool numeric = !ref.empty() && ref.find_first_not_of("0123456789") == std::string::npos;
  if (numeric && ref.size() < 18) {
    auto s = db_->Prepare("SELECT id FROM runs WHERE id = ?");
    s->Bind(1, static_cast<int64_t>(std::stoll(ref)));
    if (s->Step()) return s->Int(0);
  }
  auto ids = RunsWithLabel(ref);
  if (!ids.empty()) return ids.front();
  return std::nullopt;
}

std::vector<int64_t> Store::RunsWithLabel(const std::string& label) {
  auto s = db_->Prepare("SELECT id FROM runs WHERE label = ? ORDER BY id DESC");
  s->Bind(1, label);
  std::vector<int64_t> ids;
  while (s->Step()) ids.push_back(s->Int(0));
  return ids;
}

RunRecord Store::GetRun(int64_t id) {
  auto s = db_->Prepare(std::string(kRunColumns) + "WHERE r.id = ?");
  s->Bind(1, id);
  if (!s->Step()) throw StoreInputError("no run with id " + std::to_string(id));
  return ReadRun(*s);
}

std::vector<ResultRecord> Store::GetResults(int64_t run_id) {
  auto s = db_->Prepare(
      "SELECT id, suite, workload, params, metric, unit, higher_is_better, status, reason,"
      " attributes FROM results WHERE run_id = ? ORDER BY id");
  auto smp = db_->Prepare("SELECT value, process FROM samples WHERE result_id = ? ORDER BY seq");
  s->Bind(1, run_id);
  std::vector<ResultRecord> out;
  while (s->Step()) {
    ResultRecord r;
    r.suite = s->Text(1);
    r.workload = s->Text(2);
    r.params = ParamsFromJson(s->Text(3));
    r.metric = s->Text(4);
    r.unit = s->Text(5);
    r.higher_is_better = s->Int(6) != 0;
    r.status = ParseResultStatus(s->Text(7)).value_or(ResultStatus::kFailed);
    r.reason = s->Text(8);
    r.attributes = nlohmann::json::parse(s->Text(9)).get<std::map<std::string, std::string>>();
    smp->Reset();
    smp->Bind(1, s->Int(0));
    bool several = false;
    while (smp->Step()) {
      r.samples.push_back(smp->Real(0));
      r.process.push_back(static_cast<int>(smp->Int(1)));
      several = several || r.process.back() != 0;
    }
    if (!several) r.process.clear();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace perfbench
