// The micro suite, the control and `perfbench peak` through the real binary
// (LibTorch kernels on this machine's CPU; behaviour and orderings only,
// never seconds).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "support/process.h"

namespace {

namespace fs = std::filesystem;

class Micro : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("perfbench_micro_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  perfbench::testing::ProcessResult Run(const std::string& args) {
    return perfbench::testing::RunIn(dir_, std::string("env -u PERFBENCH_DB ") + PERFBENCH_BIN + " " + args);
  }
  // "suite/workload/params metric" -> result, of the newest run.
  std::map<std::string, nlohmann::json> Results() {
    auto r = Run("show latest --format json");
    EXPECT_EQ(r.code, 0) << r.err;
    std::map<std::string, nlohmann::json> out;
    const auto doc = nlohmann::json::parse(r.out);  // outlives the loop
    for (const auto& res : doc["results"]) {
      std::string params;
      for (const auto& [k, v] : res["params"].items()) params += "/" + k + ":" + v.get<std::string>();
      out[res["suite"].get<std::string>() + "/" + res["workload"].get<std::string>() + params + " " +
          res["metric"].get<std::string>()] = res;
    }
    return out;
  }
  static std::string Keys(const std::map<std::string, nlohmann::json>& m) {
    std::string out;
    for (const auto& [k, v] : m) out += k + "; ";
    return out;
  }
  fs::path dir_;
};

TEST_F(Micro, QuickStoresKernelRatesWithTheControlAroundThem) {
  auto r = Run("run --suite micro --quick --filter 'gemm.*(fp32|bf16)|bandwidth|conv2d.*fp32' --processes 1 --format none");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto res = Results();
  for (const char* key : {"micro/gemm/dtype:fp32/layout:TN/n:256 flops", "micro/gemm/dtype:bf16/layout:TN/n:256 flops",
                          "micro/bandwidth/bytes:33554432/op:copy bandwidth",
                          "micro/bandwidth/bytes:33554432/op:add bandwidth",
                          "micro/conv2d/dtype:fp32/layer:conv3 flops"}) {
    ASSERT_TRUE(res.count(key)) << key << " not in " << Keys(res);
    EXPECT_EQ(res.at(key)["status"], "ok") << key << ": " << res.at(key)["reason"];
    EXPECT_GE(res.at(key)["samples"].size(), 5u) << key;
    EXPECT_GT(res.at(key)["median"].get<double>(), 0) << key;
  }
  // The rate and the time per call describe the same repetitions.
  // (fp8 and int8 in the TN layout: MicroGemmRunsFp8AndInt8InTheTnLayout.)
  const auto& flops = res.at("micro/gemm/dtype:fp32/layout:TN/n:256 flops")["samples"];
  const auto& time = res.at("micro/gemm/dtype:fp32/layout:TN/n:256 time")["samples"];
  ASSERT_EQ(flops.size(), time.size());
  for (size_t i = 0; i < flops.size(); ++i)
    EXPECT_NEAR(flops[i].get<double>() * time[i].get<double>(), 2.0 * 256 * 256 * 256, 1.0);
  // The control at the start and at the end: 5 repetitions each.
  ASSERT_TRUE(res.count("control/gemm/n:256 flops"));
  EXPECT_EQ(res.at("control/gemm/n:256 flops")["samples"].size(), 10u);
  EXPECT_TRUE(res.count("control/bandwidth/bytes:16777216 bandwidth"));
}

