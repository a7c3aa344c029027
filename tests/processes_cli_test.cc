// Processes as replicates through the real binary: run --processes, baselines
// of several runs, the gate's process rounds, and paired ab runs, on the
// selftest/noisy workload (a reproducible synthetic step time: processes
// spread over about 10%, steps about 1%, and a planted slowdown on demand).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.h"

namespace {

namespace fs = std::filesystem;

class Processes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("perfbench_proc_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  perfbench::testing::ProcessResult Run(const std::string& args, const std::string& env = "") {
    return perfbench::testing::RunIn(dir_, "env -u PERFBENCH_DB -u PERFBENCH_SELFTEST_SLOWDOWN " + env + " " +
                                               PERFBENCH_BIN + " " + args);
  }
  nlohmann::json Show(const std::string& run) { return nlohmann::json::parse(Run("show " + run + " --format json").out); }
  std::string Slurp(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // At the noise measured here (the workload's defaults), and 4% / 3% where a
  // test needs a gate to find a 20% slowdown every time (the variant says so).
  static constexpr const char* kNoisy = "--suite selftest --filter noisy --format none";
  static constexpr const char* kQuieter = "--suite selftest --filter noisy --param between=0.04 --param within=0.03 "
                                          "--format none";
  fs::path dir_;
};

TEST_F(Processes, RunStoresEverySamplesProcessAndTheVarianceComponents) {
  auto r = Run("run --suite selftest --filter noisy --param between=0.1 --param within=0.01 --processes 4 --repetitions 8");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("process 4/4"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("k: within / between"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("next time: "), std::string::npos) << r.err;
  const auto doc = Show("latest");
  EXPECT_EQ(doc["run"]["settings"]["processes"], 4);
  EXPECT_EQ(doc["run"]["settings"]["repetitions"], 2);  // ceil(8 / 4) per process
  const auto& res = doc["results"][0];
  EXPECT_EQ(res["process"], nlohmann::json({0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(res["components"]["processes"], 4);
  // Processes spread by 10%, steps by 1%: between dominates within.
  EXPECT_GT(res["components"]["between_cv"].get<double>(), 2 * res["components"]["within_cv"].get<double>());
  EXPECT_EQ(Run("run --processes 0").code, 2);
}

TEST_F(Processes, BaselinesOfSeveralRunsRoundTripWithTheirProcesses) {
  for (int i = 0; i < 2; ++i) ASSERT_EQ(Run(std::string("run ") + kNoisy + " --processes 1 --label r").code, 0);
  ASSERT_EQ(Run(std::string("run ") + kNoisy + " --processes 2 --label p").code, 0);
  auto set = Run("baseline set nb r");  // a label names all its runs
  ASSERT_EQ(set.code, 0) << set.err;
  EXPECT_NE(set.out.find("runs 1, 2"), std::string::npos) << set.out;
  auto add = Run("baseline add nb p");
  ASSERT_EQ(add.code, 0) << add.err;
  EXPECT_NE(add.out.find("(runs 1, 2, 3)"), std::string::npos) << add.out;
  EXPECT_NE(Run("baseline add nb p").out.find("already has run 3"), std::string::npos);
  EXPECT_EQ(Run("baseline add nb 99").code, 2);
  EXPECT_EQ(Run("baseline add nope 1").code, 2);
  ASSERT_EQ(Run("baseline export nb nb.json").code, 0);
  const auto doc = nlohmann::json::parse(Slurp("nb.json"));
  ASSERT_EQ(doc["runs"].size(), 3u);
  EXPECT_EQ(doc["runs"][2]["results"][0]["process"].size(), doc["runs"][2]["results"][0]["samples"].size());
  ASSERT_EQ(Run("baseline import nb.json --db other.db").code, 0);
  ASSERT_EQ(Run("baseline export nb again.json --db other.db").code, 0);
  EXPECT_EQ(Slurp("again.json"), Slurp("nb.json"));
  auto plain = Run("import nb.json --db third.db --label imported");  // as plain runs, all in one transaction
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(nlohmann::json::parse(Run("runs --db third.db --format json").out)["runs"].size(), 3u);
  // compare pools the baseline's runs: every run is a process.
  auto cmp = Run("compare nb p --format json");
  ASSERT_EQ(cmp.code, 0) << cmp.err;
  const auto m = nlohmann::json::parse(cmp.out)["metrics"][0];
  EXPECT_EQ(m["processes_baseline"], 4);  // 1 + 1 + 2
  EXPECT_EQ(m["level"], "process");
}

TEST_F(Processes, AGateAgainstAFiveRunBaselinePassesTheSameBuildAndFindsAPlantedSlowdown) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Run(std::string("run ") + kQuieter + " --label base").code, 0);
  ASSERT_EQ(Run("baseline set main base").code, 0);
  for (int i = 0; i < 3; ++i) {
    auto aa = Run("gate --baseline main --format json");
    EXPECT_EQ(aa.code, 0) << aa.out << aa.err;
  }
  auto slow = Run("gate --baseline main --format json --label slow", "PERFBENCH_SELFTEST_SLOWDOWN=0.2");
  ASSERT_EQ(slow.code, 1) << slow.out << slow.err;
  const auto j = nlohmann::json::parse(slow.out);
  for (const auto& m : j["metrics"]) {
    EXPECT_EQ(m["verdict"], "regression") << m["reason"];
    EXPECT_EQ(m["level"], "process");
  }
}

TEST_F(Processes, ADefaultRunHasThreeProcessesAndOneProcessASideIsInconclusive) {
  ASSERT_EQ(Run(std::string("run ") + kNoisy + " --label a").code, 0);
  EXPECT_EQ(Show("latest")["run"]["settings"]["processes"], 3);
  ASSERT_EQ(Run(std::string("run ") + kNoisy + " --processes 1 --label one").code, 0);
  ASSERT_EQ(Run(std::string("run ") + kNoisy + " --processes 1 --label two", "PERFBENCH_SELFTEST_SLOWDOWN=0.5").code, 0);
  auto c = Run("compare one two --format json");
  ASSERT_EQ(c.code, 0) << c.err;  // 50% slower, but one process a side cannot say so
  for (const auto& m : nlohmann::json::parse(c.out)["metrics"]) {
    EXPECT_EQ(m["verdict"], "inconclusive") << m["reason"];
    EXPECT_NE(m["reason"].get<std::string>().find("one process on a side"), std::string::npos);
    EXPECT_TRUE(m["mde"].is_null());
  }
}

// A step too slow for the budget is measured once per run: the later
// processes skip the variant with the first one's reason; its sibling runs.
TEST_F(Processes, AVariantSkippedForTimeIsSkippedByTheLaterProcessesWithoutMeasuring) {
  auto r = Run("run --suite selftest --filter paced --timeout 0.5 --repetitions 6 --processes 3 --format none");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& res : Show("latest")["results"]) {
    if (res["params"]["step_ms"] == "1") {
      EXPECT_EQ(res["status"], "ok");
      EXPECT_EQ(res["samples"].size(), 6u);  // 3 processes x 2
      continue;
    }
    EXPECT_EQ(res["status"], "skipped") << res["reason"];
    const std::string reason = res["reason"];
    EXPECT_EQ(reason.rfind("skipped by an earlier process of this run: ", 0), 0u) << reason;
    EXPECT_EQ(reason.find("earlier process", 30), std::string::npos) << reason;  // said once
    EXPECT_NE(reason.find("budget"), std::string::npos) << reason;
  }
}

// --run-budget is shared by the processes and, in each, by the variants: a
// slow one is cut and says so; one that cannot fit even its fewest steps in
// a quarter of its process's share is skipped (its sibling, the reference, never).
TEST_F(Processes, TheRunsBudgetCutsASlowVariantAndSkipsAHopelessOne) {
  auto bad = Run("run --suite selftest --filter paced --run-budget -1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--run-budget must be in [0, 1e7] seconds (0: none)"), std::string::npos) << bad.err;
  auto r = Run("run --suite selftest --filter paced --run-budget 12 --repetitions 40 --warmup 1 --processes 2 "
               "--format none");
  ASSERT_EQ(r.code, 0) << r.err;
  auto run = Show("latest");
  EXPECT_EQ(run["run"]["settings"]["run_budget_s"], 12.0);
  for (const auto& res : run["results"]) {
    if (res["metric"] != "step_time") continue;
    EXPECT_EQ(res["status"], "ok") << res["reason"];
    if (res["params"]["step_ms"] == "1") {
      EXPECT_EQ(res["samples"].size(), 40u);
      continue;
    }
    // Process 1: about 3 s a variant against 4.2 s of 200 ms steps (the reason is its); a
    // quarter of its ~6 s share holds its set-up, a warm-up and 2 repetitions (0.6 s).
    EXPECT_GE(res["samples"].size(), 4u);
    EXPECT_LT(res["samples"].size(), 40u);
    EXPECT_NE(res["reason"].get<std::string>().find("its share of the run's budget"), std::string::npos)
        << res["reason"];
  }
  r = Run("run --suite selftest --filter paced --run-budget 1 --repetitions 4 --warmup 1 --processes 2 --format none");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& res : Show("latest")["results"]) {
    if (res["metric"] != "step_time") continue;
    if (res["params"]["step_ms"] == "1") {
      EXPECT_EQ(res["status"], "ok") << res["reason"];
      continue;
    }
    EXPECT_EQ(res["status"], "skipped");
    EXPECT_NE(res["reason"].get<std::string>().find("do not fit in a quarter of this process's"), std::string::npos)
        << res["reason"];
  }
}

