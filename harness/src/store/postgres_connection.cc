#include "store/postgres_connection.h"

#include <libpq-fe.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "store/location.h"
#include "store/schema.h"
#include "utf8.h"

namespace perfbench {
namespace {

std::string ServerText(const std::string& v) {
  const std::string valid = InvalidUtf8At(v) ? ValidUtf8(v) : v;
  if (valid.find('\0') == std::string::npos) return valid;
  std::string out;
  for (char c : valid) out += c == '\0' ? std::string("\xEF\xBF\xBD") : std::string(1, c);
  return out;
}

// The first line of a libpq message, trimmed.
std::string FirstLine(const char* msg) {
  std::string s = msg ? msg : "";
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s.empty() ? "unknown error" : s;
}

// "... ? ... ?" -> "... $1 ... $2" (outside quoted literals).
std::string NumberPlaceholders(const std::string& text) {
  std::string out;
  int n = 0;
  char quote = 0;
  for (const char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += "$" + std::to_string(++n);
    } else {
      out += c;
    }
  }
  return out;
}

std::string DoubleText(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

// Throws StoreError unless `r` succeeded; a lost connection says so.
Result Checked(PGconn* conn, PGresult* raw) {
  Result r(raw, &PQclear);
  const ExecStatusType st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
  if (PQstatus(conn) == CONNECTION_BAD)
    throw StoreError("postgresql: lost the connection to the server: " + FirstLine(PQerrorMessage(conn)));
  throw StoreError("postgresql: " + FirstLine(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn)));
}

class PgStatement final : public sql::Statement {
 public:
  PgStatement(PGconn* conn, const std::string& text) : conn_(conn), text_(NumberPlaceholders(text)) {}

  // PostgreSQL refuses ill-formed UTF-8 and cuts a text parameter at NUL:
  // both are kept as U+FFFD, as SQLite keeps them.
  Statement& Bind(int i, const std::string& v) override { return Set(i, ServerText(v)); }
  Statement& Bind(int i, int64_t v) override { return Set(i, std::to_string(v)); }
  Statement& Bind(int i, double v) override { return Set(i, DoubleText(v)); }
  Statement& BindNull(int i) override { return Set(i, std::nullopt); }
  bool Step() override {
    if (!result_) {
      std::vector<const char*> values;
      for (const auto& v : params_) values.push_back(v ? v->c_str() : nullptr);
      result_ = Checked(conn_, PQexecParams(conn_, text_.c_str(), static_cast<int>(values.size()), nullptr,
                                            values.data(), nullptr, nullptr, 0));
      row_ = -1;
    }
    return ++row_ < PQntuples(result_.get());
  }
  void Reset() override {
    result_.reset();
    params_.clear();
  }
  int64_t Int(int col) const override { return IsNull(col) ? 0 : std::strtoll(Value(col), nullptr, 10); }
  double Real(int col) const override { return IsNull(col) ? 0.0 : std::strtod(Value(col), nullptr); }
  std::string Text(int col) const override { return IsNull(col) ? "" : Value(col); }
  bool IsNull(int col) const override { return PQgetisnull(result_.get(), row_, col) != 0; }

 private:
  Statement& Set(int i, std::optional<std::string> v) {
    if (params_.size() < static_cast<size_t>(i)) params_.resize(static_cast<size_t>(i));
    params_[static_cast<size_t>(i - 1)] = std::move(v);
    return *this;
  }
  const char* Value(int col) const { return PQgetvalue(result_.get(), row_, col); }
  PGconn* conn_;
  std::string text_;
  std::vector<std::optional<std::string>> params_;
  Result result_{nullptr, &PQclear};
  int row_ = -1;
};

class PgConnection final : public sql::Connection {
 public:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  ~PgConnection() override { PQfinish(conn_); }
  Engine engine() const override { return Engine::kPostgres; }
  void Exec(const std::string& text) override { Checked(conn_, PQexec(conn_, text.c_str())); }
  std::unique_ptr<sql::Statement> Prepare(const std::string& text) override {
    return std::make_unique<PgStatement>(conn_, text);
  }
  void Begin() override { Exec("BEGIN"); }
  int64_t SchemaVersion() override {
    auto s = Prepare("SELECT version FROM perfbench_schema");
    return s->Step() ? s->Int(0) : 0;
  }

