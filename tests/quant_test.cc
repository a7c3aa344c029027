// The quant suite: int8 outputs agree with fp32 within stated bounds,
// calibration sets scales as it should, the accuracy gate fails a
// deliberately miscalibrated model and passes a calibrated one, and the
// MLPerf models (BERT int8 dynamic, ResNet-50 int8 static) run their
// functional forms faithfully and keep their accuracy.
#include <gtest/gtest.h>

#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>

#include "bert_net.h"
#include "common/graph_replay.h"
#include "offline_batch.h"
#include "layer_net.h"
#include "perfbench/posix_fs.h"
#include "resnet_net.h"
#include "weight_store.h"
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

TEST(Quant, TheInt8AndFp8GemmPathsAgreeWithFp32AndKeepAccuracy) {
  for (const LowpFormat format : {LowpFormat::kInt8, LowpFormat::kFp8TensorWise}) {
    LayerNet m = Mlp();
    m.PrepareLowp({format});
    torch::InferenceMode guard;
    const auto x = Mlp().data().test_x.slice(0, 0, 512);
    const auto ref = Mlp().Forward(x, Mode::kFp32);
    const double range = (ref.max() - ref.min()).item<double>();
    const auto y = m.Forward(x, Mode::kLowp);
    EXPECT_LT((y - ref).abs().mean().item<double>(), 0.02 * range) << FormatName(format);
    // Top-1 agreement: e4m3 keeps 3 mantissa bits, int8 per row about 7.
    const double agree = format == LowpFormat::kInt8 ? 0.97 : 0.95;
    EXPECT_GE(y.argmax(1).eq(ref.argmax(1)).to(torch::kFloat64).mean().item<double>(), agree) << FormatName(format);
    if (format == LowpFormat::kInt8)  // per row: a single row gives the same answer as in a batch
      EXPECT_TRUE(torch::allclose(m.Forward(x.slice(0, 3, 4), Mode::kLowp), y.slice(0, 3, 4), 1e-5, 1e-5));
    EXPECT_GE(m.Accuracy(Mode::kLowp) / Mlp().Accuracy(Mode::kFp32), 0.99) << FormatName(format);
    EXPECT_LT(m.ModelBytes(Mode::kLowp), Mlp().ModelBytes(Mode::kFp32) / 3) << FormatName(format);
  }
}