TEST_F(Processes, ARollingGatePlansStatesItsMdeAndRecordsItsVerdict) {
  EXPECT_EQ(Run("gate --baseline label:nightly").code, 2);  // no database yet
  for (int i = 0; i < 4; ++i) ASSERT_EQ(Run(std::string("run ") + kNoisy + " --label nightly").code, 0);
  auto few = Run("gate --baseline label:nightly --last 20");
  EXPECT_EQ(few.code, 3) << few.err;  // 4 runs: a window needs 5
  EXPECT_NE(few.err.find("4 usable run(s)"), std::string::npos) << few.err;
  for (int i = 0; i < 4; ++i) ASSERT_EQ(Run(std::string("run ") + kNoisy + " --label nightly").code, 0);
  const size_t runs_before = nlohmann::json::parse(Run("runs --format json").out)["runs"].size();
  auto plan = Run("gate --baseline label:nightly --last 20 --plan");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("plan: "), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("label nightly, last 8 of 8 runs"), std::string::npos) << plan.out;
  EXPECT_EQ(nlohmann::json::parse(Run("runs --format json").out)["runs"].size(), runs_before);  // nothing ran
  auto g = Run("gate --baseline label:nightly --format json");
  ASSERT_EQ(g.code, 0) << g.out << g.err;
  EXPECT_NE(g.err.find("this gate catches throughput regressions of"), std::string::npos) << g.err;
  const auto j = nlohmann::json::parse(g.out);
  EXPECT_EQ(j["schema_version"], 5);
  EXPECT_EQ(j["kind"], "rolling_baseline");
  for (const auto& m : j["metrics"]) EXPECT_TRUE(m["mde"].is_number()) << m["metric"];
  EXPECT_EQ(Show("latest")["run"]["label"], "nightly");  // rolls into its own window
  auto slow = Run("gate --baseline label:nightly --label slow --format none", "PERFBENCH_SELFTEST_SLOWDOWN=0.5");
  EXPECT_EQ(slow.code, 1) << slow.err;
  EXPECT_EQ(Run("gate --baseline label:nightly --last 3").code, 2);
  EXPECT_EQ(Run("gate --baseline nightly --last 3").code, 2);  // --last needs label:
  EXPECT_EQ(Run("baseline accept latest").code, 0);
  // One syntax for history and ab too.
  auto h = Run("history --baseline label:nightly --last 20 --metric throughput");
  EXPECT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.err.find("rolling baseline label:nightly: label nightly, last"), std::string::npos) << h.err;
  EXPECT_EQ(Run("history --baseline nightly").code, 2);
  EXPECT_EQ(Run("ab --baseline nightly --suite selftest --filter noisy").code, 2);
  EXPECT_NE(Run("compare label:nightly latest --format json").out.find("\"mde\""), std::string::npos);
}