// Where the time went: printed at the end, stored per process with the
// run (run_cost.h), shown by history, left out of the run's table.
TEST_F(Micro, ARunSaysAndStoresWhereItsTimeWent) {
  auto r = Run("run --suite micro --quick --filter 'bandwidth/.*op:copy' --processes 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("time: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" in 2 processes: set-up "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\n  micro "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\n  control "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("progress: "), std::string::npos) << "a short run into a log prints no progress:\n" << r.err;
  EXPECT_EQ(r.out.find("harness/"), std::string::npos) << "the run table shows the harness's rows:\n" << r.out;
  const auto res = Results();
  for (const char* key : {"harness/time/suite:micro timed_time", "harness/time/suite:all wall_time",
                          "harness/time/suite:control setup_time"}) {
    ASSERT_TRUE(res.count(key)) << key << " not in " << Keys(res);
    EXPECT_EQ(res.at(key)["samples"].size(), 2u) << key << ": one sample per process";
    EXPECT_EQ(res.at(key)["unit"], "s");
  }
  const auto& wall = res.at("harness/time/suite:all wall_time")["samples"];
  const auto& timed = res.at("harness/time/suite:micro timed_time")["samples"];
  for (size_t i = 0; i < 2; ++i) EXPECT_GT(wall[i].get<double>(), timed[i].get<double>());
  auto h = Run("history --suite harness --metric wall_time");
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.out.find("harness/time"), std::string::npos) << h.out;
  // Not selected by default, and a gate never judges it (informational).
  EXPECT_EQ(Run("history").out.find("harness/time"), std::string::npos);
  // Into a log (not a terminal) progress is a plain line, at most every $PERFBENCH_PROGRESS_EVERY s.
  auto p = perfbench::testing::RunIn(dir_, std::string("env -u PERFBENCH_DB PERFBENCH_PROGRESS_EVERY=0 ") +
                                               PERFBENCH_BIN + " run --suite micro --quick --filter "
                                               "'bandwidth/.*op:copy' --processes 1 --no-control --format none");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.err.find("progress: [1/1] micro/bandwidth"), std::string::npos) << p.err;
  EXPECT_EQ(p.err.find('\r'), std::string::npos) << "no terminal control characters in a log";
  p = perfbench::testing::RunIn(dir_, std::string("env -u PERFBENCH_DB PERFBENCH_PROGRESS_EVERY=soon ") + PERFBENCH_BIN +
                                          " run --suite micro --quick --filter 'bandwidth/.*op:copy' --processes 1 "
                                          "--no-control --format none");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.err.find("warning: PERFBENCH_PROGRESS_EVERY='soon' is not seconds >= 0; using 15"), std::string::npos)
      << p.err;
}

// The model suite in the fast tier (its end-to-end test, model_suite, exports
// real models): files that are missing or no model fail their variants in one
// line each, and the run goes on to exit 4.
TEST_F(Micro, ModelFilesThatAreMissingOrNotModelsFailTheirVariantsInOneLine) {
  std::ofstream(dir_ / "junk.pt2") << std::string(4096, 'x');
  auto r = Run("run --model-file missing.pt2 --model-file junk.pt2 --quick --processes 1 --no-control --format none");
  EXPECT_EQ(r.code, 4) << r.err;
  std::map<std::string, std::string> reasons;
  for (const auto& [key, res] : Results()) {
    if (res["suite"] != "model") continue;
    EXPECT_EQ(res["status"], "failed") << key;
    reasons[key] = res["reason"].get<std::string>();
  }
  ASSERT_FALSE(reasons.empty());
  for (const auto& [key, reason] : reasons) {
    EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
    const bool missing = reason.find("missing.pt2") != std::string::npos;
    EXPECT_TRUE(missing ? reason.find("no such file") != std::string::npos
                        : reason.find("not an exported model") != std::string::npos) << reason;
  }
}

TEST_F(Micro, TheControlCanBeLeftOutAndSelfTestsNeverRunIt) {
  ASSERT_EQ(Run("run --suite micro --quick --filter 'gemm.*fp32' --no-control --format none").code, 0);
  for (const auto& [key, res] : Results()) EXPECT_NE(res["suite"], "control") << key;
  ASSERT_EQ(Run("show latest --format json").code, 0);
  EXPECT_EQ(nlohmann::json::parse(Run("show latest --format json").out)["run"]["settings"]["control"], false);
  ASSERT_EQ(Run("run --suite selftest --filter 'fake/mode:ok' --repetitions 5 --format none").code, 0);
  for (const auto& [key, res] : Results()) EXPECT_NE(res["suite"], "control") << key;
}

TEST_F(Micro, GpuOnlyKernelsAreSkippedWithTheirReasonOnTheCpu) {
  ASSERT_EQ(Run("run --suite micro --quick --filter h2d --device cpu --no-control --format none").code, 0);
  for (const auto& [key, res] : Results()) {
    if (res["suite"] == "harness") continue;  // the run's own time (run_cost.h)
    EXPECT_EQ(res["status"], "skipped") << key;
    EXPECT_NE(res["reason"].get<std::string>().find("cuda"), std::string::npos) << key;
  }
}

