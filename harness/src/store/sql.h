// The little SQL the store needs, over either engine: SQLite (embedded, a
// file) or PostgreSQL (a server, through libpq). The store writes its queries
// once, with `?` placeholders; each connection adapts them. Values are always
// bound, never spliced into SQL.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace perfbench::sql {

class Statement {
 public:
  virtual ~Statement() = default;
  // Parameters count from 1.
  virtual Statement& Bind(int i, const std::string& v) = 0;
  virtual Statement& Bind(int i, int64_t v) = 0;
  virtual Statement& Bind(int i, double v) = 0;
  virtual Statement& BindNull(int i) = 0;
  // Runs the statement on the first call; true while a row is available.
  virtual bool Step() = 0;
  // Ready to run again with new bindings.
  virtual void Reset() = 0;
  // Columns count from 0; NULL reads as 0, 0.0 or "".
  virtual int64_t Int(int col) const = 0;
  virtual double Real(int col) const = 0;
  virtual std::string Text(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
};

class Connection {
 public:
  enum class Engine { kSqlite, kPostgres };
  virtual ~Connection() = default;
  virtual Engine engine() const = 0;
  // One or more statements without parameters (DDL, PRAGMA, BEGIN).
  virtual void Exec(const std::string& sql) = 0;
  virtual std::unique_ptr<Statement> Prepare(const std::string& sql) = 0;
  // Starts a write transaction: SQLite takes the write lock at once
  // (BEGIN IMMEDIATE), so two writers never deadlock upgrading.
  virtual void Begin() = 0;
  // The schema version the database holds.
  virtual int64_t SchemaVersion() = 0;
};

// Commits on Commit(); rolls back when destroyed without it (exceptions).
class Transaction {
 public:
  explicit Transaction(Connection& db) : db_(db) { db_.Begin(); }
  ~Transaction() {
    if (done_) return;
    try {
      db_.Exec("ROLLBACK");
    } catch (...) {  // the connection is gone: the server rolls back
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void Commit() {
    db_.Exec("COMMIT");
    done_ = true;
  }

 private:
  Connection& db_;
  bool done_ = false;
};

}  // namespace perfbench::sql
