// Runs the real perfbench binary: exit codes, one-line errors, and what is
// (not) left on disk. Uses the hidden selftest suite, which needs no torch work.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/process.h"

namespace {

namespace fs = std::filesystem;

using Result = perfbench::testing::ProcessResult;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("perfbench_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `perfbench <args>` in the test directory; stdout and stderr apart.
  Result Run(const std::string& args, const std::string& env = "") {
    return perfbench::testing::RunIn(dir_, "env -u PERFBENCH_DB " + env + " " + PERFBENCH_BIN + " " + args);
  }
  bool Exists(const std::string& name) { return fs::exists(dir_ / name); }
  static int Lines(const std::string& s) { return perfbench::testing::Lines(s); }

  fs::path dir_;
};

TEST_F(Cli, HelpDocumentsCommandsAndExitCodes) {
  auto r = Run("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* word : {"run", "list", "env", "runs", "show", "exit codes", "PERFBENCH_DB"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  for (const char* cmd : {"run", "list", "env", "runs", "show", "compare", "import", "baseline", "gate", "ab"}) {
    auto h = Run(std::string(cmd) + " --help");
    EXPECT_EQ(h.code, 0) << cmd;
    EXPECT_NE(h.out.find("usage: perfbench " + std::string(cmd)), std::string::npos) << cmd;
  }
  EXPECT_FALSE(Exists("perfbench.db"));
}

size_t WidestLine(const std::string& text) {
  std::istringstream in(text);
  size_t widest = 0;
  for (std::string line; std::getline(in, line);) {
    size_t columns = 0;  // UTF-8 characters
    for (char c : line) columns += (c & 0xC0) != 0x80;
    widest = std::max(widest, columns);
  }
  return widest;
}

// Every command's help: no internal or positional-alias options, one way of
// showing defaults, its exit codes and environment, within 120 columns.
TEST_F(Cli, EveryCommandsHelpExplainsItselfWithin120Columns) {
  for (const char* cmd : {"run", "list", "env", "runs", "show", "compare", "gate", "ab", "peak", "profile", "diagnose",
                          "advise", "history", "procure", "report", "baseline", "import"}) {
    auto h = Run(std::string(cmd) + " --help");
    EXPECT_EQ(h.code, 0) << cmd;
    for (const char* leak : {"--action", "--arg1", "--more", "--candidate", "--runs ", "--file ", "--run ", "(="})
      EXPECT_EQ(h.out.find(leak), std::string::npos) << cmd << " --help shows " << leak << ":\n" << h.out;
    EXPECT_NE(h.out.find("exit codes:"), std::string::npos) << cmd;
    EXPECT_LE(WidestLine(h.out), 120u) << cmd;
    EXPECT_EQ(h.out.find(" \n"), std::string::npos) << cmd << ": trailing spaces";
  }
  EXPECT_NE(Run("run --help").out.find("PERFBENCH_DATA_DIR"), std::string::npos);
  EXPECT_NE(Run("run --help").out.find("PERFBENCH_COMM_TIMEOUT"), std::string::npos);
  EXPECT_NE(Run("compare --help").out.find("5  not comparable"), std::string::npos);
  EXPECT_NE(Run("profile --help").out.find("--output DIR"), std::string::npos);
}

TEST_F(Cli, ListAndEnvFit120ColumnsUnlessWide) {
  auto list = Run("list");
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_LE(WidestLine(list.out), 120u);
  EXPECT_GT(WidestLine(Run("list --wide").out), 120u) << "--wide keeps every character";
  EXPECT_LE(WidestLine(Run("env").out), 120u);
  auto filtered = Run("list --suite selftest --filter 'fake/mode:(ok|skip)'");
  ASSERT_EQ(filtered.code, 0) << filtered.err;
  EXPECT_EQ(Lines(filtered.out), 4) << filtered.out;  // header, rule, two variants
  EXPECT_EQ(Run("list --filter '('").code, 2);
}

TEST_F(Cli, GateSaysWhichRunOptionsComeFromTheBaseline) {
  auto r = Run("gate --baseline x --quick");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--quick is not a gate option"), std::string::npos) << r.err;
  EXPECT_NE(Run("gate --baseline x --filter mlp").err.find("--filter is not a gate option"), std::string::npos);
}

TEST_F(Cli, DiagnoseOfAStoredRunRefusesRunOptionsInOneLine) {
  auto r = Run("diagnose 3 --suite x");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("diagnose RUN reads a stored run"), std::string::npos) << r.err;
}

