#include "store/store.h"
#include "store/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace perfbench {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("perfbench_store_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  static std::string Slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

RunRecord SomeRun(const std::string& label) {
  RunRecord r;
  r.label = label;
  r.profile_key = "0123456789abcdef";
  r.fingerprint = {{"cpu_model", "Test CPU"}, {"torch_version", "2.11.0"}};
  r.settings = {{"repetitions", 5}};
  r.command = "perfbench run --quick";
  r.status = RunStatus::kComplete;
  return r;
}

ResultRecord SomeResult(const std::string& metric, std::vector<double> samples) {
  ResultRecord r;
  r.suite = "amp";
  r.workload = "mlp";
  r.params = Params{{"precision", "bf16"}, {"size", "quick"}};
  r.metric = metric;
  r.unit = "samples/s";
  r.higher_is_better = true;
  r.samples = std::move(samples);
  r.attributes = {{"batch_size", "128"}};
  return r;
}

TEST_F(StoreTest, RoundTripsRunsResultsAndExactSamples) {
  auto store = Store::Open(Path("a.db"), Store::Mode::kCreate);
  const int64_t id = store->BeginRun(SomeRun("v1"));
  const std::vector<double> samples{0.1, 1.0 / 3.0, 12345.678901234567, 1e-300};
  store->AppendResults(id, {SomeResult("throughput", samples)});
  store->FinishRun(id, RunStatus::kComplete);

  auto run = store->GetRun(id);
  EXPECT_EQ(run.label, "v1");
  EXPECT_EQ(run.status, RunStatus::kComplete);
  EXPECT_EQ(run.fingerprint["torch_version"], "2.11.0");
  EXPECT_EQ(run.ok_results, 1);
  auto results = store->GetResults(id);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].samples, samples);  // bit-exact
  EXPECT_EQ(results[0].params.Encode(), "precision:bf16/size:quick");
  EXPECT_TRUE(results[0].higher_is_better);
  EXPECT_EQ(results[0].attributes.at("batch_size"), "128");
}

