// The quant suite: int8 outputs agree with fp32 within stated bounds,
// calibration sets scales as it should, the accuracy gate fails a
// deliberately miscalibrated model and passes a calibrated one, and the
// MLPerf models (BERT int8 dynamic, ResNet-50 int8 static) run their
// functional forms faithfully and keep their accuracy.
#include <gtest/gtest.h>

#include <cmath>

#include "bert_net.h"
#include "layer_net.h"
#include "resnet_net.h"
#include "registry.h"

namespace perfbench::quant {
namespace {

LayerNet& Mlp() {
  static LayerNet* m = [] {
    SelectQEngine();
    return new LayerNet("mlp", "quick", 42);
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
  LayerNet dyn = Mlp(), stat = Mlp();
  dyn.PrepareDynamic();
  stat.Calibrate(Observer::kMinMax);
  torch::InferenceMode guard;
  const auto x = Mlp().data().test_x.slice(0, 0, 512);
  const auto ref = Mlp().Forward(x, Mode::kFp32);
  const double range = (ref.max() - ref.min()).item<double>();
  for (const auto* m : {&dyn, &stat}) {
    const auto y = m == &dyn ? m->Forward(x, Mode::kDynamic) : m->Forward(x, Mode::kStatic);
    const auto err = (y - ref).abs();
    // Bounds: mean error within 2% of the fp32 logit range, worst within 10%,
    // and the same top-1 answer for at least 97% of the samples.
    EXPECT_LT(err.mean().item<double>(), 0.02 * range);
    EXPECT_LT(err.max().item<double>(), 0.10 * range);
    EXPECT_GE(y.argmax(1).eq(ref.argmax(1)).to(torch::kFloat64).mean().item<double>(), 0.97);
  }
}

TEST(Quant, TheIntMmPathAgreesWithFp32AndKeepsAccuracy) {
  LayerNet m = Mlp();
  m.PrepareIntMm();
  torch::InferenceMode guard;
  const auto x = Mlp().data().test_x.slice(0, 0, 512);
  const auto ref = Mlp().Forward(x, Mode::kFp32);
  const double range = (ref.max() - ref.min()).item<double>();
  const auto y = m.Forward(x, Mode::kIntMm);
  EXPECT_LT((y - ref).abs().mean().item<double>(), 0.02 * range);
  EXPECT_GE(y.argmax(1).eq(ref.argmax(1)).to(torch::kFloat64).mean().item<double>(), 0.97);
  // A single row (padded to 17 inside) gives the same answer as in a batch.
  EXPECT_TRUE(torch::allclose(m.Forward(x.slice(0, 3, 4), Mode::kIntMm), y.slice(0, 3, 4), 1e-5, 1e-5));
  EXPECT_GE(m.Accuracy(Mode::kIntMm) / Mlp().Accuracy(Mode::kFp32), 0.99);
  EXPECT_LT(m.ModelBytes(Mode::kIntMm), Mlp().ModelBytes(Mode::kFp32) / 3);
}

TEST(Quant, CalibrationSetsScalesFromTheObservedRanges) {
  LayerNet minmax = Mlp(), pct = Mlp(), broken = Mlp();
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

namespace perfbench::quant {
namespace {

TEST(Quant, TheIntMmLinearPadsAnyInnerAndOutputSize) {
  torch::manual_seed(5);
  for (int64_t in : {13, 8, 1}) {
    const auto w = torch::randn({7, in}), b = torch::randn({7}), x = torch::randn({3, 5, in});
    const IntMmLinear l = IntMmLinear::Prepare(w, b);
    EXPECT_EQ(l.wq_t.size(0) % 8, 0) << in;
    EXPECT_EQ(l.wq_t.size(1) % 8, 0) << in;
    const auto ref = torch::nn::functional::linear(x, w, b), y = l(x);
    ASSERT_EQ(y.sizes(), ref.sizes()) << in;
    // Per-row and per-channel int8: a few percent of the output range.
    EXPECT_LT((y - ref).abs().max().item<double>(), 0.05 * (ref.max() - ref.min()).item<double>()) << in;
  }
}

TEST(Quant, BertInt8DynamicKeepsItsAccuracyAndItsFunctionalFormIsTheModule) {
  SelectQEngine();
  const BertNet net("quick", 42);
  torch::InferenceMode guard;
  const auto ids = net.data().test_x.slice(0, 0, 64);
  EXPECT_TRUE(torch::allclose(net.Forward(ids, Mode::kFp32), net.ModuleForward(ids), 1e-4, 1e-4));
  const double fp32 = net.Accuracy(Mode::kFp32);
  EXPECT_GT(fp32, 0.5) << "the topic task is learnt (chance is 0.1)";
  auto dyn = net.Clone();
  dyn->PrepareDynamic();
  EXPECT_GE(dyn->Accuracy(Mode::kDynamic) / fp32, 0.99);
  EXPECT_LT(dyn->ModelBytes(Mode::kDynamic), net.ModelBytes(Mode::kFp32));
  EXPECT_FALSE(net.Unsupported(Mode::kStatic).empty());
  EXPECT_TRUE(net.Unsupported(Mode::kDynamic).empty());
}

TEST(Quant, ResNet50StaticInt8KeepsItsAccuracyAndFoldingKeepsTheOutputs) {
  SelectQEngine();
  const ResNetNet net("quick", 42);
  torch::InferenceMode guard;
  const auto x = net.data().test_x.slice(0, 0, 64);
  const auto ref = net.ModuleForward(x), folded = net.Forward(x, Mode::kFp32);
  const double range = (ref.max() - ref.min()).item<double>();
  EXPECT_LT((folded - ref).abs().max().item<double>(), 1e-3 * range) << "batch norm folded exactly";
  const double fp32 = net.Accuracy(Mode::kFp32);
  EXPECT_GT(fp32, 0.3) << "the noisy image task is learnt (chance is 0.1)";
  EXPECT_LT(fp32, 1.0) << "the task leaves room for accuracy to drop";
  auto stat = net.Clone();
  stat->Calibrate(Observer::kMinMax);
  EXPECT_GE(stat->Accuracy(Mode::kStatic) / fp32, 0.98);
  EXPECT_LT(stat->ModelBytes(Mode::kStatic), net.ModelBytes(Mode::kFp32) / 3);
  EXPECT_FALSE(net.Unsupported(Mode::kDynamic).empty());
  EXPECT_FALSE(net.Unsupported(Mode::kIntMm).empty());
}

TEST(Quant, APrecisionAModelDoesNotRunFailsTheVariantWithItsReason) {
  const RegisteredWorkload* bert = nullptr;
  for (const auto* w : AllWorkloads())
    if (w->info.FullName() == "quant/bert") bert = w;
  ASSERT_NE(bert, nullptr);
  for (const auto& v : bert->info.quick_variants) EXPECT_NE(v.Get("precision"), "int8_static");
  Params p{{"scenario", "offline"}, {"precision", "int8_static"}, {"size", "quick"}};
  RunContext ctx{p, RunSettings::Defaults(/*quick=*/true)};
  const Status st = bert->factory()->SetUp(ctx);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not precision 'int8_static'"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace perfbench::quant
