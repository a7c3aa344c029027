#include "store/sqlite_connection.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include "store/schema.h"
#include "utf8.h"

namespace perfbench {
namespace {

class SqliteStatement final : public sql::Statement {
 public:
  SqliteStatement(sqlite3* db, const std::string& text) : db_(db) {
    if (sqlite3_prepare_v2(db, text.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      throw StoreError(std::string("sqlite prepare: ") + sqlite3_errmsg(db));
  }
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }

  // Text kept is UTF-8: an ill-formed byte (a hostname, an exception's text)
  // is stored as U+FFFD, and read back so from files written before.
  Statement& Bind(int i, const std::string& v) override {
    if (InvalidUtf8At(v)) return BindText(i, ValidUtf8(v));
    return BindText(i, v);
  }
  Statement& Bind(int i, int64_t v) override { return Check(sqlite3_bind_int64(stmt_, i, v)); }
  Statement& Bind(int i, double v) override { return Check(sqlite3_bind_double(stmt_, i, v)); }
  Statement& BindNull(int i) override { return Check(sqlite3_bind_null(stmt_, i)); }
  bool Step() override {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(std::string("sqlite: ") + sqlite3_errmsg(db_));
  }
  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t Int(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const override { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const override {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    if (p == nullptr) return "";
    const std::string_view text(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
    return InvalidUtf8At(text) ? ValidUtf8(text) : std::string(text);
  }
  bool IsNull(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  Statement& BindText(int i, const std::string& v) {
    return Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Statement& Check(int rc) {
    if (rc != SQLITE_OK) throw StoreError(std::string("sqlite bind: ") + sqlite3_errmsg(db_));
    return *this;
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteConnection final : public sql::Connection {
 public:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  ~SqliteConnection() override { sqlite3_close_v2(db_); }
  Engine engine() const override { return Engine::kSqlite; }
  void Exec(const std::string& text) override {
    char* err = nullptr;
    if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw StoreError("sqlite: " + msg);
    }
  }
  std::unique_ptr<sql::Statement> Prepare(const std::string& text) override {
    return std::make_unique<SqliteStatement>(db_, text);
  }
  void Begin() override { Exec("BEGIN IMMEDIATE"); }
  int64_t SchemaVersion() override { return PragmaInt("PRAGMA user_version"); }
  int64_t PragmaInt(const char* pragma) {
    SqliteStatement s(db_, pragma);
    return s.Step() ? s.Int(0) : 0;
  }
  sqlite3* handle() { return db_; }
  void Replace(sqlite3* db) {
    sqlite3_close_v2(db_);
    db_ = db;
  }

 private:
  sqlite3* db_;
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

sqlite3* OpenHandle(const std::string& name, int flags) {
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
  sqlite3* db = OpenHandle(FileUri(path, "mode=ro"), flags);
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) == SQLITE_OK) return db;
  const std::string first = sqlite3_errmsg(db);
  sqlite3_close(db);
  if (FileExists(path + "-wal")) throw StoreError(first);
  return OpenHandle(FileUri(path, "immutable=1"), flags);
}

// A copy of `db` in memory (the backup API), for an in-memory schema upgrade.
sqlite3* CopyToMemory(sqlite3* db) {
  sqlite3* mem = OpenHandle(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
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

std::unique_ptr<SqliteConnection> Connect(const std::string& path, Store::Mode mode) {
  const bool read_only = mode == Store::Mode::kReadOnly;
  try {
    return std::make_unique<SqliteConnection>(
        read_only ? OpenReadOnly(path)
                  : OpenHandle(path, SQLITE_OPEN_READWRITE | (mode == Store::Mode::kCreate ? SQLITE_OPEN_CREATE : 0)));
  } catch (const StoreError& e) {
    throw StoreInputError("cannot open database '" + path + "'" + (read_only ? " for reading" : "") + ": " +
                          e.what());
  }
}

// Refuses a foreign or newer file; returns its schema version (0: fresh).
int64_t CheckPerfbenchFile(SqliteConnection& db, const std::string& path, bool read_only) {
  int64_t app_id = 0, version = 0, tables = 0;
  try {
    app_id = db.PragmaInt("PRAGMA application_id");
    version = db.PragmaInt("PRAGMA user_version");
    tables = db.PragmaInt("SELECT count(*) FROM sqlite_master");
  } catch (const StoreError& e) {
    throw StoreInputError("'" + path + "' is not a perfbench database (" + e.what() + ")");
  }
  const bool fresh = app_id == 0 && version == 0 && tables == 0;
  if (!fresh && app_id != Store::kApplicationId)
    throw StoreInputError("'" + path + "' is an SQLite database but not a perfbench one");
  if (version > Store::kSchemaVersion)
    throw StoreInputError("'" + path + "' has schema version " + std::to_string(version) +
                          ", newer than this perfbench (" + std::to_string(Store::kSchemaVersion) +
                          "); upgrade perfbench");
  if (read_only && fresh) throw StoreInputError("'" + path + "' is an empty database, not a perfbench one");
  return version;
}

// Schema 5: runs recorded before it get their derived identity. Copies of
// one run (imported twice before imports were idempotent) are told apart
// by their order, so each still gets its own, the same on every upgrade.
void FillRunUuids(SqliteConnection& db) {
  std::vector<std::pair<int64_t, std::string>> ids;
  std::set<std::string> given;
  {
    SqliteStatement q(db.handle(),
                      "SELECT id, started_at, hostname, profile_key, command FROM runs WHERE uuid IS NULL ORDER BY id");
    while (q.Step()) {
      RunRecord r;
      r.started_at = q.Text(1);
      r.hostname = q.Text(2);
      r.profile_key = q.Text(3);
      r.command = q.Text(4);
      std::string uuid = DerivedRunUuid(r);
      for (int copy = 2; given.count(uuid); ++copy) {
        RunRecord again = r;
        again.command += "\x1f" + std::to_string(copy);
        uuid = DerivedRunUuid(again);
      }
      given.insert(uuid);
      ids.emplace_back(q.Int(0), uuid);
    }
  }
  SqliteStatement u(db.handle(), "UPDATE runs SET uuid = ? WHERE id = ?");
  for (const auto& [id, uuid] : ids) {
    u.Reset();
    u.Bind(1, uuid).Bind(2, id);
    u.Step();
  }
}

void Migrate(SqliteConnection& db) {
  const auto& steps = schema::Migrations();
  sql::Transaction tx(db);
  const int64_t version = db.SchemaVersion();  // another process may have migrated meanwhile
  for (int64_t v = version; v < Store::kSchemaVersion; ++v) db.Exec(steps.at(static_cast<size_t>(v)));
  if (version < 5) FillRunUuids(db);
  db.Exec("PRAGMA application_id = " + std::to_string(Store::kApplicationId));
  db.Exec("PRAGMA user_version = " + std::to_string(Store::kSchemaVersion));
  tx.Commit();
}

}  // namespace

std::unique_ptr<sql::Connection> OpenSqlite(const std::string& path, Store::Mode mode) {
  if (path.empty()) throw StoreInputError("database path is empty");
  const bool exists = FileExists(path);
  if (!exists && mode != Store::Mode::kCreate)
    throw StoreInputError("no perfbench database at '" + path + "' (run `perfbench run` first, or pass --db)");
  if (exists) CheckHeader(path);
  if (exists && mode != Store::Mode::kReadOnly) CheckWritable(path);

  const bool read_only = mode == Store::Mode::kReadOnly;
  auto db = Connect(path, mode);
  const int64_t version = CheckPerfbenchFile(*db, path, read_only);
  if (read_only && version < Store::kSchemaVersion)  // upgrade a copy in memory; the file stays as it is
    db->Replace(CopyToMemory(db->handle()));
  db->Exec("PRAGMA foreign_keys = ON");
  if (!read_only) {
    // WAL: readers never block the writer; a crash loses at most uncommitted work.
    db->PragmaInt("PRAGMA journal_mode = WAL");
    db->Exec("PRAGMA synchronous = NORMAL");
  }
  if (version < Store::kSchemaVersion) Migrate(*db);
  return db;
}

}  // namespace perfbench
