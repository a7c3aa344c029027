// The diagnosis classifier on constructed evidence: one case per kind, the
// order of severity, and the JSON contract.
#include "diagnose.h"

#include <gtest/gtest.h>

namespace perfbench {
namespace {

Evidence Variant(const std::string& suite, std::map<std::string, double> medians, Params params = {}) {
  Evidence e;
  e.suite = suite;
  e.workload = "w";
  e.params = std::move(params);
  e.medians = std::move(medians);
  for (const auto& [k, v] : e.medians) e.counts[k] = 7;
  return e;
}

MachineFacts Cpu(std::set<std::string> isa = {"avx2", "fma"}) {
  MachineFacts m;
  m.device = "cpu";
  m.memory_bytes = 16e9;
  m.cpu_isa = std::move(isa);
  return m;
}

Params Precision(const std::string& p) {
  Params params;
  params.Set("precision", p);
  return params;
}

TEST(Diagnose, CommunicationAboveThirtyPercentOfTheStep) {
  const auto d = Classify(Variant("ddp", {{"step_time", 0.1}, {"comm_share", 0.42}}), Cpu());
  EXPECT_EQ(d.verdict, "communication");
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_NE(d.findings[0].evidence.find("42%"), std::string::npos) << d.findings[0].evidence;
  EXPECT_NE(d.findings[0].threshold.find("30%"), std::string::npos);
  EXPECT_FALSE(d.findings[0].remedies.empty());
  EXPECT_EQ(Classify(Variant("ddp", {{"comm_share", 0.29}}), Cpu()).verdict, "balanced");
}

TEST(Diagnose, InputWhenTheStepWaitsForData) {
  const auto d = Classify(Variant("dataloader", {{"data_wait_share", 0.6}}), Cpu());
  EXPECT_EQ(d.verdict, "input");
  EXPECT_NE(d.findings[0].remedies[0].find("workers"), std::string::npos);
  EXPECT_EQ(Classify(Variant("dataloader", {{"data_wait_share", 0.05}}), Cpu()).verdict, "balanced");
}

TEST(Diagnose, MemoryNearCapacityOrOutOfMemory) {
  EXPECT_EQ(Classify(Variant("amp", {{"peak_rss", 15e9}}), Cpu()).verdict, "memory");  // 94% of 16 GB
  EXPECT_EQ(Classify(Variant("amp", {{"peak_rss", 8e9}}), Cpu()).verdict, "balanced");
  auto oom = Variant("amp", {});
  oom.status = ResultStatus::kFailed;
  oom.reason = "step 3: out of memory";
  EXPECT_EQ(Classify(oom, Cpu()).verdict, "memory");
  auto other = oom;
  other.reason = "step 3: boom";
  EXPECT_EQ(Classify(other, Cpu()).verdict, "not measured");
  // On a GPU the device's memory counts, not the host's.
  MachineFacts gpu;
  gpu.device = "cuda";
  gpu.memory_bytes = 80e9;
  EXPECT_EQ(Classify(Variant("amp", {{"peak_memory", 78e9}, {"peak_rss", 1e9}}), gpu).verdict, "memory");
}

TEST(Diagnose, EmulatedReducedPrecisionIsNamedOnACpuWithoutIt) {
  const auto slow = Variant("amp", {{"step_time", 0.195}, {"speedup", 0.05}}, Precision("bf16"));
  const auto d = Classify(slow, Cpu());
  EXPECT_EQ(d.verdict, "compute");
  EXPECT_NE(d.findings[0].evidence.find("no AVX512-BF16/AMX-BF16"), std::string::npos) << d.findings[0].evidence;
  EXPECT_EQ(d.findings[0].remedies[0], "stay in fp32 on this CPU");
  // With AMX the same slowness is not blamed on emulation.
  const auto amx = Classify(slow, Cpu({"avx512f", "amx_bf16"}));
  EXPECT_EQ(amx.verdict, "compute");
  EXPECT_EQ(amx.findings[0].evidence.find("emulated"), std::string::npos);
  // fp32 itself and a reduced precision that pays off are not findings.
  EXPECT_EQ(Classify(Variant("amp", {{"speedup", 1.0}}, Precision("fp32")), Cpu()).verdict, "balanced");
  EXPECT_EQ(Classify(Variant("amp", {{"speedup", 1.7}}, Precision("bf16")), Cpu()).verdict, "balanced");
}

TEST(Diagnose, TheMostSevereFindingIsTheVerdictAndAllAreKept) {
  const auto d = Classify(Variant("ddp", {{"comm_share", 0.5}, {"data_wait_share", 0.5}, {"peak_rss", 15.5e9}}), Cpu());
  EXPECT_EQ(d.verdict, "memory");
  ASSERT_EQ(d.findings.size(), 3u);
  EXPECT_EQ(d.findings[1].kind, "communication");
  EXPECT_EQ(d.findings[2].kind, "input");
}

TEST(Diagnose, EvidenceIsGroupedByVariantAndTheJsonIsVersioned) {
  ResultRecord a, b;
  a.suite = b.suite = "ddp";
  a.workload = b.workload = "train";
  a.params.Set("world_size", "2");
  b.params = a.params;
  a.metric = "comm_share";
  a.samples = {0.4, 0.5, 0.45};
  b.metric = "step_time";
  b.samples = {0.1, 0.2, 0.3};
  const auto ev = CollectEvidence({a, b});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_DOUBLE_EQ(ev[0].medians.at("comm_share"), 0.45);
  const auto doc = DiagnosisJson({Classify(ev[0], Cpu())});
  EXPECT_EQ(doc["schema_version"], 1);
  const auto& v = doc["variants"][0];
  EXPECT_EQ(v["verdict"], "communication");
  EXPECT_EQ(v["params"]["world_size"], "2");
  EXPECT_DOUBLE_EQ(v["breakdown"]["step_time"].get<double>(), 0.2);
  for (const char* key : {"kind", "evidence", "threshold", "remedies"}) EXPECT_TRUE(v["findings"][0].contains(key));
}

TEST(Diagnose, MachineFactsComeFromTheRun) {
  RunRecord run;
  run.settings = {{"device", "cpu"}};
  run.fingerprint = {{"memory_bytes", 25e9}, {"cpu_isa", {"avx2", "fma"}}, {"gpu_memory_bytes", {80e9}}};
  const auto m = MachineFacts::FromRun(run);
  EXPECT_DOUBLE_EQ(m.memory_bytes, 25e9);
  EXPECT_TRUE(m.cpu_isa.count("avx2"));
  run.settings["device"] = "cuda";
  EXPECT_DOUBLE_EQ(MachineFacts::FromRun(run).memory_bytes, 80e9);
}

}  // namespace
}  // namespace perfbench

