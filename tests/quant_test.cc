// The quant suite: int8 outputs agree with fp32 within stated bounds,
// calibration sets scales as it should, and the accuracy gate fails a
// deliberately miscalibrated model and passes a calibrated one.
#include <gtest/gtest.h>

#include <cmath>

#include "quant_model.h"
#include "registry.h"

namespace perfbench::quant {
namespace {

QuantModel& Mlp() {
  static QuantModel* m = [] {
    SelectQEngine();
    return new QuantModel("mlp", "quick", 42);
  }();
  return *m;
}

TEST(Quant, ActivationQParamsOnKnownRanges) {
  auto q = ActivationQParams(-1, 3, false);
  EXPECT_DOUBLE_EQ(q.scale, 4.0 / 255);
  EXPECT_EQ(q.zero_point, 64);  // round(1 / (4/255)) = round(63.75)
  auto r = ActivationQParams(-1, 3, true);
  EXPECT_DOUBLE_EQ(r.scale, 4.0 / 127);
  EXPECT_EQ(r.zero_point, 32);  // round(31.75)
  auto positive = ActivationQParams(2, 4, false);  // widened to include 0
  EXPECT_DOUBLE_EQ(positive.scale, 4.0 / 255);
  EXPECT_EQ(positive.zero_point, 0);
}

TEST(Quant, Int8OutputsAgreeWithFp32WithinStatedBounds) {
  QuantModel dyn = Mlp(), stat = Mlp();
  dyn.PrepareDynamic();
  stat.Calibrate(Observer::kMinMax);
  torch::InferenceMode guard;
  const auto x = Mlp().data().test_x.slice(0, 0, 512);
  const auto ref = Mlp().Fp32(x);
  const double range = (ref.max() - ref.min()).item<double>();
  for (const auto* m : {&dyn, &stat}) {
    const auto y = m == &dyn ? m->Int8Dynamic(x) : m->Int8Static(x);
    const auto err = (y - ref).abs();
    // Bounds: mean error within 2% of the fp32 logit range, worst within 10%,
    // and the same top-1 answer for at least 97% of the samples.
    EXPECT_LT(err.mean().item<double>(), 0.02 * range);
    EXPECT_LT(err.max().item<double>(), 0.10 * range);
    EXPECT_GE(y.argmax(1).eq(ref.argmax(1)).to(torch::kFloat64).mean().item<double>(), 0.97);
  }
}

TEST(Quant, TheIntMmPathAgreesWithFp32AndKeepsAccuracy) {
  QuantModel m = Mlp();
  m.PrepareIntMm();
  torch::InferenceMode guard;
  const auto x = Mlp().data().test_x.slice(0, 0, 512);
  const auto ref = Mlp().Fp32(x);
  const double range = (ref.max() - ref.min()).item<double>();
  const auto y = m.Int8IntMm(x);
  EXPECT_LT((y - ref).abs().mean().item<double>(), 0.02 * range);
  EXPECT_GE(y.argmax(1).eq(ref.argmax(1)).to(torch::kFloat64).mean().item<double>(), 0.97);
  // A single row (padded to 17 inside) gives the same answer as in a batch.
  EXPECT_TRUE(torch::allclose(m.Int8IntMm(x.slice(0, 3, 4)), y.slice(0, 3, 4), 1e-5, 1e-5));
  EXPECT_GE(m.Accuracy("int8_intmm") / Mlp().Accuracy("fp32"), 0.99);
  EXPECT_LT(m.ModelBytes("int8_intmm"), Mlp().ModelBytes("fp32") / 3);
}

TEST(Quant, CalibrationSetsScalesFromTheObservedRanges) {
  QuantModel minmax = Mlp(), pct = Mlp(), broken = Mlp();
  minmax.Calibrate(Observer::kMinMax);
  pct.Calibrate(Observer::kPercentile);
  broken.Calibrate(Observer::kMinMax, 100.0);
  const auto& calib = Mlp().data().calib_x;
  const bool reduce = c10::toString(at::globalContext().qEngine()) == std::string("X86") ||
                      c10::toString(at::globalContext().qEngine()) == std::string("FBGEMM");
  const auto want = ActivationQParams(calib.min().item<double>(), calib.max().item<double>(), reduce);
  EXPECT_DOUBLE_EQ(minmax.activation_qparams().at("fc1.in").scale, want.scale);
  EXPECT_EQ(minmax.activation_qparams().at("fc1.in").zero_point, want.zero_point);
  for (const auto& [key, q] : minmax.activation_qparams()) {
    // A percentile range lies inside the min/max range: never a larger scale.
    EXPECT_LE(pct.activation_qparams().at(key).scale, q.scale * (1 + 1e-12)) << key;
    EXPECT_DOUBLE_EQ(broken.activation_qparams().at(key).scale, 100 * q.scale) << key;
  }
  // Gaussian inputs: the 0.01/99.99 percentiles cut the tails, so fc1's input scale shrinks.
  EXPECT_LT(pct.activation_qparams().at("fc1.in").scale, 0.99 * minmax.activation_qparams().at("fc1.in").scale);
}

struct NullRecorder : StepRecorder {
  void SetStepSeconds(double) override {}
  void SetItemsProcessed(double) override {}
  void Add(std::string_view, double) override {}
};

Status GateFor(const std::string& miscalibrate) {
  const RegisteredWorkload* mlp = nullptr;
  for (const auto* w : AllWorkloads())
    if (w->info.FullName() == "quant/mlp") mlp = w;
  EXPECT_NE(mlp, nullptr);
  Params p{{"scenario", "offline"}, {"precision", "int8_static"}, {"size", "quick"},
           {"min_accuracy_ratio", "0.99"}, {"miscalibrate", miscalibrate}};
  RunSettings settings = RunSettings::Defaults(/*quick=*/true);
  settings.device = "cpu";
  settings.threads = 1;
  RunContext ctx{p, settings};
  auto w = mlp->factory();
  EXPECT_TRUE(w->SetUp(ctx).ok());
  NullRecorder rec;
  EXPECT_TRUE(w->RunStep(rec).ok());
  std::map<std::string, std::vector<double>> samples;
  return w->Verify(VerifyContext{samples});
}

TEST(Quant, TheAccuracyGateFailsAMiscalibratedModelAndPassesACalibratedOne) {
  EXPECT_TRUE(GateFor("1").ok());
  const Status broken = GateFor("100");
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.message().find("below the 99.00% gate"), std::string::npos) << broken.message();
}

}  // namespace
}  // namespace perfbench::quant
