#include "registry.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace perfbench {
namespace {

class Nothing final : public Workload {
 public:
  Status SetUp(const RunContext&) override { return Status::Ok(); }
  Status RunStep(StepRecorder&) override { return Status::Ok(); }
};

WorkloadInfo Info(const std::string& suite, const std::string& name, bool hidden) {
  WorkloadInfo i;
  i.suite = suite;
  i.name = name;
  i.metrics = {{"step_time", "s", Better::kLower}};
  i.variants = Params::Product({{"precision", {"fp32", "bf16"}}, {"size", {"full"}}});
  i.quick_variants = Params::Product({{"precision", {"fp32", "bf16"}}, {"size", {"quick"}}});
  i.compare_param = "precision";
  i.reference_value = "fp32";
  i.hidden = hidden;
  return i;
}

PERFBENCH_REGISTER_WORKLOAD(Nothing, Info("regtest", "alpha", false));
WorkloadInfo WithRunParam(WorkloadInfo i, const std::string& param) {
  i.run_params = {param};
  return i;
}

[[maybe_unused]] const bool second = RegisterWorkload(WithRunParam(Info("regtest_hidden", "beta", true), "budget"),
                                                      [] { return std::make_unique<Nothing>(); });

TEST(Params, ProductVariesLastAxisFastest) {
  auto ps = Params::Product({{"a", {"1", "2"}}, {"b", {"x", "y"}}});
  ASSERT_EQ(ps.size(), 4u);
  EXPECT_EQ(ps[0].Encode(), "a:1/b:x");
  EXPECT_EQ(ps[1].Encode(), "a:1/b:y");
  EXPECT_EQ(ps[3].Encode(), "a:2/b:y");
}

TEST(Params, MatchIgnoresOrderButEncodeKeepsIt) {
  Params a{{"x", "1"}, {"y", "2"}};
  Params b{{"y", "2"}, {"x", "1"}};
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Encode(), "x:1/y:2");
  EXPECT_EQ(b.Encode(), "y:2/x:1");
  EXPECT_EQ(a.Without("x").Encode(), "y:2");
  EXPECT_EQ(a.GetInt("x", 7), 1);
  EXPECT_EQ(a.GetInt("z", 7), 7);
  EXPECT_THROW(Params({{"n", "abc"}}).GetInt("n", 0), std::invalid_argument);
}

// A selection: suites, filter, quick, overrides.
RunSettings Sel(std::vector<std::string> suites, std::string filter, bool quick,
                std::vector<ParamOverride> overrides = {}) {
  RunSettings s = RunSettings::Defaults(quick);
  s.suites = std::move(suites);
  s.filter = std::move(filter);
  s.overrides = std::move(overrides);
  return s;
}

TEST(Registry, SelectsQuickVariantsAndHidesHiddenSuites) {
  auto all = SelectVariants(RunSettings{});
  bool saw_hidden = false;
  for (const auto& v : all) saw_hidden |= v.workload->info.suite == "regtest_hidden";
  EXPECT_FALSE(saw_hidden);
  auto quick = SelectVariants(Sel({"regtest"}, "", true));
  ASSERT_EQ(quick.size(), 2u);
  EXPECT_EQ(quick[0].FullName(), "regtest/alpha/precision:fp32/size:quick");
  auto hidden = SelectVariants(Sel({"regtest_hidden"}, "", false));
  EXPECT_EQ(hidden.size(), 2u);
}

TEST(Registry, FilterIsARegexOnTheFullName) {
  auto v = SelectVariants(Sel({"regtest"}, "precision:bf16", false));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].params.Get("precision"), "bf16");
  EXPECT_THROW(SelectVariants(Sel({"regtest"}, "(", false)), std::invalid_argument);
}

TEST(Registry, UnknownSuiteIsAnErrorNamingIt) {
  try {
    SelectVariants(Sel({"nope"}, "", false));
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
}

TEST(Registry, ParamOverridesReplaceValuesAndDropDuplicates) {
  RunSettings sel = Sel({"regtest"}, "", false, {{"precision", {"fp32", "fp64", "fp32"}}});
  auto v = SelectVariants(sel);
  ASSERT_EQ(v.size(), 2u);  // fp32 and fp64, each once
  EXPECT_EQ(v[0].params.Get("precision"), "fp32");
  EXPECT_EQ(v[1].params.Get("precision"), "fp64");
  EXPECT_EQ(v[1].params.Encode(), "precision:fp64/size:full");  // order kept
}

TEST(Registry, AParamNoSelectedWorkloadHasIsAnErrorNamingIt) {
  const RunSettings typo = Sel({"regtest"}, "", false, {{"precison", {"bf16"}}});
  EXPECT_EQ(SelectVariants(typo).size(), 2u);  // selecting stays lenient: a stored run's settings (gate)
  try {
    CheckOverridesKnown(typo);  // the user's flags are checked
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--param 'precison': no workload of the selected suites has this param "
                                         "(theirs: precision, size;"),
              std::string::npos)
        << e.what();
  }
  // Another suite's run param is not this one's; in its own suite it is taken.
  EXPECT_THROW(CheckOverridesKnown(Sel({"regtest"}, "", false, {{"budget", {"5"}}})), std::invalid_argument);
  const RunSettings budget = Sel({"regtest_hidden"}, "", false, {{"budget", {"5"}}});
  EXPECT_NO_THROW(CheckOverridesKnown(budget));
  auto v = SelectVariants(budget);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_FALSE(v[0].params.Has("budget"));  // not part of the variant's identity
  // A param of a workload the filter leaves out still counts: its suite has it.
  EXPECT_NO_THROW(CheckOverridesKnown(Sel({"regtest"}, "precision:bf16", false, {{"size", {"quick"}}})));
}

TEST(Registry, GroupsVariantsThatDifferOnlyInTheCompareParam) {
  auto groups = GroupVariants(SelectVariants(Sel({"regtest"}, "", false)));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].variants.size(), 2u);
}

}  // namespace
}  // namespace perfbench