// fp8 (e4m3, _scaled_mm) and int8 (_int_mm) GEMMs with B passed as the
// transposed view of an [n, k] tensor, their products checked against fp64;
// NN on request; a layout that is neither is refused.
TEST_F(Micro, MicroGemmRunsFp8AndInt8InTheTnLayout) {
  auto r = Run("run --suite micro --quick --filter 'gemm.*(int8|fp8)' --processes 1 --repetitions 3 --no-control "
               "--format none");
  ASSERT_EQ(r.code, 0) << r.err;
  auto res = Results();
  for (const char* key : {"micro/gemm/dtype:fp8/layout:TN/n:256 flops", "micro/gemm/dtype:int8/layout:TN/n:256 flops"}) {
    ASSERT_TRUE(res.count(key)) << key << " not in " << Keys(res);
    EXPECT_EQ(res.at(key)["status"], "ok") << key << ": " << res.at(key)["reason"];
    EXPECT_GT(res.at(key)["median"].get<double>(), 0) << key;
  }
  r = Run("run --suite micro --quick --filter 'gemm.*int8' --param layout=NN --processes 1 --repetitions 3 "
          "--no-control --format none");
  ASSERT_EQ(r.code, 0) << r.err;
  res = Results();
  ASSERT_TRUE(res.count("micro/gemm/dtype:int8/layout:NN/n:256 flops")) << Keys(res);
  EXPECT_EQ(res.at("micro/gemm/dtype:int8/layout:NN/n:256 flops")["status"], "ok");
  r = Run("run --suite micro --quick --filter 'gemm.*int8' --param layout=XY --processes 1 --no-control");
  EXPECT_EQ(r.code, 4) << "a failed variant";
  EXPECT_NE((r.out + r.err).find("layout 'XY': expected TN or NN"), std::string::npos) << r.out << r.err;
}

TEST_F(Micro, PeakStoresAchievableRatesThatShowPrints) {
  ASSERT_EQ(Run("run --suite selftest --filter 'fake/mode:ok' --repetitions 5 --format none").code, 0);
  auto none = Run("peak --show");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("run `perfbench peak`"), std::string::npos) << none.err;
  auto r = Run("peak --quick");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("gemm dtype:fp32:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm dtype:bf16:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bandwidth op:copy:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; max "), std::string::npos) << r.out;
  const auto res = Results();
  const auto& fp32 = res.at("peak/gemm/dtype:fp32 flops");
  EXPECT_EQ(fp32["status"], "ok");
  const auto& attrs = fp32["attributes"];
  EXPECT_FALSE(attrs["shape"].get<std::string>().empty());
  // MAMF's two lines: the best shape's median (the result) and the largest
  // sample of any shape, which no median exceeds.
  ASSERT_TRUE(attrs.contains("max")) << attrs;
  EXPECT_GE(std::stod(attrs["max"].get<std::string>()), fp32["median"].get<double>() * (1 - 1e-5));
  EXPECT_FALSE(attrs.value("max_shape", "").empty());
  // Each GEMM dtype's share of the default 60 s budget (five dtypes, 15% each).
  EXPECT_EQ(attrs.value("budget", "").rfind("9 s of 60 s", 0), 0u) << attrs;
  // fp8 and int8 (TN) where this device runs them, else skipped with the kernel's reason.
  for (const char* key : {"peak/gemm/dtype:fp8 flops", "peak/gemm/dtype:int8 flops"}) {
    ASSERT_TRUE(res.count(key)) << key << " not in " << Keys(res);
    const std::string status = res.at(key)["status"];
    EXPECT_TRUE(status == "ok" || (status == "skipped" && res.at(key)["reason"].get<std::string>().find(
                                                              "GEMM does not run on") != std::string::npos))
        << key << ": " << status << " " << res.at(key)["reason"];
  }
  // --quick on a CPU stops at 1024^3 (full: 2048^3).
  EXPECT_EQ(attrs.value("sweep", "").find("2048x2048x2048"), std::string::npos) << attrs;
  // A later run of this machine shows the achievable peaks beside its results.
  ASSERT_EQ(Run("run --suite micro --quick --filter 'gemm.*fp32' --no-control --format none").code, 0);
  auto show = Run("show latest");
  EXPECT_NE(show.out.find("achievable here (peak run 2"), std::string::npos) << show.out;
  EXPECT_EQ(Run("peak --show").code, 0);
}

