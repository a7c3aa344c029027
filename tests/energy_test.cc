// Energy counters: RAPL on a constructed powercap tree (package zones summed,
// sub-zones ignored, wrap-around), the unreadable and absent paths, and
// NVML's absent-library path.
#include "energy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace perfbench {
namespace {

namespace fs = std::filesystem;

class Rapl : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("perfbench_rapl_" + std::to_string(getpid()));
    fs::remove_all(root_);
    Zone("intel-rapl:0", 1000, 10000);
    Zone("intel-rapl:0:0", 77, 10000);  // a sub-zone (core): inside package 0, never added
    Zone("intel-rapl:1", 500, 10000);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Zone(const std::string& name, double uj, double range) {
    fs::create_directories(root_ / name);
    Write(name, uj);
    std::ofstream(root_ / name / "max_energy_range_uj") << static_cast<long long>(range);
  }
  void Write(const std::string& name, double uj) { std::ofstream(root_ / name / "energy_uj") << static_cast<long long>(uj); }
  fs::path root_;
};

TEST_F(Rapl, SumsPackagesAndSurvivesAWrap) {
  auto m = MakeRaplMeter(root_.string());
  ASSERT_EQ(m->Unavailable(), "");
  EXPECT_DOUBLE_EQ(m->Joules(), 0);
  Write("intel-rapl:0", 3000);
  Write("intel-rapl:0:0", 9000);
  Write("intel-rapl:1", 1500);
  EXPECT_DOUBLE_EQ(m->Joules(), 3000e-6);  // 2000 + 1000 uJ; the sub-zone not counted
  Write("intel-rapl:0", 500);               // wrapped at 10000: 7000 + 500
  EXPECT_DOUBLE_EQ(m->Joules(), 3000e-6 + 7500e-6);
}

TEST_F(Rapl, UnreadableAndAbsentCountersSayWhy) {
  fs::remove(root_ / "intel-rapl:1" / "energy_uj");
  EXPECT_NE(MakeRaplMeter(root_.string())->Unavailable().find("not readable"), std::string::npos);
  const auto none = MakeRaplMeter((root_ / "nope").string());
  EXPECT_NE(none->Unavailable().find("absent"), std::string::npos) << none->Unavailable();
}

TEST(Nvml, AnAbsentLibraryIsUnavailableNotAnError) {
  const auto m = MakeNvmlMeter(0, "libperfbench-no-such-nvml.so");
  EXPECT_NE(m->Unavailable().find("not found"), std::string::npos) << m->Unavailable();
  EXPECT_DOUBLE_EQ(m->Joules(), 0);
}

}  // namespace
}  // namespace perfbench
