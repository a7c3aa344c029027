// The store's contract, the same for both engines: SQLite (a file) and
// PostgreSQL (a server; PERFBENCH_TEST_POSTGRES_URL names an empty database
// tests/postgres_fleet_test.sh started; without it those cases are skipped
// here and that script fails instead).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "report/run_report.h"
#include "store/location.h"
#include "store/store.h"

namespace perfbench {
namespace {

namespace fs = std::filesystem;

class StoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      const char* url = std::getenv("PERFBENCH_TEST_POSTGRES_URL");
      if (url == nullptr || *url == '\0') GTEST_SKIP() << "PERFBENCH_TEST_POSTGRES_URL not set (tests/postgres_fleet_test.sh sets it)";
      location_ = url;
    } else {
      dir_ = fs::temp_directory_path() / ("perfbench_contract_" + std::to_string(getpid()) + "_" +
                                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
      fs::remove_all(dir_);
      fs::create_directories(dir_);
      location_ = (dir_ / "a.db").string();
    }
    store_ = Store::Open(location_, Store::Mode::kCreate);
    // Unique per test and process: the server database is shared by the cases.
    tag_ = std::to_string(getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  RunRecord SomeRun(const std::string& label, const std::string& machine = "") {
    RunRecord r;
    r.label = label + "-" + tag_;
    r.started_at = "2026-12-05T10:00:00Z";
    r.finished_at = "2026-12-05T10:01:00Z";
    r.status = RunStatus::kComplete;
    r.hostname = "host-a";
    r.pid = 4242;
    r.profile_key = "0123456789abcdef";
    r.fingerprint = {{"cpu_model", "Test CPU"}, {"torch_version", "2.11.0"}};
    r.settings = {{"repetitions", 5}};
    r.command = "perfbench run --quick";
    r.machine = machine.empty() ? "" : machine + "-" + tag_;
    return r;
  }
  static ResultRecord SomeResult(const std::string& metric, std::vector<double> samples, std::vector<int> process = {}) {
    ResultRecord r;
    r.suite = "amp";
    r.workload = "mlp";
    r.params = Params{{"size", "quick"}, {"precision", "bf16"}};  // declaration order, not sorted
    r.metric = metric;
    r.unit = "samples/s";
    r.higher_is_better = true;
    r.samples = std::move(samples);
    r.process = std::move(process);
    r.attributes = {{"batch_size", "128"}, {"note", "quote ' and ? kept"}};
    return r;
  }
  std::string location_, tag_;
  fs::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContract, RoundTripsRunsResultsAndBitExactSamples) {
  const std::vector<double> samples{0.1, 1.0 / 3.0, 12345.678901234567, 1e-300, 5e-324, 1.7976931348623157e308};
  const int64_t id = store_->BeginRun(SomeRun("rt"));
  store_->AppendResults(id, {SomeResult("throughput", samples, {0, 0, 1, 1, 2, 2})});
  store_->FinishRun(id, RunStatus::kComplete);
  const RunRecord run = store_->GetRun(id);
  EXPECT_EQ(run.status, RunStatus::kComplete);
  EXPECT_EQ(run.fingerprint["torch_version"], "2.11.0");
  EXPECT_EQ(run.uuid.size(), 32u);
  EXPECT_EQ(run.machine, MachineName());
  EXPECT_EQ(run.ok_results, 1);
  const auto results = store_->GetResults(id);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].samples, samples);  // bit-exact through either engine
  EXPECT_EQ(results[0].process, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(results[0].params.Encode(), "size:quick/precision:bf16");
  EXPECT_EQ(results[0].params.items().front().first, "size");
  EXPECT_EQ(results[0].attributes.at("note"), "quote ' and ? kept");
  EXPECT_EQ(store_->SchemaVersion(), Store::kSchemaVersion);
}

TEST_P(StoreContract, ManySamplesCrossTheInsertChunks) {
  std::vector<double> samples;
  for (int i = 0; i < 1000; ++i) samples.push_back(1.0 + i * 1e-3);
  const int64_t id = store_->InsertRun(SomeRun("chunks"), {SomeResult("step_time", samples)});
  EXPECT_EQ(store_->GetResults(id).at(0).samples, samples);
}

TEST_P(StoreContract, ARunLandsOnceByItsUuid) {
  RunRecord run = SomeRun("once");
  run.uuid = NewRunUuid();
  const auto first = store_->InsertRunsReporting({{run, {SomeResult("throughput", {1, 2, 3})}}});
  const auto second = store_->InsertRunsReporting({{run, {SomeResult("throughput", {1, 2, 3})}}});
  ASSERT_TRUE(first.at(0).inserted);
  EXPECT_FALSE(second.at(0).inserted);
  EXPECT_EQ(first.at(0).id, second.at(0).id);
  EXPECT_EQ(store_->RunsWithLabel(run.label).size(), 1u);
  EXPECT_EQ(store_->GetResults(first.at(0).id).size(), 1u);
  EXPECT_EQ(store_->FindRunByUuid(run.uuid), first.at(0).id);
}

TEST_P(StoreContract, SeveralRunsInsertAllOrNone) {
  RunRecord good = SomeRun("all-or-none"), bad = SomeRun("all-or-none");
  bad.status = RunStatus::kAborted;  // never stored: the CHECK constraint refuses it
  EXPECT_THROW(store_->InsertRuns({{good, {SomeResult("throughput", {1, 2})}}, {bad, {}}}), StoreError);
  EXPECT_TRUE(store_->RunsWithLabel(good.label).empty());
  // The store is still usable after the rollback.
  EXPECT_GT(store_->InsertRun(good, {SomeResult("throughput", {1, 2})}), 0);
}

TEST_P(StoreContract, ListsRunsByMachine) {
  const int64_t a = store_->InsertRun(SomeRun("m", "alpha"), {});
  const int64_t b = store_->InsertRun(SomeRun("m", "beta"), {});
  const auto alpha = store_->ListRuns(-1, "alpha-" + tag_);
  ASSERT_EQ(alpha.size(), 1u);
  EXPECT_EQ(alpha[0].id, a);
  const auto machines = store_->Machines();
  EXPECT_EQ(machines.at(0), "beta-" + tag_);  // the most recent first
  EXPECT_NE(std::find(machines.begin(), machines.end(), "alpha-" + tag_), machines.end());
  EXPECT_EQ(store_->ListRuns(1).at(0).id, b);
}

TEST_P(StoreContract, BaselinesAndVerdicts) {
  const int64_t a = store_->InsertRun(SomeRun("b"), {});
  const int64_t b = store_->InsertRun(SomeRun("b"), {});
  const std::string name = "nightly-" + tag_;
  EXPECT_TRUE(store_->SetBaseline(name, {a}).empty());
  EXPECT_EQ(store_->SetBaseline(name, {a, b}), (std::vector<int64_t>{a}));
  EXPECT_FALSE(store_->AddBaselineRun(name, b));
  EXPECT_EQ(store_->GetBaseline(name)->run_ids, (std::vector<int64_t>{a, b}));
  EXPECT_THROW(store_->SetBaseline(name, {std::numeric_limits<int32_t>::max()}), StoreInputError);
  store_->SetRunVerdict(b, "regression");
  store_->SetRunVerdict(b, "accepted");
  EXPECT_EQ(store_->GetRunVerdict(b), "accepted");
  EXPECT_EQ(store_->GetRunVerdict(a), std::nullopt);
  EXPECT_TRUE(store_->DeleteBaseline(name));
  EXPECT_FALSE(store_->DeleteBaseline(name));
  EXPECT_EQ(store_->ResolveRun("latest"), b);
}

TEST_P(StoreContract, AGatesRunFinishesWithItsVerdictOrNotAtAll) {
  RunRecord run = SomeRun("judged");
  run.status = RunStatus::kRunning;
  const int64_t id = store_->BeginRun(run);
  EXPECT_THROW(store_->FinishRun(id, RunStatus::kComplete, "maybe"), StoreInputError);
  EXPECT_NE(store_->GetRun(id).status, RunStatus::kComplete);  // rolled back with the verdict
  EXPECT_EQ(store_->GetRun(id).finished_at, "");
  EXPECT_EQ(store_->GetRunVerdict(id), std::nullopt);
  store_->FinishRun(id, RunStatus::kComplete, "regression");
  EXPECT_EQ(store_->GetRun(id).status, RunStatus::kComplete);
  EXPECT_EQ(store_->GetRunVerdict(id), "regression");
}

TEST_P(StoreContract, ACommandLineKeepsNoPassword) {
  RunRecord run = SomeRun("redact");
  run.command = "perfbench run --db postgresql://ada:s3cret@db.example:5432/fleet?password=x2 --quick";
  const int64_t id = store_->BeginRun(run);
  EXPECT_EQ(store_->GetRun(id).command, "perfbench run --db postgresql://ada:***@db.example:5432/fleet?password=*** --quick");
}

TEST_P(StoreContract, TextThatIsNotUtf8IsKeptAsReplacementCharacters) {
  // A hostname, an exception's text or an environment value is not always
  // UTF-8; PostgreSQL would refuse it and JSON cannot hold it.
  RunRecord run = SomeRun("bytes\xff");
  run.hostname = "h\xc3";
  run.command = std::string("perfbench run --model-file m\xe9.pt2 --x a") + '\0' + "b";
  run.fingerprint["cpu_model"] = "CPU\xfe";
  ResultRecord failed = SomeResult("throughput", {});
  failed.status = ResultStatus::kFailed;
  failed.reason = "step 1: cannot open '\xe9t\xe9.bin'";
  failed.attributes["note"] = "\xed\xa0\x80";
  const int64_t id = store_->InsertRun(run, {failed});
  const RunRecord back = store_->GetRun(id);
  EXPECT_EQ(back.label, "bytes\xEF\xBF\xBD-" + tag_);
  EXPECT_EQ(back.hostname, "h\xEF\xBF\xBD");
  EXPECT_EQ(back.fingerprint["cpu_model"], "CPU\xEF\xBF\xBD");
  EXPECT_EQ(back.command.find("m\xEF\xBF\xBD.pt2"), 27u) << back.command;
  EXPECT_EQ(back.command.back(), 'b');  // not cut at the NUL
  const auto results = store_->GetResults(id);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].reason, "step 1: cannot open '\xEF\xBF\xBDt\xEF\xBF\xBD.bin'");
  EXPECT_EQ(results[0].attributes.at("note"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_NO_THROW(RunToJson(back, results).dump());
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreContract, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST(Location, RedactsPasswordsOnly) {
  EXPECT_EQ(RedactLocation("postgresql://ada:pw@h/db"), "postgresql://ada:***@h/db");
  EXPECT_EQ(RedactLocation("postgresql://ada@h:5/db?sslmode=require&password=pw"),
            "postgresql://ada@h:5/db?sslmode=require&password=***");
  EXPECT_EQ(RedactLocation("postgres:///db?service=fleet"), "postgres:///db?service=fleet");
  EXPECT_EQ(RedactLocation("results/perfbench.db"), "results/perfbench.db");
  EXPECT_EQ(RedactCommandLine("push --to=postgresql://u:p@h/d --db x.db"), "push --to=postgresql://u:***@h/d --db x.db");
  // Passwords holding the characters that end other URL parts: libpq takes
  // the userinfo up to the last '@'.
  for (const char* pw : {"p?ss", "p/ss", "p@ss", "p:ss", "p%40ss"}) {
    const std::string url = std::string("postgresql://u:") + pw + "@h/db";
    EXPECT_EQ(RedactLocation(url), "postgresql://u:***@h/db") << pw;
    EXPECT_EQ(RedactCommandLine("run --db " + url).find(pw), std::string::npos) << pw;
    EXPECT_EQ(RedactSecrets(std::string("FATAL: bad ") + pw + " for u", url), "FATAL: bad *** for u") << pw;
  }
  EXPECT_EQ(RedactSecrets("auth failed for p@ss", "postgresql://u:p%40ss@h/db"), "auth failed for ***");
  EXPECT_TRUE(IsServerUrl("postgres://h/d"));
  EXPECT_FALSE(IsServerUrl("postgresql.db"));
}

}  // namespace
}  // namespace perfbench