TEST_F(Cli, NoCommandOrUnknownCommandIsAUsageError) {
  EXPECT_EQ(Run("").code, 2);
  auto r = Run("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos);
}

TEST_F(Cli, BadRunInputsExitTwoWithOneLineAndWriteNothing) {
  const std::pair<const char*, const char*> cases[] = {
      {"run --repetitions abc", "repetitions"},
      {"run --repetitions 0", "--repetitions"},
      {"run --suite nope", "nope"},
      {"run --filter '('", "--filter"},
      {"run --device tpu", "--device"},
      {"run --bogus", "bogus"},
      {"run --suite selftest --filter matches-nothing", "no workload matches"},
      {"run --suite selftest --format xml", "--format"},
      {"run --suite selftest --label \"$(printf 'v1\\377')\"", "argument 5 ('v1\xEF\xBF\xBD') is not UTF-8: byte 0xFF"},
      {"run --suite selftest --param \"$(printf 'mode=\\303')\"", "not UTF-8: byte 0xC3 at offset 5"},
      {"run --suite selftest --param batchsize=4", "--param 'batchsize': no workload of the selected suites has this param"},
  };
  for (const auto& [args, needle] : cases) {
    auto r = Run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(Lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
    EXPECT_FALSE(Exists("perfbench.db")) << args;
  }
}

TEST_F(Cli, TextThatIsNotUtf8IsRefusedWithoutShowingAPassword) {
  auto url = Run("runs --db \"$(printf 'postgresql://ada:s3cret@h/db\\377')\"");
  EXPECT_EQ(url.code, 2);
  EXPECT_EQ(Lines(url.err), 1) << url.err;
  EXPECT_EQ(url.err.find("s3cret"), std::string::npos) << url.err;
  EXPECT_NE(url.err.find("ada:***@"), std::string::npos) << url.err;
  auto env = Run("runs", "PERFBENCH_DB=\"$(printf 'runs\\351.db')\"");
  EXPECT_EQ(env.code, 2);
  EXPECT_NE(env.err.find("PERFBENCH_DB ('runs\xEF\xBF\xBD.db') is not UTF-8: byte 0xE9 at offset 4"), std::string::npos)
      << env.err;
  EXPECT_FALSE(Exists("perfbench.db"));
}

TEST_F(Cli, CudaOnAMachineWithoutOneIsAUsageError) {
  auto env = Run("env --format json");
  if (nlohmann::json::parse(env.out).value("gpu_count", 0) > 0) GTEST_SKIP() << "this machine has a GPU";
  auto r = Run("run --suite selftest --device cuda");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no CUDA device"), std::string::npos);
}

TEST_F(Cli, AForeignDatabaseIsRefusedAndLeftAlone) {
  std::ofstream(dir_ / "notes.txt") << "not a database\n";
  auto r = Run("run --suite selftest --filter mode:ok --db notes.txt");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a perfbench database"), std::string::npos) << r.err;
  std::ifstream in(dir_ / "notes.txt");
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "not a database\n");
  auto s = Run("runs --db notes.txt");
  EXPECT_EQ(s.code, 2);
}

TEST_F(Cli, ReadCommandsDoNotCreateADatabase) {
  auto r = Run("runs");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no perfbench database"), std::string::npos);
  EXPECT_EQ(Run("show latest").code, 2);
  EXPECT_FALSE(Exists("perfbench.db"));
}

TEST_F(Cli, RunStoresResultsThatShowReadsBack) {
  auto r = Run("run --suite selftest --filter mode:ok --repetitions 5 --processes 1 --label v1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Exists("perfbench.db"));
  EXPECT_NE(r.out.find("selftest/fake"), std::string::npos);
  auto s = Run("show v1 --format json");
  ASSERT_EQ(s.code, 0) << s.err;
  auto doc = nlohmann::json::parse(s.out);
  EXPECT_EQ(doc["schema_version"], 2);
  EXPECT_EQ(doc["run"]["label"], "v1");
  EXPECT_EQ(doc["run"]["uuid"].get<std::string>().size(), 32u);
  EXPECT_EQ(doc["run"]["status"], "complete");
  EXPECT_TRUE(doc["run"]["fingerprint"].contains("cpu_model"));
  bool saw_throughput = false;
  for (const auto& res : doc["results"]) {
    EXPECT_EQ(res["samples"].size(), 5u);
    if (res["metric"] == "throughput") {
      saw_throughput = true;
      EXPECT_EQ(res["higher_is_better"], true);
      EXPECT_NEAR(res["median"].get<double>(), 64 / 1.006e-3, 100);
    }
  }
  EXPECT_TRUE(saw_throughput);
  auto runs = Run("runs");
  EXPECT_EQ(runs.code, 0);
  EXPECT_NE(runs.out.find("v1"), std::string::npos);
  EXPECT_EQ(Run("show 424242").code, 2);
}

TEST_F(Cli, AFailingWorkloadIsRecordedAndTheRunGoesOnWithExitFour) {
  auto r = Run("run --suite selftest --filter 'mode:(ok|throw|skip)' --repetitions 5 --format json");
  EXPECT_EQ(r.code, 4) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  std::map<std::string, std::string> status;
  for (const auto& res : doc["results"]) status[res["params"]["mode"]] = res["status"];
  EXPECT_EQ(status["ok"], "ok");
  EXPECT_EQ(status["throw"], "failed");
  EXPECT_EQ(status["skip"], "skipped");
  for (const auto& res : doc["results"])
    if (res["params"]["mode"] == "throw") {
      EXPECT_NE(res["reason"].get<std::string>().find("on purpose"), std::string::npos);
    }
}

TEST_F(Cli, AVariantWhoseStepsCannotFitItsBudgetIsSkippedNamingItsStepTime) {
  // Three 50 ms warm-up steps leave at most 0.15 s of 0.3: fewer than the 5
  // repetitions a verdict needs, so it is skipped before timing, not failed.
  auto r = Run("run --suite selftest --filter mode:slow --repetitions 200 --timeout 0.3 --format json");
  EXPECT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["results"][0]["status"], "skipped");
  const std::string reason = doc["results"][0]["reason"];
  EXPECT_NE(reason.find("mode:slow step"), std::string::npos) << reason;
  EXPECT_NE(reason.find("0.3 s budget per variant"), std::string::npos) << reason;
}

TEST_F(Cli, AVariantStillOverItsBudgetFailsAndItsSiblingsAreStored) {
  // Without warm-up there is no step time to project from: the budget cuts it.
  auto r = Run("run --suite selftest --filter 'mode:(slow|ok)' --repetitions 200 --warmup 0 --timeout 0.5 --format json");
  EXPECT_EQ(r.code, 4);
  auto doc = nlohmann::json::parse(r.out);
  std::map<std::string, std::string> status, reason;
  for (const auto& res : doc["results"]) {
    status[res["params"]["mode"]] = res["status"];
    reason[res["params"]["mode"]] = res["reason"];
  }
  EXPECT_EQ(status["slow"], "failed");
  EXPECT_NE(reason["slow"].find("time limit of 0.5 s exceeded after"), std::string::npos) << reason["slow"];
  EXPECT_EQ(status["ok"], "ok");
}

TEST_F(Cli, DatabasePathComesFromFlagThenEnvironment) {
  ASSERT_EQ(Run("run --suite selftest --filter mode:ok --format none", "PERFBENCH_DB=env.db").code, 0);
  EXPECT_TRUE(Exists("env.db"));
  EXPECT_FALSE(Exists("perfbench.db"));
  ASSERT_EQ(Run("run --suite selftest --filter mode:ok --format none --db flag.db", "PERFBENCH_DB=env.db").code, 0);
  EXPECT_TRUE(Exists("flag.db"));
}

TEST_F(Cli, EnvPrintsTheFingerprint) {
  auto r = Run("env --format json");
  ASSERT_EQ(r.code, 0);
  auto fp = nlohmann::json::parse(r.out);
  for (const char* k : {"cpu_model", "cpu_cores", "cpu_threads", "memory_bytes", "kernel", "compiler",
                        "perfbench_version", "git_sha", "profile_key"})
    EXPECT_TRUE(fp.contains(k)) << k;
  EXPECT_EQ(fp["profile_key"].get<std::string>().size(), 16u);
}

TEST_F(Cli, AnUnwritableDataDirectoryIsAUsageError) {
  std::ofstream(dir_ / "blocker") << "a file, not a directory";
  auto r = Run("run --suite dataloader --quick --data-dir blocker/cache");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--data-dir 'blocker/cache'"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists("perfbench.db"));
}

TEST_F(Cli, ACorruptShardFailsItsWorkloadAndTheRunGoesOn) {
  ASSERT_EQ(Run("run --suite dataloader --quick --filter 'loader/workers:0/.*off' --repetitions 1 --warmup 0 "
                "--data-dir data --format none").code, 0);
  // Corrupt every shard's JPEG data.
  for (const auto& d : fs::directory_iterator(dir_ / "data"))
    for (const auto& f : fs::directory_iterator(d.path())) {
      if (f.path().extension() != ".pbs") continue;
      std::fstream io(f.path(), std::ios::in | std::ios::out | std::ios::binary);
      for (std::streamoff off = 2000; off < 80000; off += 300) {
        io.seekp(off);
        io.put('\x5a');
      }
    }
  auto r = Run("run --suite dataloader,selftest --quick --filter '(loader/workers:0/.*off|fake/mode:ok)' "
               "--data-dir data --format json");
  EXPECT_EQ(r.code, 4) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  bool loader_failed = false, selftest_ok = false;
  for (const auto& res : doc["results"]) {
    if (res["suite"] == "dataloader" && res["status"] == "failed") {
      loader_failed = true;
      EXPECT_NE(res["reason"].get<std::string>().find(".pbs"), std::string::npos) << res["reason"];
    }
    if (res["suite"] == "selftest" && res["status"] == "ok") selftest_ok = true;
  }
  EXPECT_TRUE(loader_failed);
  EXPECT_TRUE(selftest_ok);
}

TEST_F(Cli, ListNamesVariants) {
  auto r = Run("list --suite selftest");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("selftest/fake/mode:ok"), std::string::npos);
}

}  // namespace