TEST(Quant, HalfPrecisionRunsTheWholeModelInItsDtype) {
  if (!ProbeHalf(torch::kBFloat16, torch::kCPU).empty()) GTEST_SKIP() << ProbeHalf(torch::kBFloat16, torch::kCPU);
  LayerNet m = Mlp();
  m.PrepareHalf(torch::kBFloat16);
  torch::InferenceMode guard;
  const auto x = Mlp().data().test_x.slice(0, 0, 512);
  const auto ref = Mlp().Forward(x, Mode::kFp32), y = m.Forward(x, Mode::kHalf);
  EXPECT_EQ(y.scalar_type(), torch::kFloat32) << "logits come back in fp32";
  EXPECT_GE(y.argmax(1).eq(ref.argmax(1)).to(torch::kFloat64).mean().item<double>(), 0.97);
  EXPECT_EQ(m.ModelBytes(Mode::kHalf) * 2, Mlp().ModelBytes(Mode::kFp32));
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

TEST(Quant, PaddingRulesPadOnlyWhatTheCudaKernelsNeed) {
  // CUDA int8 (cuBLASLt): more than 16 rows, k and n multiples of 8.
  EXPECT_EQ(PaddedShape(LowpFormat::kInt8, true, {1, 768, 768}), (GemmShape{17, 768, 768}));
  EXPECT_EQ(PaddedShape(LowpFormat::kInt8, true, {16, 768, 768}), (GemmShape{17, 768, 768}));
  EXPECT_EQ(PaddedShape(LowpFormat::kInt8, true, {17, 768, 768}), (GemmShape{17, 768, 768})) << "fits: kept";
  EXPECT_EQ(PaddedShape(LowpFormat::kInt8, true, {33, 13, 10}), (GemmShape{33, 16, 16}));
  // CUDA fp8: k and n multiples of 16, rows as they are.
  for (const LowpFormat f : {LowpFormat::kFp8RowWise, LowpFormat::kFp8TensorWise}) {
    EXPECT_EQ(PaddedShape(f, true, {1, 768, 24}), (GemmShape{1, 768, 32}));
    EXPECT_EQ(PaddedShape(f, true, {16, 8, 16}), (GemmShape{16, 16, 16}));
    EXPECT_EQ(PaddedShape(f, true, {17, 64, 64}), (GemmShape{17, 64, 64}));
    EXPECT_EQ(PaddedShape(f, true, {33, 64, 64}), (GemmShape{33, 64, 64}));
  }
  // The CPU pads nothing, but int8's inner size 1 (LibTorch 2.11's CPU _int_mm is wrong there).
  for (const LowpFormat f : {LowpFormat::kInt8, LowpFormat::kFp8TensorWise})
    for (const int64_t m : {1, 16, 17, 33}) EXPECT_EQ(PaddedShape(f, false, {m, 13, 10}), (GemmShape{m, 13, 10}));
  EXPECT_EQ(PaddedShape(LowpFormat::kInt8, false, {3, 1, 7}), (GemmShape{3, 2, 7}));
  EXPECT_EQ(PaddedShape(LowpFormat::kFp8TensorWise, false, {3, 1, 7}), (GemmShape{3, 1, 7}));
}

TEST(Quant, TheGemmWeightIsTheTransposedViewOfAContiguousNByKWeight) {
  torch::manual_seed(5);
  const auto w = torch::randn({24, 40}), b = torch::randn({24});
  for (const LowpFormat f : {LowpFormat::kInt8, LowpFormat::kFp8TensorWise}) {
    const auto l = LowpLinear::Prepare(w, b, {f});
    const auto g = l.GemmWeight();
    EXPECT_EQ(g.sizes(), (std::vector<int64_t>{40, 24})) << "[K, N] as the GEMM reads it";
    EXPECT_FALSE(g.is_contiguous()) << "not a row-major [K, N] copy (the NN layout)";
    EXPECT_TRUE(g.t().is_contiguous()) << "its transpose, the stored [N, K] weight, is contiguous: TN";
    // NN on request (to measure the old layout against): row-major [K, N], the same products.
    const auto nn = LowpLinear::Prepare(w, b, {f, torch::kFloat32, /*nn_layout=*/true});
    EXPECT_TRUE(nn.GemmWeight().is_contiguous());
    const auto x = torch::randn({5, 40});
    EXPECT_TRUE(torch::allclose(nn(x), l(x), 1e-5, 1e-5)) << FormatName(f);
  }
}

TEST(Quant, LowpLinearsMatchFp32ForEveryRowCountAndOddSizes) {
  torch::manual_seed(5);
  for (const LowpFormat f : {LowpFormat::kInt8, LowpFormat::kFp8TensorWise})
    for (const int64_t in : {13, 8, 1})
      for (const int64_t rows : {1, 16, 17, 33}) {
        const auto w = torch::randn({7, in}), b = torch::randn({7}), x = torch::randn({rows, in});
        const auto l = LowpLinear::Prepare(w, b, {f});
        const auto ref = torch::nn::functional::linear(x, w, b), y = l(x);
        ASSERT_EQ(y.sizes(), ref.sizes()) << FormatName(f) << " " << in << " " << rows;
        // int8 per row and channel, e4m3 per tensor: a few percent of the output range.
        EXPECT_LT((y - ref).abs().max().item<double>(), 0.06 * (ref.max() - ref.min()).item<double>())
            << FormatName(f) << " " << in << " " << rows;
      }
  // An all-zero row quantizes to zeros, not NaN: its output is the bias.
  const auto l = LowpLinear::Prepare(torch::randn({7, 8}), torch::ones({7}), {LowpFormat::kInt8});
  EXPECT_TRUE(torch::equal(l(torch::zeros({2, 8})), torch::ones({2, 7})));
}

// The top-level ATen ops a call makes (what a profiler's trace shows),
// counted with a RecordFunction callback; views and no-op conversions are
// not kernels and are left out.
std::vector<std::string> TopLevelOps(const std::function<void()>& call) {
  static thread_local int depth = 0;
  static thread_local std::vector<std::string>* seen = nullptr;
  std::vector<std::string> ops;
  seen = &ops;
  depth = 0;
  auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
            if (depth++ == 0) seen->push_back(fn.name());
            return nullptr;
          },
          [](const at::RecordFunction&, at::ObserverContext*) { --depth; })
          .scopes({at::RecordScope::FUNCTION}));
  call();
  at::removeCallback(handle);
  static const std::set<std::string> kViews = {"aten::reshape", "aten::view",   "aten::slice",    "aten::t",
                                               "aten::unsqueeze", "aten::transpose", "aten::as_strided",
                                               "aten::empty",   "aten::alias",  "aten::_reshape_alias"};
  std::erase_if(ops, [](const std::string& op) { return kViews.count(op) > 0; });
  return ops;
}