TEST_F(StoreTest, HasSchemaVersionApplicationIdAndWal) {
  auto store = Store::Open(Path("a.db"), Store::Mode::kCreate);
  EXPECT_EQ(store->SchemaVersion(), Store::kSchemaVersion);
  store.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Path("a.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), Store::kApplicationId);
  sqlite3_finalize(st);
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(StoreTest, AFailedWriteRollsBackTheWholeBatch) {
  auto store = Store::Open(Path("a.db"), Store::Mode::kCreate);
  const int64_t id = store->BeginRun(SomeRun(""));
  // NaN is stored by SQLite as NULL, which samples.value refuses: the second
  // result fails after the first was inserted in the same transaction.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(store->AppendResults(id, {SomeResult("a", {1, 2}), SomeResult("b", {1, nan})}), StoreError);
  EXPECT_TRUE(store->GetResults(id).empty());
  store->AppendResults(id, {SomeResult("c", {3})});
  EXPECT_EQ(store->GetResults(id).size(), 1u);
}

TEST_F(StoreTest, RefusesAForeignFileAndLeavesItUntouched) {
  const std::string text = Path("notes.txt");
  std::ofstream(text) << "these are my notes, not a database\n";
  const std::string before = Slurp(text);
  EXPECT_THROW(Store::Open(text, Store::Mode::kCreate), StoreInputError);
  EXPECT_EQ(Slurp(text), before);
}

TEST_F(StoreTest, RefusesSomeoneElsesSqliteDatabase) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Path("other.db").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE people(name TEXT); INSERT INTO people VALUES ('ada');", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  const std::string before = Slurp(Path("other.db"));
  try {
    Store::Open(Path("other.db"), Store::Mode::kCreate);
    FAIL() << "expected StoreInputError";
  } catch (const StoreInputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a perfbench one"), std::string::npos);
  }
  EXPECT_EQ(Slurp(Path("other.db")), before);
}

TEST_F(StoreTest, RefusesANewerSchema) {
  Store::Open(Path("a.db"), Store::Mode::kCreate).reset();
  sqlite3* db = nullptr;
  sqlite3_open(Path("a.db").c_str(), &db);
  sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_THROW(Store::Open(Path("a.db"), Store::Mode::kExisting), StoreInputError);
}

TEST_F(StoreTest, ExistingModeDoesNotCreateAFile) {
  EXPECT_THROW(Store::Open(Path("missing.db"), Store::Mode::kExisting), StoreInputError);
  EXPECT_FALSE(fs::exists(Path("missing.db")));
}

TEST_F(StoreTest, AnEmptyFileIsMigratedFromVersionZero) {
  std::ofstream(Path("empty.db")).close();
  auto store = Store::Open(Path("empty.db"), Store::Mode::kExisting);
  EXPECT_EQ(store->SchemaVersion(), Store::kSchemaVersion);
}

TEST_F(StoreTest, ResolvesIdsLabelsAndLatest) {
  auto store = Store::Open(Path("a.db"), Store::Mode::kCreate);
  const int64_t a = store->BeginRun(SomeRun("v1"));
  const int64_t b = store->BeginRun(SomeRun("v1"));
  const int64_t c = store->BeginRun(SomeRun("v2"));
  EXPECT_EQ(store->ResolveRun(std::to_string(a)), a);
  EXPECT_EQ(store->ResolveRun("v1"), b);  // a label names its newest run
  EXPECT_EQ(store->ResolveRun("latest"), c);
  EXPECT_EQ(store->RunsWithLabel("v1"), (std::vector<int64_t>{b, a}));
  EXPECT_FALSE(store->ResolveRun("v3").has_value());
  EXPECT_FALSE(store->ResolveRun("999").has_value());
  EXPECT_EQ(store->ListRuns().front().id, c);  // newest first
}

TEST_F(StoreTest, ARunWhoseProcessDiedReadsAsAborted) {
  auto store = Store::Open(Path("a.db"), Store::Mode::kCreate);
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  RunRecord r = SomeRun("killed");
  r.pid = child;
  const int64_t id = store->BeginRun(r);
  store->AppendResults(id, {SomeResult("throughput", {1, 2, 3})});
  EXPECT_EQ(store->GetRun(id).status, RunStatus::kAborted);
  EXPECT_EQ(store->GetResults(id).size(), 1u);  // what was committed stays readable
  const int64_t live = store->BeginRun(SomeRun("alive"));
  EXPECT_EQ(store->GetRun(live).status, RunStatus::kRunning);
}

TEST_F(StoreTest, LabelsAreBoundNotSpliced) {
  auto store = Store::Open(Path("a.db"), Store::Mode::kCreate);
  const std::string evil = "x'); DROP TABLE runs; --";
  const int64_t id = store->BeginRun(SomeRun(evil));
  EXPECT_EQ(store->GetRun(id).label, evil);
  EXPECT_EQ(store->ResolveRun(evil), id);
}

TEST_F(StoreTest, AVersionOneDatabaseIsMigratedKeepingItsRuns) {
  // A v1 file exactly as the first release wrote it: migration step 0 only.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(Path("v1.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, schema::Migrations().at(0), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_exec(db,
                 "INSERT INTO runs (label, started_at, status, profile_key, fingerprint, settings)"
                 " VALUES ('old', '2026-11-01T00:00:00Z', 'complete', 'k', '{}', '{}');"
                 "PRAGMA application_id = 1346781745; PRAGMA user_version = 1; COMMIT;",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  auto store = Store::Open(Path("v1.db"), Store::Mode::kExisting);
  EXPECT_EQ(store->SchemaVersion(), Store::kSchemaVersion);
  ASSERT_EQ(store->ListRuns().size(), 1u);
  EXPECT_EQ(store->ListRuns().front().label, "old");
  EXPECT_TRUE(store->ListBaselines().empty());
  EXPECT_TRUE(store->SetBaseline("nightly", {store->ListRuns().front().id}).empty());
}

TEST_F(StoreTest, Version5GivesOlderRunsIdentitiesThatAreUniqueAndTheSameOnEveryUpgrade) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(Path("v4.db").c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (int v = 0; v < 4; ++v)
      ASSERT_EQ(sqlite3_exec(db, schema::Migrations().at(v), nullptr, nullptr, nullptr), SQLITE_OK);
    // Runs 1 and 2 are one file imported twice (before imports were idempotent).
    ASSERT_EQ(sqlite3_exec(db,
                           "INSERT INTO runs (id, label, started_at, status, hostname, profile_key, fingerprint, settings,"
                           " command) VALUES (1, 'a', '2026-11-01T00:00:00Z', 'imported', 'h', 'k', '{}', '{}', 'c'),"
                           " (2, 'b', '2026-11-01T00:00:00Z', 'imported', 'h', 'k', '{}', '{}', 'c'),"
                           " (3, 'c', '2026-11-02T00:00:00Z', 'complete', 'h', 'k', '{}', '{}', 'c');"
                           "PRAGMA application_id = 1346781745; PRAGMA user_version = 4; COMMIT;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto uuids = [&](Store::Mode mode) {
    auto store = Store::Open(Path("v4.db"), mode);
    std::vector<std::string> out;
    for (int64_t id = 1; id <= 3; ++id) out.push_back(store->GetRun(id).uuid);
    EXPECT_EQ(store->GetRun(1).machine, "h");
    return out;
  };
  const auto read_only = uuids(Store::Mode::kReadOnly);  // upgraded in memory
  EXPECT_EQ(uuids(Store::Mode::kReadOnly), read_only);
  EXPECT_EQ(uuids(Store::Mode::kExisting), read_only);  // and on disk, alike
  EXPECT_EQ(std::set<std::string>(read_only.begin(), read_only.end()).size(), 3u);
  for (const auto& u : read_only) EXPECT_EQ(u.size(), 32u);
}

TEST_F(StoreTest, MigratesAVersion2BaselineToARunList) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(Path("v2.db").c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (int v = 0; v < 2; ++v)
      ASSERT_EQ(sqlite3_exec(db, schema::Migrations().at(v), nullptr, nullptr, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "INSERT INTO runs (id, label, started_at, status, profile_key, fingerprint, settings)"
                           " VALUES (7, 'old', '2026-11-01T00:00:00Z', 'complete', 'k', '{}', '{}');"
                           "INSERT INTO results (id, run_id, suite, workload, params, variant, metric, unit,"
                           " higher_is_better, status, n) VALUES (1, 7, 's', 'w', '{}', '', 'm', 's', 0, 'ok', 2);"
                           "INSERT INTO samples VALUES (1, 0, 1.5), (1, 1, 2.5);"
                           "INSERT INTO baselines VALUES ('main', 7, '2026-11-02T00:00:00Z');"
                           "PRAGMA application_id = 1346781745; PRAGMA user_version = 2; COMMIT;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto store = Store::Open(Path("v2.db"), Store::Mode::kExisting);
  EXPECT_EQ(store->SchemaVersion(), Store::kSchemaVersion);
  const auto b = store->GetBaseline("main");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->run_ids, (std::vector<int64_t>{7}));
  EXPECT_EQ(b->created_at, "2026-11-02T00:00:00Z");
  const auto results = store->GetResults(7);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].samples, (std::vector<double>{1.5, 2.5}));
  EXPECT_TRUE(results[0].process.empty());  // old samples: all process 0
  EXPECT_TRUE(store->DeleteBaseline("main"));  // and the cascade leaves nothing behind
  EXPECT_TRUE(store->SetBaseline("main", {7}) .empty());
}

TEST_F(StoreTest, SamplesKeepTheirProcessAndResultsTheirComponents) {
  auto store = Store::Open(Path("p.db"), Store::Mode::kCreate);
  ResultRecord r = SomeResult("step_time", {1, 2, 3, 4, 5, 6});
  r.process = {0, 0, 0, 1, 1, 1};
  const int64_t id = store->InsertRun(SomeRun("p"), {r});
  const auto back = store->GetResults(id);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].process, r.process);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Path("p.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT processes, var_within, var_between FROM results", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 2);
  EXPECT_DOUBLE_EQ(sqlite3_column_double(st, 1), 1.0);          // {1,2,3} and {4,5,6}
  EXPECT_NEAR(sqlite3_column_double(st, 2), 4.5 - 1.0 / 3, 1e-12);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(StoreTest, BaselinesPointAtRunsAndCanBeMoved) {
  auto store = Store::Open(Path("a.db"), Store::Mode::kCreate);
  const int64_t a = store->InsertRun(SomeRun("v1"), {SomeResult("throughput", {1, 2, 3})});
  const int64_t b = store->InsertRun(SomeRun("v2"), {SomeResult("throughput", {4, 5, 6})});
  using Ids = std::vector<int64_t>;
  EXPECT_TRUE(store->SetBaseline("main", {a}).empty());
  EXPECT_EQ(store->SetBaseline("main", {b}), Ids{a});  // moved: returns the old runs
  EXPECT_TRUE(store->SetBaseline("release", {a, b}).empty());
  const auto list = store->ListBaselines();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "main");
  EXPECT_EQ(list[0].run_ids, Ids{b});
  EXPECT_EQ(store->GetBaseline("release")->run_ids, (Ids{a, b}));
  EXPECT_FALSE(store->GetBaseline("nope").has_value());
  EXPECT_THROW(store->SetBaseline("bad", {999}), StoreInputError);
  EXPECT_THROW(store->SetBaseline("bad", {a, 999}), StoreInputError);  // all or nothing
  EXPECT_FALSE(store->GetBaseline("bad").has_value());
  EXPECT_TRUE(store->AddBaselineRun("main", a));
  EXPECT_FALSE(store->AddBaselineRun("main", a));  // already there
  EXPECT_EQ(store->GetBaseline("main")->run_ids, (Ids{a, b}));
  EXPECT_THROW(store->AddBaselineRun("nope", a), StoreInputError);
  EXPECT_TRUE(store->DeleteBaseline("release"));
  EXPECT_FALSE(store->DeleteBaseline("release"));
  EXPECT_EQ(store->GetRun(a).label, "v1");  // the runs stay
  const auto ids = store->InsertBaselineRuns("imported", "2026-12-01T00:00:00Z",
                                             {{SomeRun("x"), {SomeResult("throughput", {7, 8})}},
                                              {SomeRun("y"), {SomeResult("throughput", {9})}}});
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(store->GetBaseline("imported")->run_ids, ids);
  EXPECT_EQ(store->GetBaseline("imported")->created_at, "2026-12-01T00:00:00Z");
}

}  // namespace
}  // namespace perfbench