namespace {

class Compare : public Cli {
 protected:
  // Two identical selftest runs (ids 1 and 2) and the JSON of run 1.
  nlohmann::ordered_json Prepare() {
    EXPECT_EQ(Run("run --suite selftest --filter mode:ok --repetitions 8 --format none --label base").code, 0);
    EXPECT_EQ(Run("run --suite selftest --filter mode:ok --repetitions 8 --format none --label same").code, 0);
    return nlohmann::ordered_json::parse(Run("show base --format json").out);
  }
  void Import(const nlohmann::ordered_json& doc, const std::string& label) {
    std::ofstream(dir_ / "doc.json") << doc.dump();
    auto r = Run("import doc.json --label " + label);
    ASSERT_EQ(r.code, 0) << r.err;
  }
};

TEST_F(Compare, IdenticalRunsAreNoRegression) {
  Prepare();
  auto r = Run("compare base same --format json");
  EXPECT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema_version"], 5);
  EXPECT_EQ(doc["kind"], "stored_runs");  // two labels
  EXPECT_TRUE(doc["machine_changes"].empty());
  EXPECT_NE(doc["verdict"], "regression");
  for (const auto& m : doc["metrics"]) {
    for (const char* k : {"suite", "workload", "params", "metric", "unit", "higher_is_better", "baseline_median",
                          "candidate_median", "ratio", "ci_low", "ci_high", "p_value", "q_value", "verdict", "reason"})
      EXPECT_TRUE(m.contains(k)) << k;
    EXPECT_NE(m["verdict"], "regression");
  }
}

TEST_F(Compare, ASlowerCandidateIsARegressionWithExitOne) {
  auto doc = Prepare();
  for (auto& res : doc["results"]) {
    const double f = res["metric"] == "throughput" ? 0.8 : res["metric"] == "step_time" ? 1.25 : 1.0;
    for (auto& s : res["samples"]) s = s.get<double>() * f;
  }
  // One run a side and no earlier runs: the change could be the moment the
  // runs happened in, so compare does not call it, and says how to resolve it.
  std::ofstream(dir_ / "slow.json") << doc.dump();
  auto unknown = Run("compare base slow.json --format json");
  EXPECT_EQ(unknown.code, 0) << unknown.err;
  EXPECT_EQ(nlohmann::json::parse(unknown.out)["verdict"], "inconclusive");
  for (const auto& m : nlohmann::json::parse(unknown.out)["metrics"])
    if (m["metric"] == "throughput") {
      EXPECT_EQ(m["verdict"], "inconclusive");
      EXPECT_NE(m["reason"].get<std::string>().find("cannot be told from the moment the runs happened in"),
                std::string::npos) << m["reason"];
      EXPECT_TRUE(m["mde"].is_null());
    }
  EXPECT_EQ(Run("compare base slow.json --strict").code, 3);
  // Five earlier runs of the variant, of any label, teach the machine's spread.
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(Run("run --suite selftest --filter mode:ok --repetitions 8 --processes 1 --format none").code, 0);
  Import(doc, "slow");
  auto r = Run("compare base slow --format json");
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "regression");
  bool throughput_regressed = false;
  for (const auto& m : j["metrics"])
    if (m["metric"] == "throughput") {
      throughput_regressed = m["verdict"] == "regression";
      EXPECT_NEAR(m["ratio"].get<double>(), 0.8, 1e-9);
      EXPECT_LT(m["q_value"].get<double>(), 0.05);
    }
  EXPECT_TRUE(throughput_regressed);
  auto junit = Run("compare base slow --format junit");
  EXPECT_EQ(junit.code, 1);
  EXPECT_NE(junit.out.find("<failure message=\"throughput -20.0%"), std::string::npos) << junit.out;
  auto md = Run("compare base slow --format markdown --output report.md");
  EXPECT_EQ(md.code, 1);
  EXPECT_TRUE(Exists("report.md"));
  // The same comparison the other way round is an improvement.
  EXPECT_EQ(Run("compare slow base").code, 0);
}