TEST(Quant, AQuantizedLinearMakesAtMostHalfTheOpsOfTheOldForm) {
  // The old int8 form made 14: abs, amax, clamp_min, div, div, round, clamp,
  // to, constant_pad_nd, _int_mm, to, mul, mul, add.
  constexpr size_t kOld = 14;
  torch::manual_seed(5);
  const auto w = torch::randn({256, 256}), b = torch::randn({256}), x = torch::randn({32, 256});
  torch::InferenceMode guard;
  for (const LowpFormat f : {LowpFormat::kInt8, LowpFormat::kFp8TensorWise}) {
    const auto l = LowpLinear::Prepare(w, b, {f});
    l(x);  // first call: grows the zero points
    const auto ops = TopLevelOps([&] { l(x); });
    std::string list;
    for (const auto& op : ops) list += op + " ";
    std::cout << FormatName(f) << ": " << ops.size() << " ops: " << list << "\n";
    EXPECT_LE(ops.size(), kOld / 2) << FormatName(f) << ": " << list;
    EXPECT_EQ(std::count(ops.begin(), ops.end(), f == LowpFormat::kInt8 ? "aten::_int_mm" : "aten::_scaled_mm"), 1)
        << list;
  }
}

TEST(Quant, ProbesSayWhyAPrecisionCannotRun) {
  // LibTorch 2.11's CPU _scaled_mm scales per tensor only.
  EXPECT_EQ(ProbeLowp(LowpFormat::kFp8TensorWise, torch::kCPU), "");
  EXPECT_EQ(ProbeLowp(LowpFormat::kInt8, torch::kCPU), "");
  const std::string row_wise = ProbeLowp(LowpFormat::kFp8RowWise, torch::kCPU);
  EXPECT_NE(row_wise.find("fp8 row-wise does not run on cpu: at::_scaled_mm says"), std::string::npos) << row_wise;
  EXPECT_NE(row_wise.find("per-tensor"), std::string::npos) << row_wise;
  EXPECT_EQ(row_wise.find('\n'), std::string::npos) << "one line";
  // Half precision on the CPU: what oneDNN reports, with the reason when it is not native.
  for (const auto dtype : {torch::kBFloat16, torch::kHalf}) {
    const std::string why = ProbeHalf(dtype, torch::kCPU);
    if (!why.empty()) EXPECT_NE(why.find("no native support on this CPU"), std::string::npos) << why;
    EXPECT_EQ(ProbeHalf(dtype, torch::kCPU), why) << "probed once, the same answer";
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
  EXPECT_FALSE(net.Unsupported(Mode::kLowp).empty());
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

namespace perfbench::quant {
namespace {

TEST(Quant, TheOfflineBatchIsTheSmallestWithinFivePercentOfTheNextDoubling) {
  // Throughput that saturates: 1000 b / (b + 32) samples/s.
  int calls = 0;
  const auto saturating = [&](int64_t b) {
    ++calls;
    return 1000.0 * static_cast<double>(b) / static_cast<double>(b + 32);
  };
  // 256: 888.9, 512: 941.2 (888.9 < 0.95 x 941.2 = 894.1); 512 vs 1024: 941.2 >= 0.95 x 969.7.
  const BatchChoice c = SmallestSufficientBatch(saturating, 8, 2048);
  EXPECT_EQ(c.batch, 512);
  EXPECT_EQ(calls, 8) << "each batch measured once: 8 .. 1024";
  EXPECT_NE(c.trail.find("512: 941.2/s"), std::string::npos) << c.trail;
  // Throughput that keeps growing: the largest allowed.
  EXPECT_EQ(SmallestSufficientBatch([](int64_t b) { return static_cast<double>(b); }, 8, 100).batch, 100);
  // Flat from the start: the first.
  EXPECT_EQ(SmallestSufficientBatch([](int64_t) { return 5.0; }, 8, 2048).batch, 8);
  EXPECT_THROW(SmallestSufficientBatch([](int64_t) { return 1.0; }, 0, 8), std::invalid_argument);
}

TEST(Quant, GraphReplayOnTheCpuSaysWhyQueriesStayEager) {
  common::GraphReplay g;
  const std::string why = g.Capture([](const torch::Tensor& x) { return x * 2; }, torch::ones({1, 4}));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(g.captured());
}

// A later process loads what the first trained (weight_store.h): the same
// weights, and the CPU generator where training left it; an entry that
// cannot be read is trained again and replaced.
TEST(Quant, TheWeightStoreGivesALaterProcessTheFirstOnesTrainingExactly) {
  char tmpl[] = "/tmp/perfbench_weights_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  SetWeightStoreDir(dir);
  const auto x = Mlp().data().test_x.slice(0, 0, 64);
  LayerNet first("mlp", "quick", 7);
  const auto drawn_after_first = torch::rand({4});
  LayerNet second("mlp", "quick", 7);
  const auto drawn_after_second = torch::rand({4});
  EXPECT_FALSE(first.weights_loaded());
  EXPECT_TRUE(second.weights_loaded());
  EXPECT_TRUE(torch::equal(first.Forward(x, Mode::kFp32), second.Forward(x, Mode::kFp32)));
  EXPECT_TRUE(torch::equal(drawn_after_first, drawn_after_second));
  const std::string path = WeightStorePath(TrainedWeightsKey("mlp", "quick", 7), torch::kCPU);
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path.rfind(dir + "/", 0), 0u) << path;
  EXPECT_TRUE(WeightStorePath(TrainedWeightsKey("mlp", "quick", 7), torch::Device(torch::kCUDA)).empty());
  { std::ofstream(path, std::ios::trunc) << "not a tensor archive"; }
  LayerNet third("mlp", "quick", 7);
  EXPECT_FALSE(third.weights_loaded()) << "a corrupt entry was loaded";
  EXPECT_TRUE(torch::equal(first.Forward(x, Mode::kFp32), third.Forward(x, Mode::kFp32)));
  EXPECT_TRUE(LayerNet("mlp", "quick", 7).weights_loaded()) << "the corrupt entry was not replaced";
  SetWeightStoreDir("");
  EXPECT_FALSE(LayerNet("mlp", "quick", 7).weights_loaded()) << "the store is off";
  // The mlp's training draws nothing, so the generator is checked itself: a
  // load puts it back where it was when the entry was saved.
  const std::string probe = dir + "/probe.pt";
  auto t = torch::ones({2});
  torch::manual_seed(3);
  SaveTrainedWeights(probe, {t});
  const auto next_after_save = torch::rand({4});
  torch::manual_seed(4);
  ASSERT_TRUE(LoadTrainedWeights(probe, {t}));
  EXPECT_TRUE(torch::equal(torch::rand({4}), next_after_save)) << "the generator was not restored";
  EXPECT_TRUE(posix::Exists(path)) << "saving a name without a key removed an entry";
  posix::RemoveTree(dir);
}

}  // namespace
}  // namespace perfbench::quant