// --budget bounds the sweep: shapes whose projected time no longer fits a
// variant's share are left out, named with the reason, in the output and the
// stored attributes; a budget too small for any shape skips the variants.
TEST_F(Micro, PeakKeepsToItsBudgetAndNamesWhatItLeftOut) {
  EXPECT_EQ(Run("peak --budget 0").code, 2);
  EXPECT_EQ(Run("peak --budget -3").code, 2);
  // A GEMM dtype may spend 0.45 s: a quick shape is projected at 0.25 s and
  // takes at least 0.2 s (warm-up and 3 repetitions of 0.05 s), so at most
  // two of the six start.
  auto r = Run("peak --quick --budget 3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("left out: "), std::string::npos) << r.out;
  auto res = Results();
  const auto& fp32 = res.at("peak/gemm/dtype:fp32 flops");
  ASSERT_EQ(fp32["status"], "ok") << fp32["reason"];
  const auto& attrs = fp32["attributes"];
  const std::string left_out = attrs.value("left_out", "");
  EXPECT_NE(left_out.find("1024x1024x1024"), std::string::npos) << left_out;
  EXPECT_NE(left_out.find("(over budget: "), std::string::npos) << left_out;
  ASSERT_FALSE(attrs.value("shape", "").empty());
  EXPECT_EQ(left_out.find(attrs.value("shape", "")), std::string::npos) << left_out;
  EXPECT_EQ(attrs.value("budget", "").rfind("0.45 s of 3 s", 0), 0u) << attrs;
  const auto run = nlohmann::json::parse(Run("show latest --format json").out)["run"];
  EXPECT_EQ(run["settings"]["param_overrides"]["budget"], nlohmann::json::array({"3"})) << run["settings"];
  // No shape fits 1 ms: every variant is skipped, naming the budget.
  ASSERT_EQ(Run("peak --quick --budget 0.001").code, 0);
  res = Results();
  for (const char* key : {"peak/gemm/dtype:bf16 flops", "peak/bandwidth/op:copy bandwidth"}) {
    ASSERT_TRUE(res.count(key)) << key << " not in " << Keys(res);
    EXPECT_EQ(res.at(key)["status"], "skipped") << key;
    EXPECT_NE(res.at(key)["reason"].get<std::string>().find("over budget"), std::string::npos) << key;
  }
}

}  // namespace

namespace {

// perfbench diagnose through the binary: a run first, then its diagnosis.
TEST_F(Micro, DiagnoseGivesEveryVariantAVerdictAndRejectsBadInput) {
  auto r = Run("diagnose --suite amp --quick --filter 'mlp/precision:(fp32|bf16)' --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema_version"], 1);
  ASSERT_EQ(doc["variants"].size(), 2u);
  for (const auto& v : doc["variants"]) {
    EXPECT_NE(v["suite"], "control");
    const std::string verdict = v["verdict"];
    EXPECT_TRUE(verdict == "compute" || verdict == "balanced" || verdict == "memory") << verdict;
    EXPECT_TRUE(v["breakdown"].contains("step_time"));
  }
  EXPECT_EQ(Run("diagnose latest --format table").code, 0);
  EXPECT_EQ(Run("diagnose 999").code, 2);
  EXPECT_EQ(Run("diagnose --format xml").code, 2);
}

}  // namespace

namespace {

// perfbench profile: one Chrome trace per variant, with the steps scoped as
// Holistic Trace Analysis expects and the ops inside them; paths stored.
TEST_F(Micro, ProfileWritesKinetoTracesWithStepsAndOps) {
  auto r = Run("profile --suite amp --quick --filter 'mlp/precision:fp32' --steps 3 --output traces");
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path trace = dir_ / "traces" / "amp_mlp_precision-fp32_size-quick.json";
  ASSERT_TRUE(fs::exists(trace)) << r.out;
  std::ifstream in(trace);
  const auto doc = nlohmann::json::parse(in);
  ASSERT_TRUE(doc.contains("traceEvents"));
  int steps = 0, addmm = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string name = e.value("name", "");
    steps += name.rfind("ProfilerStep#", 0) == 0;
    addmm += name == "aten::addmm";
  }
  EXPECT_EQ(steps, 3);
  EXPECT_GT(addmm, 0);
  const auto res = Results();
  const auto& stored = res.at("amp/mlp/precision:fp32/size:quick profiled_steps");
  EXPECT_EQ(fs::path(stored["attributes"]["trace"].get<std::string>()), fs::canonical(trace));
  // A measured run of the same variant, diagnosed with the trace's breakdown;
  // its energy is measured or says why not.
  ASSERT_EQ(Run("run --suite amp --quick --filter 'mlp/precision:fp32' --no-control --format none").code, 0);
  const auto measured = Results();
  const auto& step = measured.at("amp/mlp/precision:fp32/size:quick step_time");
  EXPECT_TRUE(measured.count("amp/mlp/precision:fp32/size:quick energy") ||
              step["attributes"]["energy"].get<std::string>().rfind("unavailable: ", 0) == 0);
  auto d = Run("diagnose --format json");
  ASSERT_EQ(d.code, 0) << d.err;
  const auto diag = nlohmann::json::parse(d.out);
  ASSERT_EQ(diag["variants"].size(), 1u);
  const auto& breakdown = diag["variants"][0]["breakdown"];
  EXPECT_GT(breakdown.value("matmul_share", 0.0), 0) << breakdown;
  EXPECT_GT(breakdown.value("ops_per_step", 0.0), 0) << breakdown;
  EXPECT_GT(breakdown.value("achieved_flops", 0.0), 0) << breakdown;
  EXPECT_EQ(Run("profile --suite amp --quick").code, 2);  // no --out
  EXPECT_EQ(Run("profile --out t --steps 0").code, 2);
}