TEST_F(Compare, AMissingBaselineIsAnInputErrorNeverAPass) {
  Prepare();
  auto r = Run("compare nightly-that-never-ran same");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1);
  EXPECT_NE(r.err.find("no baseline 'nightly-that-never-ran'"), std::string::npos) << r.err;
}

TEST_F(Compare, TheTableFits120ColumnsAndEndsWithOneLinePerWorkload) {
  Prepare();
  auto r = Run("compare base same");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LE(WidestLine(r.out), 120u) << r.out;
  // The last line: "selftest/fake ok: throughput 1x [0.99, 1.01] faster: unchanged".
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("selftest/fake ok: throughput ", 0), 0u) << r.out;
  EXPECT_NE(last.find("x ["), std::string::npos) << last;
}

TEST_F(Compare, DifferentHardwareIsRefusedUnlessAskedFor) {
  auto doc = Prepare();
  doc["run"]["fingerprint"]["cpu_model"] = "Some Other CPU";
  Import(doc, "other");
  auto r = Run("compare base other");
  EXPECT_EQ(r.code, 5) << "not comparable is exit 5, apart from bad usage (2)";
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("incomparable"), std::string::npos);
  EXPECT_NE(r.err.find("cpu_model"), std::string::npos);
  auto across = Run("compare base other --across-hardware --format json");
  EXPECT_EQ(across.code, 0) << across.err;
  EXPECT_EQ(nlohmann::json::parse(across.out)["verdict"], "report");
}

