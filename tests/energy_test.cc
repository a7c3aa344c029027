// Energy counters: RAPL on a constructed powercap tree (package zones summed,
// sub-zones ignored, wrap-around), the unreadable and absent paths, and
// NVML's absent-library path; and NVML through a stand-in library
// (support/fake_nvml.cc): the energy counter, and the GPU monitor's
// utilisation samples, GPM SM activity, violation time and clock events.
#include "energy.h"
#include "energy_window.h"
#include "gpu_monitor.h"
#include "nvml.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace perfbench {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<EnergyMeter> MakeEnergyMeterFor(const std::string& bus_id) {
  return MakeNvmlMeter(0, PERFBENCH_FAKE_NVML, bus_id);
}

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
  EXPECT_DOUBLE_EQ(*m->Read(nullptr), 0);
  Write("intel-rapl:0", 3000);
  Write("intel-rapl:0:0", 9000);
  Write("intel-rapl:1", 1500);
  EXPECT_DOUBLE_EQ(*m->Read(nullptr), 3000e-6);  // 2000 + 1000 uJ; the sub-zone not counted
  Write("intel-rapl:0", 500);               // wrapped at 10000: 7000 + 500
  EXPECT_DOUBLE_EQ(*m->Read(nullptr), 3000e-6 + 7500e-6);
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
  std::string why;
  EXPECT_FALSE(m->Read(&why).has_value()) << "an unavailable counter is no number, not 0 J";
  EXPECT_NE(why.find("not found"), std::string::npos) << why;
}

TEST(Nvml, TheDriverVersionIsReadFromProcWhenNvmlIsAbsent) {
  EXPECT_EQ(ParseProcDriverVersion("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Oct 2 2025\n"
                                   "GCC version:  gcc version 12.2.0\n"),
            "580.159.03");
  EXPECT_EQ(ParseProcDriverVersion("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n"),
            "570.86.15");
  EXPECT_EQ(ParseProcDriverVersion(""), "");
  EXPECT_EQ(ParseProcDriverVersion("GCC version: 12.2.0"), "");
}

// The stand-in's test controls (tests/support/fake_nvml.cc), from the same
// loaded library the meter uses.
struct FakeNvml {
  FakeNvml() : lib(dlopen(PERFBENCH_FAKE_NVML, RTLD_NOW | RTLD_LOCAL)) {
    set_clock = reinterpret_cast<void (*)(double)>(dlsym(lib, "fake_nvml_set_clock_ms"));
    fail = reinterpret_cast<void (*)(int)>(dlsym(lib, "fake_nvml_fail_energy"));
    set_clock(0);
    fail(0);
  }
  ~FakeNvml() {
    set_clock(-1);
    fail(0);
    dlclose(lib);
  }
  void* lib;
  void (*set_clock)(double) = nullptr;
  void (*fail)(int) = nullptr;
};

TEST(Nvml, TheEnergyCounterMovesEvery100MsOfItsClockNotOnEveryRead) {
  FakeNvml fake;
  fake.set_clock(1000);
  const auto m = MakeNvmlMeter(0, PERFBENCH_FAKE_NVML);
  ASSERT_EQ(m->Unavailable(), "");
  EXPECT_DOUBLE_EQ(*m->Read(nullptr), 0);
  EXPECT_DOUBLE_EQ(*m->Read(nullptr), 0) << "reads alone do not move it";
  fake.set_clock(1099);
  EXPECT_DOUBLE_EQ(*m->Read(nullptr), 0);
  fake.set_clock(1100);
  EXPECT_DOUBLE_EQ(*m->Read(nullptr), 30.0);  // 100 ms at 300 W
  fake.set_clock(1350);
  EXPECT_DOUBLE_EQ(*m->Read(nullptr), 90.0);
  EXPECT_NE(MakeNvmlMeter(1, PERFBENCH_FAKE_NVML)->Unavailable().find("no GPU 1"), std::string::npos);
}

TEST(Nvml, AFailedReadIsNoNumberAndTheGpuIsFoundByItsBusId) {
  FakeNvml fake;
  const auto m = MakeEnergyMeterFor("00000000:01:00.0");
  ASSERT_EQ(m->Unavailable(), "");
  EXPECT_TRUE(MakeEnergyMeterFor("0000:01:00.0")->Unavailable().empty()) << "CUDA's 4-digit domain";
  EXPECT_NE(MakeEnergyMeterFor("0000:3b:00.0")->Unavailable().find("no GPU at PCI bus id 0000:3b:00.0"),
            std::string::npos);
  fake.fail(1);
  std::string why;
  EXPECT_FALSE(m->Read(&why).has_value()) << "a failed read must not repeat the last reading";
  EXPECT_NE(why.find("returned 15"), std::string::npos) << why;
}

