// Procurement: intervals per machine (processes, or within one), relative
// throughput, per dollar and per joule, and the ranking with ties.
#include "procure.h"

#include <gtest/gtest.h>

namespace perfbench {
namespace {

ProcureEntry At(double value, double lo, double hi) {
  ProcureEntry e;
  e.present = true;
  e.value = value;
  e.ci_low = lo;
  e.ci_high = hi;
  return e;
}

TEST(Procure, OverlappingIntervalsShareARankButTiesDoNotChain) {
  std::vector<ProcureEntry> e{At(100, 95, 105), At(120, 118, 122), At(103, 101, 119), At(50, 49, 51), {}};
  RankWithTies(e);
  EXPECT_EQ(e[1].rank, 1);  // 120 [118, 122]
  EXPECT_EQ(e[2].rank, 1);  // 103 [101, 119] overlaps it: tied
  EXPECT_EQ(e[0].rank, 2);  // 100 [95, 105] overlaps 103's, but 120 is clearly faster
  EXPECT_EQ(e[3].rank, 4);  // 50: clearly behind the three
  EXPECT_EQ(e[4].rank, 0);  // absent
}

TEST(Procure, ALabelsRunsArePooledAsProcesses) {
  RunData d;
  ResultRecord r;
  r.suite = "amp";
  r.workload = "mlp";
  r.metric = "throughput";
  r.samples = {1, 2};
  d.results = {r, r};  // two runs of one label, concatenated
  d.results[1].samples = {3, 4};
  ResultRecord failed = r;
  failed.status = ResultStatus::kFailed;
  failed.samples.clear();
  d.results.push_back(failed);
  const RunData p = PoolProcesses(d);
  ASSERT_EQ(p.results.size(), 1u);
  EXPECT_EQ(p.results[0].samples, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(p.results[0].process, (std::vector<int>{0, 0, 1, 1}));
}

// A machine: `profile`, throughput samples of three processes around `level`,
// and optionally energy per sample.
Machine MachineAt(const std::string& ref, const std::string& cpu, double level, double spread,
                  double joules_per_sample = 0) {
  Machine m;
  m.ref = ref;
  m.data.run.profile_key = ref + "-key";
  m.data.run.fingerprint = {{"cpu_model", cpu}, {"cpu_cores", 8}};
  ResultRecord r;
  r.suite = "amp";
  r.workload = "mlp";
  r.params = Params{{"precision", "fp32"}};
  r.metric = "throughput";
  r.unit = "samples/s";
  r.higher_is_better = true;
  for (int p = 0; p < 3; ++p)
    for (double d : {-1.0, 0.0, 1.0}) {
      r.samples.push_back(level * (1 + spread * (p - 1)) + d);
      r.process.push_back(p);
    }
  m.data.results.push_back(r);
  if (joules_per_sample > 0) {
    ResultRecord j = r;
    j.metric = "energy_per_sample";
    j.unit = "J/sample";
    j.samples.assign(r.samples.size(), joules_per_sample);
    m.data.results.push_back(j);
  }
  return m;
}

TEST(Procure, RanksMachinesWithIntervalsPricesAndEnergy) {
  std::vector<Machine> ms{MachineAt("a", "Xeon", 1000, 0.01), MachineAt("b", "EPYC", 1010, 0.01, 0.002),
                          MachineAt("c", "Graviton", 700, 0.01)};
  ms[0].usd_per_hour = 2;
  ms[2].watts = 100;
  const auto rows = Procure(ms);
  ASSERT_EQ(rows.size(), 1u);
  const auto& e = rows[0].entries;
  EXPECT_EQ(e[0].level, "processes");
  EXPECT_EQ(e[0].processes, 3u);
  EXPECT_DOUBLE_EQ(e[0].value, 1000);  // mean of the process medians 990, 1000, 1010
  EXPECT_LT(e[0].ci_low, 990);         // t(2) interval: wide with three processes
  EXPECT_DOUBLE_EQ(e[1].relative, 1.01);
  EXPECT_EQ(e[0].rank, 1);
  EXPECT_EQ(e[1].rank, 1);  // a and b tie
  EXPECT_EQ(e[2].rank, 3);
  EXPECT_DOUBLE_EQ(e[0].per_usd, 1000 * 3600 / 2.0);
  EXPECT_DOUBLE_EQ(e[1].per_joule, 500);  // measured: 1 / 0.002 J
  EXPECT_EQ(e[1].energy_source, "measured");
  EXPECT_DOUBLE_EQ(e[2].per_joule, 7);    // given power: 700 samples/s / 100 W
  EXPECT_EQ(e[2].energy_source, "given power");
  const auto j = ProcureJson(ms, rows);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["machines"][2]["description"], "Graviton, 8 cores");
  EXPECT_EQ(j["rows"][0]["entries"][1]["rank"], 1);
  EXPECT_TRUE(j["machines"][1]["usd_per_hour"].is_null());
  const std::string md = ProcureText(ms, rows, true);
  EXPECT_NE(md.find("| --- |"), std::string::npos) << md;
  EXPECT_NE(ProcureText(ms, rows, false).find("tied"), std::string::npos);
}

TEST(Procure, OneProcessUsesTheMedianInterval) {
  Machine m = MachineAt("solo", "Xeon", 100, 0);
  m.data.results[0].process.clear();  // all from one process
  Machine other = MachineAt("other", "EPYC", 100, 0);
  const auto rows = Procure({m, other});
  EXPECT_EQ(rows[0].entries[0].level, "within one process");
  EXPECT_EQ(rows[0].entries[0].processes, 1u);
}

}  // namespace
}  // namespace perfbench