TEST_F(Compare, ImportRoundTripsAndRefusesMalformedFiles) {
  auto doc = Prepare();
  // The same run again lands once (its uuid): import is idempotent.
  std::ofstream(dir_ / "doc.json") << doc.dump();
  auto same = Run("import doc.json");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("already in"), std::string::npos) << same.out;
  EXPECT_EQ(same.out.find("keeps its label"), std::string::npos) << same.out;
  auto relabelled = Run("import doc.json --label other");  // says the label stays, not silently
  ASSERT_EQ(relabelled.code, 0) << relabelled.err;
  EXPECT_NE(relabelled.out.find("it keeps its label '" + doc["run"]["label"].get<std::string>() + "'"),
            std::string::npos) << relabelled.out;
  EXPECT_EQ(nlohmann::json::parse(Run("runs --format json").out)["runs"].size(), 2u);
  // Into another database it round-trips exactly, identity and all.
  ASSERT_EQ(Run("import doc.json --db other.db").code, 0);
  auto again = nlohmann::ordered_json::parse(Run("show 1 --format json --db other.db").out);
  again["run"]["id"] = doc["run"]["id"];
  EXPECT_EQ(again.dump(), doc.dump());
  // An edited copy (other samples) is another run, with an identity of its own.
  doc["results"][0]["samples"][0] = doc["results"][0]["samples"][0].get<double>() * 2;
  Import(doc, "base");
  EXPECT_NE(nlohmann::json::parse(Run("show 3 --format json").out)["run"]["uuid"], doc["run"]["uuid"]);
  std::ofstream(dir_ / "bad.json") << "{\"schema_version\": 1, \"run\": {}}";
  auto r = Run("import bad.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1);
  std::ofstream(dir_ / "notjson.json") << "this is not json";
  EXPECT_EQ(Run("import notjson.json").code, 2);
  auto runs = nlohmann::json::parse(Run("runs --format json").out);
  EXPECT_EQ(runs["runs"].size(), 3u) << "nothing written by the failed imports";
}

}  // namespace

