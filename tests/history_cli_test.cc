// History, procurement and the HTML report through the real binary: a
// planted step found at its run, machines of three fingerprints ranked with
// ties, and the report rendered by headless Chromium without console errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/process.h"

namespace {

namespace fs = std::filesystem;

class HistoryCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("perfbench_hist_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  perfbench::testing::ProcessResult Run(const std::string& args, const std::string& env = "") {
    return perfbench::testing::RunIn(dir_, "env -u PERFBENCH_DB -u PERFBENCH_SELFTEST_SLOWDOWN " + env + " " +
                                               PERFBENCH_BIN + " " + args);
  }
  // A run of selftest/noisy (processes and steps spread by 1%) exported as JSON, with
  // `slowdown` planted.
  nlohmann::json NoisyRun(double slowdown, int processes = 1) {
    const std::string env = "PERFBENCH_SELFTEST_SLOWDOWN=" + std::to_string(slowdown);
    auto r = Run("run --suite selftest --filter noisy --param between=0.01 --param within=0.01 --format none --db scratch.db "
                 "--processes " +
                     std::to_string(processes),
                 env);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(Run("show latest --format json --db scratch.db").out);
  }
  void Import(const nlohmann::json& doc, const std::string& label) {
    std::ofstream(dir_ / "run.json") << doc.dump();
    auto r = Run("import run.json --label " + label);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  fs::path dir_;
};

TEST_F(HistoryCli, TwelveImportedRunsWithAStepAtRunSevenGiveOneChangePointThere) {
  for (int i = 0; i < 12; ++i) Import(NoisyRun(i >= 6 ? 0.10 : 0.0), "nightly");
  auto r = Run("history --label nightly --metric step_time --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema_version"], 1);
  ASSERT_EQ(doc["series"].size(), 1u);
  const auto& s = doc["series"][0];
  ASSERT_EQ(s["points"].size(), 12u);
  ASSERT_EQ(s["change_points"].size(), 1u) << s.dump();
  EXPECT_EQ(s["change_points"][0]["index"], 6);
  EXPECT_EQ(s["change_points"][0]["run_id"], s["points"][6]["run_id"]);
  EXPECT_NEAR(s["change_points"][0]["change"].get<double>(), 0.10, 0.03);
  EXPECT_LT(s["change_points"][0]["p_value"].get<double>(), 0.001);
  EXPECT_EQ(Run("history --label nightly --metric step_time --fail-on-change --format none").code, 2);  // bad format
  EXPECT_EQ(Run("history --label nightly --metric step_time --fail-on-change").code, 1);  // slower: a regression
  EXPECT_EQ(Run("history --label nightly --metric step_time --last 6").code, 0);  // after the step: none
  EXPECT_EQ(Run("history --label nope").code, 2);
  EXPECT_EQ(Run("history --label nightly --window 2").code, 2);
}

TEST_F(HistoryCli, ProcureRanksThreeMachinesWithTies) {
  const auto base = NoisyRun(0.0, 3);
  const char* cpus[] = {"Xeon Gold 6430", "EPYC 9654", "Graviton3"};
  const double slow[] = {0.0, 0.002, 0.5};  // A and B within noise; C 50% slower
  for (int m = 0; m < 3; ++m) {
    auto doc = m == 0 ? base : NoisyRun(slow[m], 3);
    doc["run"]["fingerprint"]["cpu_model"] = cpus[m];
    doc["run"]["profile_key"] = std::string("machine-") + std::to_string(m);
    Import(doc, std::string("m") + std::to_string(m));
  }
  auto r = Run("procure m0 m1 m2 --price m0=2.5 --power m2=300 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["machines"].size(), 3u);
  EXPECT_EQ(doc["machines"][2]["description"], "Graviton3, 2 cores");
  const auto& e = doc["rows"][0]["entries"];
  EXPECT_EQ(e[0]["level"], "processes");
  EXPECT_EQ(e[0]["rank"], e[1]["rank"]) << "A and B overlap: tied";
  EXPECT_EQ(e[2]["rank"], 3);
  EXPECT_NEAR(e[2]["relative"].get<double>(), 1 / 1.5, 0.05);
  EXPECT_TRUE(e[0]["per_usd"].is_number());
  EXPECT_EQ(e[2]["energy_source"], "given power");
  EXPECT_NE(Run("procure m0 m1 m2").out.find("tied"), std::string::npos);
  for (const char* bad : {"procure m0", "procure m0 m1 --price m9=1", "procure m0 m1 --price m0=-1", "procure m0 nope"})
    EXPECT_EQ(Run(bad).code, 2) << bad;
}

// Headless Chromium, when installed (Debian's chromium; scripts/setup.sh
// installs it): the DOM after the scripts ran, and its console on stderr.
std::string Chromium() {
  for (const char* c : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string probe = std::string("command -v ") + c + " >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return c;
  }
  return "";
}

TEST_F(HistoryCli, TheReportRendersItsPlotsInHeadlessChromiumWithoutErrors) {
  for (int i = 0; i < 3; ++i) {
    auto r = Run("run --suite amp --quick --filter 'mlp/precision:(fp32|bf16)' --no-control --repetitions 5 "
                 "--warmup 1 --label nightly --format none");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  auto r = Run("report --label nightly --compare 1 3 --output r.html");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir_ / "r.html");
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("Dygraph"), std::string::npos) << "dygraphs inlined";
  EXPECT_EQ(html.str().find("src=\"http"), std::string::npos) << "no network";
  EXPECT_NE(html.str().find("Comparison"), std::string::npos);
  EXPECT_EQ(Run("report --output").code, 2);
  EXPECT_EQ(Run("report --label nope --output x.html").code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "x.html"));
  const std::string browser = Chromium();
  if (browser.empty()) GTEST_SKIP() << "no chromium here: the page was written but not rendered";
  auto dom = perfbench::testing::RunIn(
      dir_, browser + " --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 "
                      "--virtual-time-budget=10000 --dump-dom file://" + (dir_ / "r.html").string());
  ASSERT_EQ(dom.code, 0) << dom.err;
  // amp's two headline plots, and the trends of its headline metrics over the three runs.
  EXPECT_NE(dom.out.find("data-errors=\"\""), std::string::npos) << dom.out.substr(0, 2000);
  const auto at = dom.out.find("data-plots=\"");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stoi(dom.out.substr(at + 12)), 4);
  EXPECT_NE(dom.out.find("<canvas"), std::string::npos) << "dygraphs drew";
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find(":ERROR:CONSOLE"), std::string::npos) << dom.err;
}

}  // namespace