// A counter that moves every 100 ms of a fake clock, at 300 W; steps of 5 ms.
struct Clocked {
  FakeNvml fake;
  double now_s = 10;
  int steps = 0;
  Status Step() {
    now_s += 0.005;
    fake.set_clock(now_s * 1e3);
    ++steps;
    return Status::Ok();
  }
};

TEST(EnergyWindowTest, FiveMsStepsOnA100MsCounterGiveTheEnergyPerStep) {
  Clocked c;
  const auto m = MakeEnergyMeterFor("");
  Status failed;
  const EnergyWindow w = MeasureEnergyWindow([&] { return c.Step(); }, *m, [&] { return c.now_s; }, {}, &failed);
  ASSERT_TRUE(failed.ok());
  ASSERT_EQ(w.unavailable, "");
  // 300 W x 5 ms = 1.5 J per step, within the stated error.
  EXPECT_NEAR(w.joules_per_step, 1.5, 1.5 * w.error + 1e-9) << w.Text();
  EXPECT_LE(w.error, 0.05);
  EXPECT_GE(w.updates, 10);
  EXPECT_GE(w.seconds, 0.99);
  EXPECT_NEAR(w.watts, 300, 300 * w.error);  // the edges are seen at step ends
  // Plausibility as the GPU check states it: between idle (50 W) and the
  // board limit (700 W) times the step time.
  EXPECT_GT(w.joules_per_step, 50 * 0.005);
  EXPECT_LT(w.joules_per_step, 700 * 0.005);
}

TEST(EnergyWindowTest, ACounterThatNeverMovesOrFailsIsUnavailable) {
  Clocked c;
  const auto m = MakeEnergyMeterFor("");
  Status failed;
  EnergyWindowLimits quick;
  quick.max_seconds = 0.05;  // shorter than one counter update
  EnergyWindow w = MeasureEnergyWindow([&] { return c.Step(); }, *m, [&] { return c.now_s; }, quick, &failed);
  EXPECT_NE(w.unavailable.find("a window needs 11 moves"), std::string::npos) << w.unavailable;
  c.fake.fail(1);
  w = MeasureEnergyWindow([&] { return c.Step(); }, *m, [&] { return c.now_s; }, {}, &failed);
  EXPECT_NE(w.unavailable.find("returned 15"), std::string::npos) << w.unavailable;
  c.fake.fail(0);
  w = MeasureEnergyWindow([] { return Status::Error("boom"); }, *m, [&] { return c.now_s; }, {}, &failed);
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(w.unavailable, "");
}

TEST(GpuMonitorTest, ReadsWhatTheGpuDidDuringTheInterval) {
  auto m = MakeGpuMonitor(0, PERFBENCH_FAKE_NVML);
  m->Begin();
  const GpuActivity a = m->End();
  ASSERT_EQ(a.unavailable, "");
  EXPECT_DOUBLE_EQ(a.utilization, 0.6);  // 80% and 40%; the sample before Begin ignored
  EXPECT_DOUBLE_EQ(a.sm_activity, 0.55);
  EXPECT_DOUBLE_EQ(a.throttled_s, 0.5);  // 250 ms power + 250 ms thermal
  EXPECT_EQ(a.clock_events, "sw thermal slowdown");
  EXPECT_TRUE(a.Throttled());
  const auto attrs = a.Attributes();
  EXPECT_EQ(attrs.at("gpu_utilization"), "0.600");
  EXPECT_EQ(attrs.at("sm_activity"), "0.550");
  EXPECT_EQ(attrs.at("throttled_s"), "0.5");
}

TEST(GpuMonitorTest, AnAbsentLibraryIsUnavailableNotAnError) {
  auto m = MakeGpuMonitor(0, "libperfbench-no-such-nvml.so");
  m->Begin();
  const GpuActivity a = m->End();
  EXPECT_NE(a.unavailable.find("not found"), std::string::npos);
  EXPECT_FALSE(a.Throttled());
  EXPECT_EQ(a.Attributes().size(), 1u);
  EXPECT_EQ(a.Attributes().at("gpu_utilization").rfind("unavailable: NVML unavailable", 0), 0u);
}

TEST(GpuMonitorTest, DecodesSamplesAndNamesOnlySlowdowns) {
  EXPECT_EQ(ClockEventNames(0x1 | 0x2 | 0x10 | 0x100), "");  // idle, app clocks, sync boost, display
  EXPECT_EQ(ClockEventNames(0x4 | 0x40 | 0x80), "sw power cap, hw thermal slowdown, hw power brake slowdown");
  EXPECT_DOUBLE_EQ(MeanPercentShare({{1, 50}, {2, 100}}, 1), 0.75);
  double d = 30.0;
  uint64_t raw = 0;
  std::memcpy(&raw, &d, sizeof d);
  EXPECT_DOUBLE_EQ(MeanPercentShare({{1, raw}}, 0), 0.3);
  EXPECT_DOUBLE_EQ(MeanPercentShare({}, 1), -1);
}

}  // namespace
}  // namespace perfbench
