// RunSettings: one set of defaults, validation naming the flag, and a JSON
// form that round-trips (stored with runs, read back by gate, sent to ranks).
#include <gtest/gtest.h>

#include "perfbench/settings.h"

namespace perfbench {
namespace {

TEST(Settings, DefaultsAreDeclaredOnce) {
  const RunSettings full = RunSettings::Defaults(false), quick = RunSettings::Defaults(true);
  EXPECT_EQ(full.repetitions, RunSettings::kRepetitions);
  EXPECT_EQ(full.warmup_steps, RunSettings::kWarmupSteps);
  EXPECT_EQ(quick.repetitions, RunSettings::kQuickRepetitions);
  EXPECT_EQ(quick.warmup_steps, RunSettings::kQuickWarmupSteps);
  EXPECT_EQ(RunSettings{}.repetitions, full.repetitions);  // a default-constructed one is a full run's
  EXPECT_EQ(full.timeout_s, RunSettings::kTimeoutS);
  EXPECT_EQ(full.seed, RunSettings::kSeed);
  EXPECT_EQ(full.device, "auto");
}

TEST(Settings, ValidationNamesTheFlag) {
  auto error = [](auto mutate) {
    RunSettings s;
    mutate(s);
    try {
      s.Validate();
      return std::string();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(error([](RunSettings&) {}), "");
  EXPECT_EQ(error([](RunSettings& s) { s.repetitions = 0; }), "--repetitions must be at least 1");
  EXPECT_EQ(error([](RunSettings& s) { s.warmup_steps = -1; }), "--warmup must not be negative");
  EXPECT_EQ(error([](RunSettings& s) { s.threads = -2; }), "--threads must not be negative");
  EXPECT_EQ(error([](RunSettings& s) { s.timeout_s = 0; }), "--timeout must be positive");
  EXPECT_NE(error([](RunSettings& s) { s.device = "tpu"; }).find("--device: 'tpu'"), std::string::npos);
  EXPECT_EQ(error([](RunSettings& s) { s.launch.comm_timeout_s = -1; }), "--comm-timeout must be positive");
  EXPECT_EQ(error([](RunSettings& s) { s.run_budget_s = -1; }), "--run-budget must be in [0, 1e7] seconds (0: none)");
}

TEST(Settings, JsonRoundTripsEverySetting) {
  RunSettings s = RunSettings::Defaults(true);
  s.repetitions = 9;
  s.warmup_steps = 1;
  s.timeout_s = 12.5;
  s.seed = 7;
  s.device = "cpu";
  s.threads = 3;
  s.data_dir = "/tmp/data";
  s.suites = {"amp", "ddp"};
  s.filter = "mlp";
  s.overrides = {{"world_size", {"1", "4"}}, {"bytes", {"1024"}}};
  s.launch.comm_timeout_s = 9;
  s.run_budget_s = 0;
  const RunSettings back = RunSettings::FromJson(s.ToJson());
  EXPECT_EQ(back.run_budget_s, 0);
  EXPECT_EQ(back.ToJson(), s.ToJson());
  EXPECT_EQ(back.repetitions, 9);
  EXPECT_EQ(back.data_dir, "/tmp/data");
  EXPECT_EQ(back.launch.comm_timeout_s, 9);
  ASSERT_EQ(back.overrides.size(), 2u);  // JSON objects sort keys: bytes, then world_size
  EXPECT_EQ(back.overrides[1], (ParamOverride{"world_size", {"1", "4"}}));
}

TEST(Settings, TheStoredFormKeepsItsKeys) {
  // The keys runs stored before data_dir existed; absent ones take the defaults.
  const auto j = RunSettings::Defaults(false).ToJson();
  for (const char* k : {"warmup_steps", "repetitions", "timeout_s", "seed", "quick", "device", "threads", "suites",
                        "filter"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_FALSE(j.contains("data_dir"));
  EXPECT_FALSE(j.contains("launch"));
  EXPECT_FALSE(j.contains("run_budget_s"));  // the default; runs stored before it had it
  EXPECT_EQ(RunSettings::FromJson(j).run_budget_s, RunSettings::kRunBudgetS);
  const RunSettings old = RunSettings::FromJson({{"repetitions", 7}, {"quick", true}});
  EXPECT_EQ(old.warmup_steps, RunSettings::kQuickWarmupSteps);
  EXPECT_EQ(old.repetitions, 7);
}

TEST(Settings, MalformedJsonNamesTheKey) {
  try {
    RunSettings::FromJson({{"repetitions", "many"}});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("settings.repetitions"), std::string::npos) << e.what();
  }
  EXPECT_THROW(RunSettings::FromJson({{"param_overrides", {1, 2}}}), std::invalid_argument);
  EXPECT_THROW(RunSettings::FromJson(nlohmann::json::array()), std::invalid_argument);
}

}  // namespace
}  // namespace perfbench