namespace {

class Baselines : public Compare {
 protected:
  static nlohmann::ordered_json Read(const fs::path& p) {
    std::ifstream in(p);
    return nlohmann::ordered_json::parse(in);
  }
  // An informational checksum: the selftest's step counter is not a measurement.
  void WritePolicy() {
    std::ofstream(dir_ / "policy.json")
        << R"({"schema_version": 1, "overrides": [{"match": "selftest/*/checksum", "relative": 0.05, "informational": true}]})";
  }
};

TEST_F(Baselines, SetListShowExportImportRoundTripsByteForByte) {
  Prepare();
  auto set = Run("baseline set main base");
  ASSERT_EQ(set.code, 0) << set.err;
  EXPECT_NE(set.out.find("baseline main -> run 1"), std::string::npos) << set.out;
  EXPECT_NE(Run("baseline list").out.find("main"), std::string::npos);
  auto show = Run("baseline show main --format json");
  ASSERT_EQ(show.code, 0);
  auto doc = nlohmann::json::parse(show.out);
  EXPECT_EQ(doc["kind"], "perfbench-baseline");
  EXPECT_EQ(doc["schema_version"], 2);
  ASSERT_EQ(doc["runs"].size(), 1u);
  EXPECT_TRUE(doc["runs"][0]["run"].contains("fingerprint"));
  EXPECT_FALSE(doc["runs"][0]["results"][0]["samples"].empty());

  ASSERT_EQ(Run("baseline export main main.json").code, 0);
  auto imp = Run("baseline import main.json --db other.db");
  ASSERT_EQ(imp.code, 0) << imp.err;
  ASSERT_EQ(Run("baseline export main again.json --db other.db").code, 0);
  std::ifstream a(dir_ / "main.json"), b(dir_ / "again.json");
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  EXPECT_EQ(sa.str(), sb.str());

  // compare takes baseline names and baseline files.
  EXPECT_EQ(Run("compare main same").code, 0);
  auto from_file = Run("compare main.json same --format json");
  EXPECT_EQ(from_file.code, 0) << from_file.err;
  EXPECT_EQ(nlohmann::json::parse(from_file.out)["baseline"]["source"], "baseline main from main.json");
  // Moving and deleting the name leaves the runs alone.
  EXPECT_NE(Run("baseline set main same").out.find("(was 1)"), std::string::npos);
  EXPECT_EQ(Run("baseline delete main").code, 0);
  EXPECT_EQ(Run("show 1").code, 0);
}

TEST_F(Baselines, BadNamesRunsAndFilesExitTwoAndWriteNothing) {
  Prepare();
  for (const char* cmd : {"baseline set 123 base", "baseline set latest base", "baseline set x.json base",
                          "baseline set main 99", "baseline show nope", "baseline export nope out.json",
                          "baseline delete nope", "baseline frob", "baseline set main", "baseline list extra"}) {
    auto r = Run(cmd);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(Lines(r.err), 1) << cmd << ": " << r.err;
  }
  EXPECT_FALSE(Exists("out.json"));
  std::ofstream(dir_ / "run.json") << Run("show base --format json").out;
  auto r = Run("baseline import run.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a baseline export"), std::string::npos) << r.err;
  std::ofstream(dir_ / "broken.json") << R"({"schema_version": 1, "kind": "perfbench-baseline", "baseline": {"name": "x"}})";
  EXPECT_EQ(Run("baseline import broken.json").code, 2);
  EXPECT_TRUE(Run("baseline list").out.find("x ") == std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(Run("runs --format json").out)["runs"].size(), 2u);
}

TEST_F(Baselines, GatePassesTheSameBuildAndStoresTheCandidate) {
  Prepare();
  WritePolicy();
  ASSERT_EQ(Run("baseline set main base").code, 0);
  auto r = Run("gate --baseline main --policy policy.json --junit gate.xml --json gate.json --format none");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto j = Read(dir_ / "gate.json");
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["candidate"]["label"], "gate");
  EXPECT_TRUE(Exists("gate.xml"));
  // The baseline's settings were used: a quarter of its repetitions per
  // process (at least 2), in fresh processes: the plan's first round, then
  // up to 10 for workloads whose mde stays above the policy's.
  auto cand = nlohmann::json::parse(Run("show gate --format json").out);
  EXPECT_EQ(cand["run"]["settings"]["repetitions"], 2);
  const int first = cand["run"]["settings"]["processes"];
  EXPECT_GE(first, 2);
  const int processes = cand["results"][0]["components"]["processes"];
  EXPECT_GE(processes, first);
  EXPECT_LE(processes, 10);
  EXPECT_EQ(cand["results"][0]["samples"].size(), 2u * static_cast<size_t>(processes));
}

TEST_F(Baselines, GateAddsProcessesForUnresolvedWorkloadsAndRequireMdeExitsThree) {
  ASSERT_EQ(Run("baseline export main b.json").code, 2);  // no such baseline yet
  // selftest/noisy with processes 60% apart: nothing a few processes can decide.
  ASSERT_EQ(Run("run --suite selftest --filter noisy --param between=0.6 --format none --label base").code, 0);
  ASSERT_EQ(Run("baseline set main base").code, 0);
  auto r = Run("gate --baseline main --processes 2 --max-processes 5 --format json --require-mde");
  EXPECT_EQ(r.code, 3) << r.out << r.err;  // a pass that cannot resolve 10%
  EXPECT_NE(r.err.find("pass, but cannot resolve"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("round 2: 1 variant(s) inconclusive, +3 processes"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("round 3"), std::string::npos) << r.err;  // two looks
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_FALSE(j["unresolved"].is_null());
  for (const auto& m : j["metrics"]) {
    EXPECT_EQ(m["n_candidate"], 10) << m["metric"];  // 5 processes x a quarter of 5 (15 over 3 processes), at least 2
    EXPECT_EQ(m["processes_candidate"], 5) << m["metric"];
  }
  auto cand = nlohmann::json::parse(Run("show gate --format json").out);
  for (const auto& res : cand["results"]) EXPECT_EQ(res["samples"].size(), 10u);  // grown in place
  auto table = Run("gate --baseline main --processes 2 --max-processes 4");  // pass, mde stated
  EXPECT_EQ(table.code, 0) << table.err;
  const std::string last = table.out.substr(table.out.rfind('\n', table.out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("selftest/noisy synthetic/", 0), 0u) << "one line per workload ends the table:\n" << table.out;
  EXPECT_EQ(Run("gate --baseline main --processes 3 --max-processes 2").code, 2);  // fewer than the first round
  EXPECT_EQ(Run("gate --baseline main --processes 0").code, 2);
}

TEST_F(Baselines, GateFindsARegressionAndRefusesBadBaselines) {
  Prepare();
  WritePolicy();
  ASSERT_EQ(Run("baseline set main base").code, 0);
  ASSERT_EQ(Run("baseline export main fast.json").code, 0);
  auto doc = Read(dir_ / "fast.json");
  for (auto& res : doc["runs"][0]["results"]) {  // a baseline twice as fast as this build
    const double f = res["metric"] == "throughput" ? 2.0 : res["metric"] == "step_time" ? 0.5 : 1.0;
    for (auto& s : res["samples"]) s = s.get<double>() * f;
  }
  std::ofstream(dir_ / "fast.json") << doc.dump(2);
  auto r = Run("gate --baseline fast.json --policy policy.json --markdown summary.md --format none");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(Exists("summary.md"));
  // A regression fails the gate only once fresh processes show it again.
  EXPECT_NE(r.err.find("confirming with"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("regression(s) shown again, 0 not"), std::string::npos) << r.err;
  auto bad_confirm = Run("gate --baseline fast.json --confirm=-1");
  EXPECT_EQ(bad_confirm.code, 2);
  EXPECT_NE(bad_confirm.err.find("--confirm must be 0 or more"), std::string::npos) << bad_confirm.err;

  auto missing = Run("gate --baseline nightly");
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(Lines(missing.err), 1) << missing.err;
  EXPECT_EQ(Run("gate").code, 2);
  doc["runs"][0]["run"]["fingerprint"]["cpu_model"] = "Some Other CPU";
  std::ofstream(dir_ / "other.json") << doc.dump(2);
  auto other = Run("gate --baseline other.json");
  EXPECT_EQ(other.code, 5) << "other hardware is not comparable (5), not bad usage (2)";
  EXPECT_NE(other.err.find("cpu_model"), std::string::npos) << other.err;
  const auto runs = nlohmann::json::parse(Run("runs --format json").out)["runs"].size();
  EXPECT_EQ(runs, 3u) << "the refused gates ran nothing";
}

TEST_F(Compare, GoogleBenchmarkJsonImportsAsARun) {
  const std::string fixture = std::string(PERFBENCH_FIXTURES) + "/gbench_stats_bench.json";
  auto r = Run("import '" + fixture + "' --label gb --suite stats");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("google-benchmark"), std::string::npos);
  auto doc = nlohmann::json::parse(Run("show gb --format json").out);
  ASSERT_EQ(doc["results"].size(), 9u);
  EXPECT_EQ(doc["results"][0]["suite"], "stats");
  EXPECT_EQ(doc["results"][0]["samples"].size(), 3u);
  // Same file twice: compares as no regression (too few samples to decide).
  ASSERT_EQ(Run("import '" + fixture + "' --label gb2 --suite stats").code, 0);
  EXPECT_EQ(Run("compare gb gb2").code, 0);
  EXPECT_EQ(Run("compare gb gb2 --strict").code, 3);
}

TEST_F(Cli, ShowJsonAndBaselineExportOfAnExistingDatabaseAreUnchanged) {
  // golden_runs.db and its outputs were made by the build before the
  // settings/enum/result-key refactor: the JSON contracts must not move.
  fs::copy_file(fs::path(PERFBENCH_FIXTURES) / "golden_runs.db", dir_ / "g.db");
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  // Version 2 added run.uuid (derived for runs recorded before identities:
  // the same on every read) and run.machine; all else is as it was.
  auto as_v1 = [](nlohmann::ordered_json doc) {
    doc["run"].erase("uuid");
    doc["run"].erase("machine");
    doc["schema_version"] = 1;
    return doc.dump(2) + "\n";
  };
  for (const char* run : {"1", "2"}) {
    auto r = Run(std::string("show ") + run + " --db g.db --format json");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto doc = nlohmann::ordered_json::parse(r.out);
    EXPECT_EQ(doc["schema_version"], 2);
    EXPECT_EQ(doc["run"]["uuid"].get<std::string>().size(), 32u);
    EXPECT_EQ(doc["run"]["uuid"], nlohmann::ordered_json::parse(Run(std::string("show ") + run + " --db g.db --format json").out)["run"]["uuid"]);
    EXPECT_EQ(doc["run"]["machine"], doc["run"]["hostname"]);
    EXPECT_EQ(as_v1(doc), slurp(fs::path(PERFBENCH_FIXTURES) / (std::string("golden_show_run") + run + ".json"))) << run;
  }
  // The baseline export moved on purpose (version 2: a list of runs); a
  // version 1 file still imports, and its run and results come back whole.
  ASSERT_EQ(Run("baseline export fxbase out.json --db g.db").code, 0);
  const auto v1 = nlohmann::ordered_json::parse(slurp(fs::path(PERFBENCH_FIXTURES) / "golden_baseline_export.json"));
  const auto v2 = nlohmann::ordered_json::parse(slurp(dir_ / "out.json"));
  ASSERT_EQ(v1["schema_version"], 1);
  EXPECT_EQ(v2["schema_version"], 2);
  EXPECT_EQ(v2["baseline"], v1["baseline"]);
  ASSERT_EQ(v2["runs"].size(), 1u);
  auto run_v2 = v2["runs"][0]["run"];
  run_v2.erase("uuid");
  run_v2.erase("machine");
  EXPECT_EQ(run_v2, v1["run"]);
  EXPECT_EQ(v2["runs"][0]["results"], v1["results"]);
  auto imp = Run("baseline import '" + (fs::path(PERFBENCH_FIXTURES) / "golden_baseline_export.json").string() +
                 "' --db v1.db");
  ASSERT_EQ(imp.code, 0) << imp.err;
  ASSERT_EQ(Run("baseline export fxbase again.json --db v1.db").code, 0);
  EXPECT_EQ(slurp(dir_ / "again.json"), slurp(dir_ / "out.json"));
}

TEST_F(Cli, AGateMatchesABaselineWhoseParamsAreInAnotherOrder) {
  ASSERT_EQ(Run("run --suite selftest --filter 'paced/step_ms:1/' --repetitions 5 --warmup 1 --processes 1 --format none").code,
            0);
  ASSERT_EQ(Run("baseline set b latest").code, 0);
  ASSERT_EQ(Run("baseline export b b.json").code, 0);
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(std::ifstream(dir_ / "b.json"));
  for (auto& res : doc["runs"][0]["results"]) {
    ASSERT_EQ(res["params"].begin().key(), "step_ms");
    nlohmann::ordered_json reversed = nlohmann::ordered_json::object();
    reversed["mode"] = res["params"]["mode"];
    reversed["step_ms"] = res["params"]["step_ms"];
    res["params"] = reversed;
  }
  std::ofstream(dir_ / "reordered.json") << doc.dump(2);
  auto r = Run("gate --baseline reordered.json --format json");
  EXPECT_NE(r.code, 2) << r.err;
  EXPECT_EQ(r.err.find("none of the baseline"), std::string::npos) << r.err;
  auto report = nlohmann::json::parse(r.out);
  bool matched = false;
  for (const auto& m : report["metrics"])
    if (m["metric"] == "step_time") matched = m["n_baseline"] == 5 && m["n_candidate"].get<int>() >= 5;
  EXPECT_TRUE(matched) << r.out;
}

TEST_F(Cli, AGateRestoresTheBaselinesSettings) {
  ASSERT_EQ(Run("run --suite selftest --filter mode:ok --repetitions 6 --warmup 1 --seed 9 --timeout 77 "
                "--format none --data-dir dd").code, 0);
  ASSERT_EQ(Run("baseline set b latest").code, 0);
  // The checksum counts steps, so it differs with the repetitions per process: not the point here.
  EXPECT_NE(Run("gate --baseline b --format none --allow-inconclusive").code, 2);
  auto show = nlohmann::json::parse(Run("show latest --format json").out);
  const auto& s = show["run"]["settings"];
  EXPECT_EQ(s["repetitions"], 2);  // a quarter of 6 per process, at least 2
  EXPECT_EQ(s["warmup_steps"], 1);
  EXPECT_EQ(s["seed"], 9);
  EXPECT_EQ(s["timeout_s"], 77.0);
  EXPECT_EQ(s["data_dir"], "dd");
  EXPECT_EQ(s["filter"], "mode:ok");
}

TEST_F(Cli, EnvPrintsOneLinePerField) {
  auto r = Run("env");
  ASSERT_EQ(r.code, 0);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_TRUE(!line.empty() && line[0] != ' ' && line[0] != '\t') << "continuation line: '" << line << "'";
}

}  // namespace