namespace perfbench {
namespace {

nlohmann::json Event(const std::string& cat, const std::string& name, double ts, double dur,
                     nlohmann::json dims = nullptr) {
  nlohmann::json e = {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", dur}};
  if (!dims.is_null()) e["args"] = {{"Input Dims", dims}};
  return e;
}

// Two steps of 1000 us: aten::linear encloses an addmm of 128x256 @ 256x512
// (600 us), then 9 short ops; an op of another thread is not counted.
nlohmann::json TwoSteps() {
  nlohmann::json ev = nlohmann::json::array();
  for (double t0 : {0.0, 2000.0}) {
    ev.push_back(Event("user_annotation", "ProfilerStep#" + std::to_string(int(t0)), t0, 1000));
    ev.push_back(Event("cpu_op", "aten::linear", t0 + 10, 620));
    ev.push_back(Event("cpu_op", "aten::addmm", t0 + 15, 600, {{512}, {128, 256}, {256, 512}, {}, {}}));
    ev.push_back(Event("cpu_op", "aten::mm", t0 + 20, 100, {{128, 256}, {256, 512}}));  // inside addmm: not again
    for (int i = 0; i < 9; ++i) ev.push_back(Event("cpu_op", "aten::add_", t0 + 700 + 20 * i, 10));
    auto other = Event("cpu_op", "aten::mm", t0 + 900, 50, {{1, 1}, {1, 1}});
    other["tid"] = 2;
    ev.push_back(other);
  }
  return {{"traceEvents", ev}};
}

TEST(TraceBreakdown, SharesOpsAndFlopFromTheSteps) {
  const auto b = BreakdownOfTrace(TwoSteps());
  EXPECT_EQ(b.steps, 2u);
  EXPECT_DOUBLE_EQ(b.step_s, 1e-3);
  EXPECT_DOUBLE_EQ(b.matmul_share, 0.6);                  // the outer addmm only
  EXPECT_DOUBLE_EQ(b.ops_per_step, 10);                    // linear + 9 add_
  EXPECT_DOUBLE_EQ(b.median_op_s, 10e-6);
  EXPECT_DOUBLE_EQ(b.flop_per_step, 2.0 * 128 * 256 * 512);
  EXPECT_THROW(BreakdownOfTrace(nlohmann::json::object()), std::invalid_argument);
  EXPECT_THROW(BreakdownOfTrace({{"traceEvents", nlohmann::json::array()}}), std::invalid_argument);
}

TEST(TraceBreakdown, ConvolutionFlopFromShapesStridePaddingAndMask) {
  // ResNet-style 3x3 conv, stride 1 padding 1 on 16x3x32x32: output 16x16x32x32.
  auto conv = Event("cpu_op", "aten::convolution", 10, 300, {{16, 3, 32, 32}, {16, 3, 3, 3}, {}, {}, {}, {}, {}, {}, {}});
  conv["args"]["Concrete Inputs"] = {"", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"};
  // Its backward, grad_input and grad_weight; and a stride-2 one without padding (15x15 -> 7x7).
  auto back = Event("cpu_op", "aten::convolution_backward", 400, 300,
                    {{16, 16, 32, 32}, {16, 3, 32, 32}, {16, 3, 3, 3}, {}, {}, {}, {}, {}, {}, {}, {}});
  back["args"]["Concrete Inputs"] = {"", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1",
                                     "[True, True, False]"};
  auto strided = Event("cpu_op", "aten::convolution", 750, 100, {{2, 4, 15, 15}, {8, 4, 3, 3}, {}, {}, {}, {}, {}, {}, {}});
  strided["args"]["Concrete Inputs"] = {"", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"};
  const nlohmann::json doc = {{"traceEvents", {Event("user_annotation", "ProfilerStep#0", 0, 1000), conv, back, strided}}};
  const double forward = 2.0 * 3 * 3 * 3 * (16.0 * 16 * 32 * 32);
  EXPECT_DOUBLE_EQ(BreakdownOfTrace(doc).flop_per_step, forward * 3 + 2.0 * 4 * 9 * (2.0 * 8 * 7 * 7));
}

TEST(Diagnose, AProfileTraceAddsUtilisationAgainstTheAchievablePeak) {
  Evidence e;
  e.suite = "amp";
  e.workload = "mlp";
  e.medians = {{"step_time", 1e-3}};
  e.counts = {{"step_time", 7}};
  e.trace = BreakdownOfTrace(TwoSteps());
  e.achievable_flops = 1e12;  // the step reaches 3.4e10: 3%
  MachineFacts m;
  auto d = Classify(e, m);
  EXPECT_EQ(d.verdict, "compute");
  EXPECT_NEAR(d.breakdown.at("mfu"), 2.0 * 128 * 256 * 512 / 1e-3 / 1e12, 1e-12);
  EXPECT_NE(d.findings.at(0).evidence.find("of the achievable"), std::string::npos) << d.findings[0].evidence;
  // Without a peak there is no utilisation to judge; the shares are still listed.
  e.achievable_flops = 0;
  d = Classify(e, m);
  EXPECT_EQ(d.verdict, "balanced");
  EXPECT_DOUBLE_EQ(d.breakdown.at("matmul_share"), 0.6);
}

TEST(Diagnose, LowGpuUtilisationIsComputeAndThrottlingMakesTimingsSuspect) {
  MachineFacts gpu;
  gpu.device = "cuda";
  Evidence e = Variant("amp", {{"step_time", 0.01}});
  e.attributes = {{"gpu_utilization", "0.550"}, {"sm_activity", "0.300"}, {"throttled_s", "0"}};
  auto d = Classify(e, gpu);
  EXPECT_EQ(d.verdict, "compute");
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_NE(d.findings[0].evidence.find("55%"), std::string::npos) << d.findings[0].evidence;
  EXPECT_NE(d.findings[0].evidence.find("SMs busy 30%"), std::string::npos) << d.findings[0].evidence;
  EXPECT_NE(d.findings[0].threshold.find("below 80%"), std::string::npos);
  EXPECT_DOUBLE_EQ(d.breakdown.at("gpu_utilization"), 0.55);
  EXPECT_TRUE(d.suspect.empty());
  // Busy, but throttled: no finding, the timings are suspect.
  e.attributes = {{"gpu_utilization", "0.97"}, {"throttled_s", "1.5"}, {"clock_events", "sw thermal slowdown"}};
  d = Classify(e, gpu);
  EXPECT_EQ(d.verdict, "balanced");
  EXPECT_NE(d.suspect.find("throttled 1.5 s"), std::string::npos) << d.suspect;
  EXPECT_NE(d.suspect.find("sw thermal slowdown"), std::string::npos) << d.suspect;
  EXPECT_EQ(DiagnosisJson({d})["variants"][0]["suspect"], d.suspect);
  // Without NVML nothing is concluded.
  e.attributes = {{"gpu_utilization", "unavailable: NVML unavailable: libnvidia-ml.so.1 not found"}};
  d = Classify(e, gpu);
  EXPECT_EQ(d.verdict, "balanced");
  EXPECT_EQ(d.breakdown.count("gpu_utilization"), 0u);
  EXPECT_TRUE(DiagnosisJson({d})["variants"][0]["suspect"].is_null());
}

}  // namespace
}  // namespace perfbench
