// Policy::Load: every way a policy file can be wrong is an error naming it,
// and a good file refines the built-in defaults.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "compare/policy.h"

namespace perfbench {
namespace {

class PolicyFile : public ::testing::Test {
 protected:
  void TearDown() override { std::remove(path_.c_str()); }
  // Writes `text` to a file and loads it; returns the error message ("" if it loaded).
  std::string LoadError(const std::string& text) {
    std::ofstream(path_) << text;
    try {
      loaded_ = Policy::Load(path_);
      return "";
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  }
  std::string path_ = "policy_test_" + std::to_string(getpid()) + ".json";
  Policy loaded_;
};

TEST_F(PolicyFile, EveryErrorNamesItsProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "is not valid JSON"},
      {"[]", "expected an object with \"schema_version\": 1"},
      {R"({"schema_version": 2})", "expected an object with \"schema_version\": 1"},
      {R"({"schema_version": 1, "alpha": 1.5})", "alpha and confidence must be in (0, 1)"},
      {R"({"schema_version": 1, "confidence": 0})", "alpha and confidence must be in (0, 1)"},
      {R"({"schema_version": 1, "min_samples": 1})", "min_samples >= 2"},
      {R"({"schema_version": 1, "defaults": {"x": 3}})", "defaults.x: expected {\"relative\": x}"},
      {R"({"schema_version": 1, "defaults": {"x": {"relative": 0.1, "absolute": 1}}})",
       "defaults.x: give exactly one of \"relative\" or \"absolute\""},
      {R"({"schema_version": 1, "defaults": {"x": {}}})", "give exactly one of"},
      {R"({"schema_version": 1, "defaults": {"x": {"relative": -1}}})", "defaults.x: threshold must be a number >= 0"},
      {R"({"schema_version": 1, "defaults": {"x": {"relative": "5%"}}})", "threshold must be a number >= 0"},
      {R"({"schema_version": 1, "defaults": {"x": {"relative": 0.1, "informational": 1}}})",
       "defaults.x.informational: expected true or false"},
      {R"({"schema_version": 1, "overrides": {}})", "\"overrides\" must be an array"},
      {R"({"schema_version": 1, "overrides": [{"relative": 0.1}]})", "overrides[0]: needs \"match\""},
      {R"({"schema_version": 1, "overrides": [{"match": "a/*", "relative": 0.1}, {"match": 3}]})",
       "overrides[1]: needs \"match\""},
      {R"({"schema_version": 1, "overrides": [{"match": "a/*"}]})", "overrides[0]: give exactly one of"},
      {R"({"schema_version": "1"})", "policy_test_"},
      {R"({"schema_version": 1, "alpha": "0.05"})", "policy_test_"},
      {R"({"schema_version": 1, "defaults": [1]})", "policy_test_"},
  };
  for (const auto& [text, want] : cases) {
    const std::string err = LoadError(text);
    EXPECT_NE(err.find(want), std::string::npos) << text << " -> " << err;
  }
}

TEST_F(PolicyFile, AMissingFileIsAnError) {
  try {
    Policy::Load("/nonexistent/policy.json");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read policy file '/nonexistent/policy.json'"), std::string::npos);
  }
}

TEST_F(PolicyFile, AGoodFileRefinesTheDefaults) {
  ASSERT_EQ(LoadError(R"({"schema_version": 1, "alpha": 0.01,
                          "defaults": {"throughput": {"relative": 0.1}},
                          "overrides": [{"match": "amp/*/throughput", "absolute": 3}]})"),
            "");
  EXPECT_DOUBLE_EQ(loaded_.alpha, 0.01);
  ResultRecord r;
  r.suite = "ddp";
  r.workload = "train";
  r.metric = "throughput";
  EXPECT_DOUBLE_EQ(loaded_.For(r).value, 0.1);
  r.metric = "step_time";  // the built-in default still answers
  EXPECT_DOUBLE_EQ(loaded_.For(r).value, 0.05);
  r.suite = "amp";
  r.workload = "mlp";
  r.params = Params{{"precision", "bf16"}};
  r.metric = "throughput";
  EXPECT_TRUE(loaded_.For(r).absolute);
  EXPECT_DOUBLE_EQ(loaded_.For(r).value, 3);
}

TEST(Policy, TheControlNormalisedThroughputIsInformationalUntilAskedFor) {
  ResultRecord r;
  r.suite = "amp";
  r.workload = "mlp";
  r.metric = "throughput_per_control";
  Policy p = Policy::Default();
  EXPECT_TRUE(p.For(r).informational);
  r.metric = "throughput";
  EXPECT_FALSE(p.For(r).informational);
  p.JudgePerControl();  // --per-control
  EXPECT_TRUE(p.For(r).informational);
  r.metric = "throughput_per_control";
  EXPECT_FALSE(p.For(r).informational);
  EXPECT_DOUBLE_EQ(p.For(r).value, 0.05);
}

}  // namespace
}  // namespace perfbench