// perfbench advise on amp: gradient accumulation through amp's optional
// param, in paired rounds; every run stored with its knob in the name.
TEST_F(Micro, AdviseMeasuresGradientAccumulationOnAmp) {
  auto r = Run("advise --suite amp --quick --filter mlp --knob accumulation --rounds 6 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["rows"].size(), 2u);
  for (const auto& row : doc["rows"]) {
    EXPECT_EQ(row["variant"], "amp/mlp/precision:fp32/size:quick");
    EXPECT_EQ(row["knob"], "accumulation");
    EXPECT_EQ(row["metric"], "throughput");
    EXPECT_EQ(row["pairs"], 6);
    ASSERT_TRUE(row["ratio"].is_number()) << row.dump();
    EXPECT_LE(row["ci_low"].get<double>(), row["ratio"].get<double>());
    EXPECT_GE(row["ci_high"].get<double>(), row["ratio"].get<double>());
    EXPECT_EQ(row["memory"]["metric"], "peak_memory");
  }
  const auto shown = nlohmann::json::parse(Run("show advise/accumulation:4 --format json").out);
  bool found = false;
  for (const auto& res : shown["results"]) found |= res["params"].value("accumulation", "") == "4";
  EXPECT_TRUE(found) << "the setting's run holds the accumulation:4 variant";
}

}  // namespace

