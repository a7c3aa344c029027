// throughput_per_control through the real binary, with busy neighbours on
// the machine's cores: its own ctest entry, holding the whole machine (no
// other test beside it: they would be neighbours too).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/process.h"

namespace {

namespace fs = std::filesystem;

class ControlBlock : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("perfbench_control_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  nlohmann::json Show(const std::string& run) {
    return nlohmann::json::parse(
        perfbench::testing::RunIn(dir_, std::string("env -u PERFBENCH_DB ") + PERFBENCH_BIN + " show " + run + " --format json")
            .out);
  }
  fs::path dir_;
};

// throughput_per_control through the real binary, on real work
// (selftest/compute, one thread): three busy neighbours on this machine's
// cores slow the step (the raw throughput about halves) and the control block
// beside it, so the metric moves much less far (and the other way: the
// shorter block loses more than its share to the neighbours' time slices);
// slower code (30% more work) moves it as far as the throughput.
TEST_F(ControlBlock, TheControlNormalisedThroughputCancelsBusyNeighboursButNotSlowerCode) {
  const auto run_with = [](const std::string& env) {
    return "env -u PERFBENCH_DB -u PERFBENCH_SELFTEST_SLOWDOWN " + env + " " + PERFBENCH_BIN +
           " run --suite selftest --filter compute --threads 1 --processes 1 --repetitions 15 --format none";
  };
  const std::string run = run_with("");
  const auto medians = [&](const std::string& command) {
    auto r = perfbench::testing::RunIn(dir_, command);
    EXPECT_EQ(r.code, 0) << r.err;
    std::map<std::string, double> out;
    const auto doc = Show("latest");
    for (const auto& res : doc["results"]) {
      if (res["suite"] != "selftest") continue;
      auto v = res["samples"].get<std::vector<double>>();
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      out[res["metric"].get<std::string>()] = v[v.size() / 2];
    }
    return out;
  };
  const auto base = medians(run);
  const std::string hog = "sh -c 'while :; do :; done' >/dev/null 2>&1 & ";
  const std::string neighbours = "{ " + hog + "a=$!; " + hog + "b=$!; " + hog + "c=$!; sleep 0.2; " + run +
                                 "; rc=$?; kill $a $b $c; (exit $rc); }";
  const auto slower = medians(run_with("PERFBENCH_SELFTEST_SLOWDOWN=0.3"));
  ASSERT_TRUE(base.count("throughput_per_control")) << "no control block was measured";
  // Two tries: where a time slice falls against a 3 ms block is luck, and
  // one try in several read a 1.9x slower step beside a 1.1x slower block
  // (a CI run beside other tests, before this test held the whole machine).
  double raw = 0, normalised = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto busy = medians(neighbours);
    raw = std::log(busy.at("throughput") / base.at("throughput"));
    normalised = std::log(busy.at("throughput_per_control") / base.at("throughput_per_control"));
    if (std::fabs(normalised) < 0.6 * std::fabs(raw)) break;
  }
  EXPECT_LT(raw, std::log(0.8)) << "the neighbours did not slow the step";
  // Measured here (6 runs): raw -0.63 to -0.80, per control +0.18 to +0.28 (log):
  // time slices hit the 3 ms block more than their share, so it overshoots.
  EXPECT_LT(std::fabs(normalised), 0.6 * std::fabs(raw)) << "raw " << raw << ", per control " << normalised;
  EXPECT_LT(slower.at("throughput_per_control") / base.at("throughput_per_control"), 0.88);
  EXPECT_LT(slower.at("throughput") / base.at("throughput"), 0.88);
}

}  // namespace