 private:
  PGconn* conn_;
};

void IgnoreNotice(void*, const char*) {}

// Refuses a malformed URL before any connection (exit 2).
void CheckUrl(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (opts == nullptr) {
    const std::string msg = FirstLine(err ? err : "out of memory");
    PQfreemem(err);
    throw StoreInputError("'" + RedactLocation(url) + "' is not a valid PostgreSQL URL: " + RedactSecrets(msg, url));
  }
  PQconninfoFree(opts);
}

std::unique_ptr<PgConnection> Connect(const std::string& url) {
  // The URL's own connect_timeout wins: it comes after the default here.
  const char* keys[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "perfbench", url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) throw StoreError("cannot connect to " + RedactLocation(url) + ": out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string msg = RedactSecrets(FirstLine(PQerrorMessage(conn)), url);
    PQfinish(conn);
    throw StoreError("cannot connect to " + RedactLocation(url) + ": " + msg);
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  auto db = std::make_unique<PgConnection>(conn);
  db->Exec("SET extra_float_digits = 3");  // doubles round-trip exactly as text
  db->Exec("SET client_encoding = 'UTF8'");  // what the store binds and reads, whatever PGCLIENTENCODING says
  return db;
}

struct ServerState {
  bool ours = false, foreign = false;
  int64_t app_id = 0, version = 0;
};

ServerState ReadState(PgConnection& db) {
  ServerState st;
  auto s = db.Prepare("SELECT to_regclass('perfbench_schema') IS NOT NULL, to_regclass('runs') IS NOT NULL");
  s->Step();
  st.ours = s->Text(0) == "t";
  st.foreign = !st.ours && s->Text(1) == "t";
  if (!st.ours) return st;
  auto v = db.Prepare("SELECT application_id, version FROM perfbench_schema");
  if (v->Step()) {
    st.app_id = v->Int(0);
    st.version = v->Int(1);
  }
  return st;
}

// Another writer may be creating or upgrading at the same moment: the
// advisory lock orders them, and each re-reads the version under it.
void Migrate(PgConnection& db) {
  sql::Transaction tx(db);
  db.Exec("SELECT pg_advisory_xact_lock(" + std::to_string(Store::kApplicationId) + ")");
  int64_t version = ReadState(db).version;
  for (const auto& step : schema::PostgresMigrations())
    if (step.from == version) {
      db.Exec(step.sql);
      version = step.to;
    }
  if (version != Store::kSchemaVersion) throw StoreError("postgresql: no migration from schema " + std::to_string(version));
  db.Exec("UPDATE perfbench_schema SET application_id = " + std::to_string(Store::kApplicationId) +
          ", version = " + std::to_string(Store::kSchemaVersion));
  tx.Commit();
}

void CheckState(const ServerState& st, const std::string& shown, Store::Mode mode) {
  if (st.foreign) throw StoreInputError("'" + shown + "' holds a 'runs' table but is not a perfbench database");
  if (st.ours && st.app_id != Store::kApplicationId && st.version != 0)
    throw StoreInputError("'" + shown + "' is not a perfbench database (application id)");
  if (st.version > Store::kSchemaVersion)
    throw StoreInputError("'" + shown + "' has schema version " + std::to_string(st.version) +
                          ", newer than this perfbench (" + std::to_string(Store::kSchemaVersion) +
                          "); upgrade perfbench");
  if (!st.ours && mode != Store::Mode::kCreate)
    throw StoreInputError("no perfbench database at '" + shown + "' (`perfbench push --to` it first)");
  if (mode == Store::Mode::kReadOnly && st.version < Store::kSchemaVersion)
    throw StoreInputError("'" + shown + "' has schema version " + std::to_string(st.version) +
                          "; a writing command (perfbench push) upgrades it first");
}

}  // namespace

std::unique_ptr<sql::Connection> OpenPostgres(const std::string& url, Store::Mode mode) {
  CheckUrl(url);
  auto db = Connect(url);
  const std::string shown = RedactLocation(url);
  const ServerState st = ReadState(*db);
  CheckState(st, shown, mode);
  if (st.version < Store::kSchemaVersion) Migrate(*db);
  if (mode == Store::Mode::kReadOnly) db->Exec("SET default_transaction_read_only = on");
  return db;
}

bool PostgresAvailable() { return true; }

}  // namespace perfbench