TEST_F(Processes, AbPassesAnAATestAndFindsASlowerB) {
  auto aa = Run("ab --suite selftest --filter noisy --param between=0.01 --pairs 6 --format json");
  ASSERT_EQ(aa.code, 0) << aa.out << aa.err;
  const auto j = nlohmann::json::parse(aa.out);
  EXPECT_EQ(j["metrics"][0]["level"], "process");
  EXPECT_NE(j["metrics"][0]["reason"].get<std::string>().find("6 pairs"), std::string::npos);
  const auto runs = nlohmann::json::parse(Run("runs --format json").out)["runs"];
  EXPECT_EQ(runs.size(), 12u);
  // 20% slower B at 4% / 3% noise (at the measured 14% / 7%, 10 pairs resolve about 25%).
  auto ab = Run("ab --suite selftest --filter noisy --param between=0.04 --param within=0.03 "
                "--b-env PERFBENCH_SELFTEST_SLOWDOWN=0.2");
  EXPECT_EQ(ab.code, 1) << ab.err;
  // The table ends with one line per workload: "selftest/noisy ...: throughput 1.2x [..] slower: regression".
  const std::string last = ab.out.substr(ab.out.rfind('\n', ab.out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("selftest/noisy ", 0), 0u) << ab.out;
  EXPECT_NE(last.find("slower: regression"), std::string::npos) << last;
  EXPECT_NE(ab.err.find("pair 10/10"), std::string::npos) << ab.err;
  for (const char* bad : {"ab --pairs 5", "ab --a-bin /nonexistent/perfbench", "ab --label x", "ab --a-env NOEQUALS",
                          "ab --a-label x --b-label x", "ab --b-args '--db=y.db'", "ab --suite nope"})
    EXPECT_EQ(Run(bad).code, 2) << bad;
  EXPECT_FALSE(fs::exists(dir_ / "y.db"));
}

// The gate for a pull request: main's build as the reference, the PR's as
// the candidate, interleaved. A wrapper that plants a 20% slowdown stands
// in for a slower PR build.
TEST_F(Processes, TheInterleavedGateJudgesACandidateBuildAgainstAReferenceBuild) {
  const std::string bin = PERFBENCH_BIN;
  auto aa = Run("gate --reference-bin " + bin + " --suite selftest --filter noisy --param between=0.01 --pairs 6 "
                "--label aa --format json --junit aa.xml");
  ASSERT_EQ(aa.code, 0) << aa.out << aa.err;
  const auto j = nlohmann::json::parse(aa.out);
  EXPECT_EQ(j["kind"], "interleaved");
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_NE(aa.err.find("gate: pass (interleaved; 6 pairs, runs labelled aa-reference and aa-candidate)"),
            std::string::npos) << aa.err;
  EXPECT_NE(Slurp("aa.xml").find("<property name=\"kind\" value=\"interleaved\"/>"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(Run("runs --label aa-candidate --format json").out)["runs"].size(), 6u);
  {
    std::ofstream w(dir_ / "slow-pr");
    w << "#!/bin/sh\nPERFBENCH_SELFTEST_SLOWDOWN=0.2 exec " << bin << " \"$@\"\n";
  }
  fs::permissions(dir_ / "slow-pr", fs::perms::owner_all);
  auto slow = Run("gate --reference-bin " + bin + " --candidate-bin ./slow-pr --suite selftest --filter noisy "
                  "--param between=0.04 --param within=0.03 --pairs 8");
  EXPECT_EQ(slow.code, 1) << slow.out << slow.err;
  EXPECT_NE(slow.out.find("gate: interleaved, 8 pairs of processes"), std::string::npos) << slow.out;
  EXPECT_NE(slow.out.find("kind: interleaved: "), std::string::npos) << slow.out;
  EXPECT_NE(slow.err.find("gate: regression (interleaved; 8 pairs"), std::string::npos) << slow.err;
  for (const std::string& bad : std::vector<std::string>{"gate --reference-model old.pt2", "gate --reference-bin /nonexistent/perfbench",
                                "gate --reference-bin " + bin + " --baseline main", "gate --reference-bin " + bin + " --pairs 5",
                                "gate --reference-bin " + bin + " --processes 3", "gate --reference-bin " + bin + " --suite nope",
                                "gate --reference-bin " + bin + " --confirm 3", "gate --reference-model a.pt2 --model-file b.pt2 "
                                "--model-file c.pt2"})
    EXPECT_EQ(Run(bad).code, 2) << bad;
  // A candidate that measures other variants: nothing to judge, said after the first pair.
  {
    std::ofstream w(dir_ / "other-variant");
    w << "#!/bin/sh\nexec " << bin << " \"$@\" --param between=0.5\n";
  }
  fs::permissions(dir_ / "other-variant", fs::perms::owner_all);
  auto other = Run("gate --reference-bin " + bin + " --candidate-bin ./other-variant --suite selftest --filter noisy "
                   "--param between=0.01 --pairs 6 --label other");
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_NE(other.err.find("reference and candidate measured no variant in common"), std::string::npos) << other.err;
  auto help = Run("gate --help");
  EXPECT_NE(help.out.find("--reference-bin PATH | --reference-model FILE"), std::string::npos) << help.out;
  EXPECT_EQ(Run("gate --reference-bin --help").code, 0);
}

TEST_F(Processes, AdviseRanksAFasterSettingFirstAndStoresEveryRun) {
  auto r = Run("advise --suite selftest --filter noisy --param between=0.02 --param within=0.01 --rounds 6 --knob step_scale "
               "--format json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("round 6/6 (3/3)"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["rounds"], 6);
  ASSERT_EQ(j["rows"].size(), 2u);
  const auto& best = j["rows"][0];
  EXPECT_EQ(best["setting"], "step_scale:0.5");
  EXPECT_EQ(best["variant"], "selftest/noisy/model:synthetic/between:0.02/within:0.01");
  EXPECT_EQ(best["metric"], "throughput");
  EXPECT_EQ(best["verdict"], "improvement");
  EXPECT_EQ(best["pairs"], 6);
  EXPECT_NEAR(best["gain"].get<double>(), 2.0, 0.15);
  EXPECT_LE(best["ci_low"].get<double>(), best["ratio"].get<double>());
  EXPECT_GE(best["ci_high"].get<double>(), best["ratio"].get<double>());
  EXPECT_EQ(best["baseline_runs"].size(), 6u);
  EXPECT_EQ(j["rows"][1]["setting"], "step_scale:2");
  EXPECT_EQ(j["rows"][1]["verdict"], "regression");
  EXPECT_NEAR(j["rows"][1]["gain"].get<double>(), 0.5, 0.05);
  // Every process is a stored run: 6 rounds of base, 0.5 and 2.
  const auto runs = nlohmann::json::parse(Run("runs --format json").out)["runs"];
  EXPECT_EQ(runs.size(), 18u);
  const auto shown = Show("advise/step_scale:0.5");
  EXPECT_EQ(shown["results"][0]["params"]["step_scale"], "0.5");

  // Abbreviated options are forwarded by their canonical names, and a --param
  // on a knob does not move the baseline (it stays at the default, 1).
  auto table = Run("advise --suite selftest --filter noisy --roun 6 --kno step_scale --param step_scale=2");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("Best here: step_scale:0.5 on selftest/noisy/model:synthetic/between:0.14/within:0.07"),
            std::string::npos)
      << table.out;
  for (const char* bad : {"advise --rounds 5", "advise --suite selftest --filter noisy --knob nope", "advise --suite nope",
                          "advise --processes 3", "advise --suite selftest --filter noisy --format xml"})
    EXPECT_EQ(Run(bad).code, 2) << bad;
}

}  // namespace