namespace {

// The quant suite's server scenario through the binary: the highest Poisson
// rate whose p99 stays within the bound, per precision, with its figures.
TEST_F(Micro, QuantServerScenarioFindsARateWithinTheP99Bound) {
  // A bound of 200 ms and one thread: the mechanism is under test, not the
  // scheduler of a machine that runs other tests beside this one.
  auto r = Run("run --suite quant --quick --filter 'mlp/.*precision:(fp32|int8_dynamic)/' --param scenario=server "
               "--param latency_bound_ms=200 --threads 1 --repetitions 2 --warmup 1 --processes 1 --no-control "
               "--format none");
  ASSERT_EQ(r.code, 0) << r.err << Run("show latest").out;
  const auto res = Results();
  for (const char* precision : {"fp32", "int8_dynamic"}) {
    const std::string v = std::string("quant/mlp/latency_bound_ms:200/min_accuracy_ratio:0.99/precision:") + precision +
                          "/scenario:server/size:quick";
    ASSERT_TRUE(res.count(v + " server_rate")) << Keys(res);
    const auto& rate = res.at(v + " server_rate");
    EXPECT_EQ(rate["status"], "ok") << rate["reason"];
    EXPECT_GT(rate["median"].get<double>(), 0);
    EXPECT_LE(res.at(v + " latency_p99")["median"].get<double>(), 0.200) << "the bound given";
    EXPECT_NE(rate["attributes"].value("server", "").find("1000 queries each"), std::string::npos) << rate["attributes"];
    EXPECT_EQ(rate["attributes"].value("server", "").rfind("p99 <= 200 ms", 0), 0u) << rate["attributes"];
  }
  EXPECT_TRUE(res.count(
      "quant/mlp/latency_bound_ms:200/min_accuracy_ratio:0.99/precision:int8_dynamic/scenario:server/size:quick speedup"));
  auto bad = Run("run --suite quant --quick --filter 'mlp/.*precision:fp32/' --param scenario=sever --processes 1 "
                 "--no-control --format none");
  EXPECT_EQ(bad.code, 4);
  EXPECT_NE(Run("show latest").out.find("expected single_stream, offline or server"), std::string::npos);
}

// What the quant suite chose and why, through the binary: a precision the
// CPU cannot run is skipped with the kernel's words; the offline batch
// search names every batch it measured; int8 through _int_mm in the old NN
// layout on request, named.
TEST_F(Micro, QuantSkipsWhatTheDeviceCannotRunAndNamesItsChoices) {
  auto r = Run("run --suite quant --quick --filter 'mlp/scenario:offline/precision:(fp8|int8_dynamic)/' "
               "--param fp8_scaling=rowwise --param batch=search --repetitions 2 --warmup 1 --processes 1 --no-control "
               "--format none");
  ASSERT_EQ(r.code, 0) << r.err << Run("show latest").out;
  auto res = Results();
  const std::string v = "quant/mlp/batch:search/fp8_scaling:rowwise/min_accuracy_ratio:0.99/precision:";
  ASSERT_TRUE(res.count(v + "fp8/scenario:offline/size:quick step_time")) << Keys(res);
  const auto& fp8 = res.at(v + "fp8/scenario:offline/size:quick step_time");
  EXPECT_EQ(fp8["status"], "skipped");
  EXPECT_NE(fp8["reason"].get<std::string>().find("fp8 row-wise does not run on cpu: at::_scaled_mm says"),
            std::string::npos) << fp8["reason"];
  const auto& int8 = res.at(v + "int8_dynamic/scenario:offline/size:quick step_time");
  ASSERT_EQ(int8["status"], "ok") << int8["reason"];
  const std::string batch = int8["attributes"].value("offline_batch", "");
  EXPECT_NE(batch.find("(searched: "), std::string::npos) << batch;
  EXPECT_NE(batch.find("8: "), std::string::npos) << batch;
  EXPECT_NE(int8["attributes"].value("accuracy_tiers", "").find("2048 held-out samples"), std::string::npos)
      << int8["attributes"];

  r = Run("run --suite quant --quick --filter 'mlp/scenario:single_stream/precision:int8_dynamic/' "
          "--param kernel=int_mm --param layout=NN --repetitions 2 --warmup 1 --processes 1 --no-control --format none");
  ASSERT_EQ(r.code, 0) << r.err << Run("show latest").out;
  res = Results();
  const auto& nn = res.at(
      "quant/mlp/kernel:int_mm/layout:NN/min_accuracy_ratio:0.99/precision:int8_dynamic/scenario:single_stream/"
      "size:quick step_time");
  ASSERT_EQ(nn["status"], "ok") << nn["reason"];
  EXPECT_EQ(nn["attributes"].value("kernel", ""), "at::_int_mm");
  EXPECT_EQ(nn["attributes"].value("layout", "").rfind("NN", 0), 0u) << nn["attributes"];
  EXPECT_EQ(nn["attributes"].value("graphs", ""), "off");

  // --quick bounds a slow precision by time: fp8 through the CPU's reference
  // _scaled_mm (milliseconds a query; 700 take seconds) runs fewer queries,
  // so its p99 is unavailable, over the first held-out samples, all said.
  r = Run("run --suite quant --quick --filter 'mlp/scenario:single_stream/precision:fp8/' --repetitions 2 --warmup 1 "
          "--processes 1 --no-control --format none");
  ASSERT_EQ(r.code, 0) << r.err << Run("show latest").out;
  res = Results();
  const std::string slow = "quant/mlp/min_accuracy_ratio:0.99/precision:fp8/scenario:single_stream/size:quick ";
  const auto& p50 = res.at(slow + "latency_p50");
  ASSERT_EQ(p50["status"], "ok") << p50["reason"];
  const std::string bound = p50["attributes"].value("quick_bound", "");
  EXPECT_NE(bound.find("of 700 queries a repetition"), std::string::npos) << bound;
  EXPECT_NE(bound.find("of the 2048 held-out samples"), std::string::npos) << bound;
  EXPECT_NE(p50["reason"].get<std::string>().find(bound), std::string::npos) << "the reason column says so";
  EXPECT_NE(p50["attributes"].value("latency_p99", "").find("unavailable"), std::string::npos) << p50["attributes"];
  EXPECT_FALSE(res.count(slow + "latency_p99")) << "fewer than 662 queries give no p99";
  EXPECT_NE(p50["attributes"].value("accuracy_tiers", "").find("512 held-out samples"), std::string::npos)
      << p50["attributes"];
}

}  // namespace
