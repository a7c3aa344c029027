// The amp suite on quick sizes through the real runner and torch backend.
#include <gtest/gtest.h>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "amp_workload.h"
#include "common/models.h"
#include "common/projection.h"
#include "perfbench/backend.h"
#include "perfbench/statistics.h"
#include "registry.h"
#include "runner.h"

namespace perfbench {
namespace {

RunSettings AmpSelection(const std::string& filter) {
  RunSettings s = RunSettings::Defaults(/*quick=*/true);
  s.budget_s = 0;  // these tests pin step counts; the quick budget is runner_test's
  s.suites = {"amp"};
  s.filter = filter;
  return s;
}

std::vector<VariantOutcome> RunAmp(const std::string& filter, int warmup, int reps) {
  RunSettings s = AmpSelection(filter);
  s.device = "cpu";
  s.warmup_steps = warmup;
  s.repetitions = reps;
  Runner runner(s, GetDeviceBackend());
  std::vector<VariantOutcome> all;
  runner.RunAll(GroupVariants(SelectVariants(s)), [&](const auto& outs) {
    all.insert(all.end(), outs.begin(), outs.end());
  });
  return all;
}

TEST(Amp, TheTorchBackendIsInstalled) { EXPECT_EQ(GetDeviceBackend().Name(), "torch"); }

TEST(Amp, RegistersEveryModelInFourPrecisionsConvolutionalOnesChannelsLast) {
  auto v = SelectVariants(AmpSelection(""));
  std::set<std::string> names;
  for (const auto& x : v) names.insert(x.FullName());
  for (const char* w : {"mlp", "cnn", "transformer", "resnet50"}) {
    const bool conv = std::string(w) == "cnn" || std::string(w) == "resnet50";
    for (const char* p : {"fp32", "tf32", "bf16", "fp16"})
      EXPECT_TRUE(names.count(std::string("amp/") + w + "/precision:" + p + "/size:quick" +
                              (conv ? "/memory_format:channels_last" : "")))
          << w << " " << p;
  }
}

TEST(Amp, TheFullBatchIsAParamWithAPerDeviceDefault) {
  RunSettings s = RunSettings::Defaults(/*quick=*/false);
  s.suites = {"amp"};
  s.filter = "^amp/(resnet50|bert|decoder)/precision:fp32/";
  std::map<std::string, std::string> batch;
  for (const char* device : {"cpu", "cuda"}) {
    s.device = device;
    for (const auto& v : SelectVariants(s)) batch[v.workload->info.name + "/" + device] = v.params.Get("batch");
  }
  EXPECT_EQ(batch["resnet50/cuda"], "256");
  EXPECT_EQ(batch["resnet50/cpu"], "16");
  EXPECT_EQ(batch["bert/cuda"], "32");
  EXPECT_EQ(batch["bert/cpu"], "4");
  EXPECT_EQ(batch["decoder/cuda"], "8");
  // --param batch overrides it, and is part of the name.
  s.overrides = {{"batch", {"4"}}};
  for (const auto& v : SelectVariants(s)) EXPECT_NE(v.FullName().find("/batch:4"), std::string::npos) << v.FullName();
}

TEST(Amp, Tf32IsSkippedOffTheGpuAndEveryVariantSetsItsMathMode) {
  const auto out = RunAmp("mlp/precision:(fp32|tf32)", 1, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].status, ResultStatus::kOk) << out[0].reason;
  EXPECT_EQ(out[1].status, ResultStatus::kSkipped);
  EXPECT_NE(out[1].reason.find("GPU math mode"), std::string::npos) << out[1].reason;
  // What the library held while fp32 ran: strict IEEE everywhere, cuDNN's
  // flags explicit (the convolutional models autotune, the others do not).
  const auto& a = out[0].attributes;
  for (const char* op : {"matmul", "conv", "rnn"}) {
    EXPECT_EQ(a.at(std::string("math.fp32_precision.cuda.") + op), "ieee") << op;
    EXPECT_EQ(a.at(std::string("math.fp32_precision.mkldnn.") + op), "ieee") << op;
  }
  EXPECT_EQ(a.at("math.cudnn_benchmark"), "off");
  EXPECT_EQ(a.at("math.cudnn_deterministic"), "off");
  const auto cnn = RunAmp("cnn/precision:fp32", 1, 2);
  ASSERT_EQ(cnn.size(), 1u);
  EXPECT_EQ(cnn[0].attributes.at("math.cudnn_benchmark"), "on");
  EXPECT_EQ(cnn[0].attributes.at("memory_format"), "channels_last");
}

TEST(Amp, ChannelsLastPutsEveryConvolutionWeightAndInputInNhwc) {
  const auto* def = common::FindModelDef("resnet50");
  common::Model model = def->make("quick");
  auto batches = common::MakeBatches(*def, "quick", 2, 1, torch::kCPU);
  common::ToChannelsLast(model, batches);
  int convs = 0;
  for (const auto& p : model.module->parameters()) {
    if (p.dim() != 4) continue;
    ++convs;
    EXPECT_TRUE(p.is_contiguous(at::MemoryFormat::ChannelsLast));
  }
  EXPECT_GT(convs, 10);
  for (const auto& b : batches) EXPECT_TRUE(b.x.is_contiguous(at::MemoryFormat::ChannelsLast));
  // And the step keeps them so (the optimiser updates in place).
  common::Trainer t(std::move(model), common::Precision::kFp32, torch::kCPU, def->Optimizer("quick", 8));
  t.Step(batches[0]);
  for (const auto& p : t.Parameters())
    if (p.dim() == 4) EXPECT_TRUE(p.is_contiguous(at::MemoryFormat::ChannelsLast));
}

TEST(Amp, MlpRunsInEveryPrecisionWithLossParity) {
  auto out = RunAmp("mlp", 1, 3);
  ASSERT_EQ(out.size(), 4u);
  for (const auto& o : out) {
    const std::string p = o.variant.params.Get("precision");
    if (o.status == ResultStatus::kSkipped) {
      // tf32 off a GPU; fp16 only for missing ops
      EXPECT_TRUE(p == "tf32" || p == "fp16") << p << ": " << o.reason;
      continue;
    }
    ASSERT_EQ(o.status, ResultStatus::kOk) << p << ": " << o.reason;
    for (const char* m : {"throughput", "step_time", "peak_memory", "peak_rss", "loss"})
      EXPECT_EQ(o.samples.at(m).size(), 3u) << p << " " << m;
    EXPECT_GT(o.samples.at("peak_memory")[0], 1e5) << "weights alone are >1 MB";
    if (p != "fp32") {
      EXPECT_EQ(o.samples.at("speedup").size(), 3u);
      EXPECT_EQ(o.attributes.at("loss_parity").rfind("ok: first-step loss", 0), 0u) << o.attributes.at("loss_parity");
    }
  }
}

TEST(Amp, CnnFp32AndBf16Run) {
  auto out = RunAmp("cnn/precision:(fp32|bf16)", 1, 2);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& o : out) ASSERT_EQ(o.status, ResultStatus::kOk) << o.reason;
  EXPECT_LT(out[1].samples.at("peak_memory")[0], out[0].samples.at("peak_memory")[0])
      << "bf16 activations should take less memory than fp32";
}

// A CPU may run a convolution's backward through oneDNN's reference kernels
// (fp16 on the 2-core Xeon: minutes for one full-size cnn step, its fp16
// GEMMs fast), so convolutional models are projected at a convolution's speed.
TEST(Amp, AConvolutionalModelIsProjectedAtAConvolutionsSpeed) {
  const double conv = common::ConvProbeFlops(torch::kCPU, torch::kFloat);
  EXPECT_GT(conv, 1e8);
  EXPECT_EQ(common::ConvProbeFlops(torch::kCPU, torch::kFloat), conv);  // measured once per process
  EXPECT_EQ(common::TimeProjectionAt("3 steps", 1e9, 1e9, "a probe", 2), "");
  EXPECT_EQ(common::TimeProjectionAt("3 steps", 1e10, 1e9, "a Half 3x3 convolution probe", 2),
            "projected 10 s for 3 steps (0.01 TFLOP at the 1 GFLOP/s a Half 3x3 convolution probe reached) exceeds "
            "the 2 s budget per variant");
}

TEST(Amp, TrainingLearnsTheSyntheticTask) {
  common::ModelDef def;
  def.make = [](const std::string&) {
    return common::Model::Of(torch::nn::Sequential(torch::nn::Linear(16, 32), torch::nn::GELU(), torch::nn::Linear(32, 10)));
  };
  def.sample_shape = [](const std::string&) { return std::vector<int64_t>{16}; };
  def.batch = [](const std::string&) { return int64_t{64}; };
  torch::manual_seed(1);
  common::Trainer t(def.make(""), common::Precision::kFp32, torch::kCPU);
  auto batches = common::MakeBatches(def, "", 1, 1, torch::kCPU);
  const double first = t.Step(batches[0]).item<double>();
  double last = first;
  for (int i = 0; i < 50; ++i) last = t.Step(batches[0]).item<double>();
  EXPECT_LT(last, 0.5 * first);
}

TEST(Amp, GradientAccumulationMatchesTheWholeBatchStep) {
  common::ModelDef def;
  def.make = [](const std::string&) {
    torch::manual_seed(5);
    return common::Model::Of(torch::nn::Sequential(torch::nn::Linear(16, 32), torch::nn::GELU(), torch::nn::Linear(32, 10)));
  };
  def.sample_shape = [](const std::string&) { return std::vector<int64_t>{16}; };
  def.batch = [](const std::string&) { return int64_t{64}; };
  common::Trainer whole(def.make(""), common::Precision::kFp32, torch::kCPU);
  common::Trainer micro(def.make(""), common::Precision::kFp32, torch::kCPU);
  const auto b = common::MakeBatches(def, "", 1, 2, torch::kCPU)[0];
  const auto parts = common::MicroBatches(b, 4);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].x.size(0), 16);
  for (int i = 0; i < 3; ++i) {
    const double lw = whole.Step(b).item<double>(), lm = micro.Step(parts).item<double>();
    EXPECT_NEAR(lw, lm, 1e-5) << "step " << i;
  }
  for (size_t i = 0; i < whole.Parameters().size(); ++i)
    EXPECT_TRUE(torch::allclose(whole.Parameters()[i], micro.Parameters()[i], 1e-4, 1e-5)) << "parameter " << i;
  EXPECT_THROW(common::MicroBatches(b, 3), std::invalid_argument);
}

TEST(Amp, OptionalParamsRunAccumulationAndChannelsLast) {
  RunSettings s = AmpSelection("(mlp|cnn)/precision:fp32");
  s.device = "cpu";
  s.warmup_steps = 1;
  s.repetitions = 2;
  s.overrides = {{"accumulation", {"1", "2"}}, {"memory_format", {"contiguous", "channels_last"}}};
  Runner runner(s, GetDeviceBackend());
  std::vector<VariantOutcome> out;
  runner.RunAll(GroupVariants(SelectVariants(s)), [&](const auto& o) { out.insert(out.end(), o.begin(), o.end()); });
  std::set<std::string> names;
  for (const auto& o : out) {
    names.insert(o.variant.FullName());
    EXPECT_EQ(o.status, ResultStatus::kOk) << o.variant.FullName() << ": " << o.reason;
  }
  // memory_format is declared for cnn only (channels_last by default); mlp
  // gets accumulation alone.
  EXPECT_EQ(names, (std::set<std::string>{"amp/cnn/precision:fp32/size:quick/memory_format:contiguous",
                                          "amp/cnn/precision:fp32/size:quick/memory_format:channels_last",
                                          "amp/cnn/precision:fp32/size:quick/memory_format:contiguous/accumulation:2",
                                          "amp/cnn/precision:fp32/size:quick/memory_format:channels_last/accumulation:2",
                                          "amp/mlp/precision:fp32/size:quick",
                                          "amp/mlp/precision:fp32/size:quick/accumulation:2"}));
}

int64_t ParameterCount(const common::Model& m) {
  int64_t n = 0;
  for (const auto& p : m.module->parameters()) n += p.numel();
  return n;
}

TEST(MlperfModels, ParameterCountsMatchThePublishedOnes) {
  torch::NoGradGuard no_grad;
  const auto* resnet = common::FindModelDef("resnet50");
  ASSERT_NE(resnet, nullptr);
  // torchvision's resnet50: 25,557,032 (published: 25.6M).
  EXPECT_EQ(ParameterCount(resnet->make("full")), 25557032);
  EXPECT_NEAR(ParameterCount(resnet->make("full")) / 25.6e6, 1.0, 0.01);
  // BERT-base: 110M; BERT-large: 335.1M as built by the paper's configuration
  // (the paper rounds it to 340M, 1.4% off; Hugging Face's bert-large-uncased
  // counts 335,141,888 with the pooler). Ours adds a 10-class head.
  EXPECT_NEAR(ParameterCount(common::MakeBert(common::BertConfigFor("base"))) / 110e6, 1.0, 0.01);
  EXPECT_NEAR(ParameterCount(common::MakeBert(common::BertConfigFor("large"))) / 335.1e6, 1.0, 0.01);
  EXPECT_NEAR(ParameterCount(common::MakeDecoder(common::DecoderConfigFor("full"))) / 125e6, 1.0, 0.03);
}

TEST(MlperfModels, ResNet50FlopAndQuickForwardShapes) {
  // torchvision: 4.09 GMACs per 224x224 image forward = 8.18 GFLOP.
  EXPECT_NEAR(common::ResNet50ForwardFlop("full") / 8.18e9, 1.0, 0.02);
  torch::NoGradGuard no_grad;
  for (const char* name : {"resnet50", "bert", "decoder"}) {
    const auto* def = common::FindModelDef(name);
    ASSERT_NE(def, nullptr) << name;
    torch::manual_seed(1);
    auto model = def->make("quick");
    const auto b = common::MakeBatches(*def, "quick", 1, 3, torch::kCPU)[0];
    const torch::Tensor logits = model.forward(b.x);
    EXPECT_EQ(logits.size(0), b.y.size(0)) << name;
    EXPECT_EQ(logits.dim(), 2) << name;
    EXPECT_GT(def->flops_per_step("quick"), 0) << name;
  }
  const auto* dec = common::FindModelDef("decoder");
  EXPECT_EQ(dec->ItemsPerBatch("quick"), 4 * 64);  // tokens
  const auto b = common::MakeBatches(*dec, "quick", 1, 3, torch::kCPU)[0];
  EXPECT_TRUE(torch::equal(b.y.view({4, 64}).select(1, 0), b.x.select(1, 1))) << "next-token labels";
}

// One Linear(8, 10) layer, batches of 4: the smallest model fp16 scaling acts on.
common::ModelDef TinyLinear() {
  common::ModelDef def;
  def.make = [](const std::string&) { return common::Model::Of(torch::nn::Sequential(torch::nn::Linear(8, 10))); };
  def.sample_shape = [](const std::string&) { return std::vector<int64_t>{8}; };
  def.batch = [](const std::string&) { return int64_t{4}; };
  return def;
}

TEST(Amp, Fp16LossScalingBacksOffOnOverflow) {
  if (!common::LossScalingUnavailable("cpu").empty()) GTEST_SKIP() << common::LossScalingUnavailable("cpu");
  const common::ModelDef def = TinyLinear();
  common::Trainer t(def.make(""), common::Precision::kFp16, torch::kCPU);
  auto b = common::MakeBatches(def, "", 1, 3, torch::kCPU)[0];
  b.x.mul_(1e30);  // fp16 overflows -> inf gradients -> step skipped, scale halved
  const auto before = t.Parameters()[0].clone();
  t.Step(b);
  EXPECT_DOUBLE_EQ(t.LossScale(), 32768.0);
  EXPECT_TRUE(torch::equal(before, t.Parameters()[0])) << "the optimizer must skip a non-finite step";
}

TEST(Amp, Fp16LossScaleCalibrationFindsAFiniteScaleWithoutAnUpdate) {
  if (!common::LossScalingUnavailable("cpu").empty()) GTEST_SKIP() << common::LossScalingUnavailable("cpu");
  const common::ModelDef def = TinyLinear();
  common::Trainer t(def.make(""), common::Precision::kFp16, torch::kCPU);
  auto batches = common::MakeBatches(def, "", 2, 3, torch::kCPU);
  for (auto& b : batches) b.x.mul_(300);  // gradients x 2^16 overflow fp16
  const auto before = t.Parameters()[0].clone();
  const double scale = t.CalibrateLossScale(batches);
  EXPECT_LT(scale, 65536.0);
  EXPECT_GE(scale, 1.0);
  EXPECT_TRUE(torch::equal(before, t.Parameters()[0])) << "calibration must not update the model";
  t.Step(batches[0]);
  EXPECT_DOUBLE_EQ(t.LossScale(), scale) << "the first step after calibration is not skipped";
  EXPECT_FALSE(torch::equal(before, t.Parameters()[0]));
  common::Trainer fp32(def.make(""), common::Precision::kFp32, torch::kCPU);
  EXPECT_EQ(fp32.CalibrateLossScale(batches), 1.0);
  // Bounded by time (--quick): at least one batch, then no further once past the bound.
  common::Trainer bounded(def.make(""), common::Precision::kFp16, torch::kCPU);
  size_t calibrated = 0;
  bounded.CalibrateLossScale(batches, /*max_seconds=*/0, &calibrated);
  EXPECT_EQ(calibrated, 1u);
  common::Trainer unbounded(def.make(""), common::Precision::kFp16, torch::kCPU);
  unbounded.CalibrateLossScale(batches, std::numeric_limits<double>::infinity(), &calibrated);
  EXPECT_EQ(calibrated, batches.size());
}

TEST(Amp, AutocastGuardRestoresTheThreadState) {
  ASSERT_FALSE(at::autocast::is_autocast_enabled(c10::kCPU));
  {
    common::AutocastGuard g(c10::kCPU, at::kBFloat16);
    EXPECT_TRUE(at::autocast::is_autocast_enabled(c10::kCPU));
    auto y = torch::nn::Linear(4, 4)->forward(torch::randn({2, 4}));
    EXPECT_EQ(y.scalar_type(), at::kBFloat16);
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(c10::kCPU));
  EXPECT_THROW(common::ParsePrecision("int4"), std::invalid_argument);
}

// The full-size transformers (BERT-base, the 127M decoder) at a reduced
// batch and sequence, so that a CPU test trains the full configurations with
// their recipe for 20 steps on the 4 cycled batches amp uses. (64-wide,
// 12-deep versions do not reproduce the divergence: it needs the width.)
struct ReducedCase {
  common::ModelDef def;
  int64_t batch;
};

ReducedCase ReducedBert() {
  ReducedCase c{*common::FindModelDef("bert"), 4};
  c.def.sample_shape = [](const std::string&) { return std::vector<int64_t>{64}; };
  return c;
}

ReducedCase ReducedDecoder() {
  ReducedCase c{*common::FindModelDef("decoder"), 1};
  c.def.sample_shape = [](const std::string&) { return std::vector<int64_t>{64}; };
  return c;
}

// torch's default initialisation (N(0, 1) embeddings, Kaiming-uniform
// Linear layers): what the transformers trained with before.
void TorchDefaults(common::Model& m) {
  torch::NoGradGuard no_grad;
  for (auto& mod : m.module->modules()) {
    if (auto* l = mod->as<torch::nn::LinearImpl>()) l->reset_parameters();
    if (auto* e = mod->as<torch::nn::EmbeddingImpl>()) e->reset_parameters();
  }
}

// Losses of 20 fp32 steps over the 4 cycled batches.
std::vector<double> Train(const ReducedCase& c, common::Model model, const common::OptimizerSpec& opt) {
  auto batches = common::MakeBatches(c.def, "full", 4, 42, torch::kCPU, c.batch);
  common::Trainer t(std::move(model), common::Precision::kFp32, torch::kCPU, opt);
  std::vector<double> losses;
  for (int i = 0; i < 20; ++i) losses.push_back(t.Step(batches[i % 4]).item<double>());
  return losses;
}

// The mean loss over one cycle of the 4 batches: the first or the last.
double Cycle(const std::vector<double>& v, bool last) {
  const size_t from = last ? v.size() - 4 : 0;
  return (v[from] + v[from + 1] + v[from + 2] + v[from + 3]) / 4;
}

std::string Text(const std::vector<double>& v) {
  std::ostringstream out;
  out.precision(3);
  for (double x : v) out << x << " ";
  return out.str();
}

// Stable training, stated: over 20 steps the mean loss of the last cycle of
// batches is at least kFall below the first cycle's, and no loss exceeds
// twice chance (ln 10 for bert's ten topics, ln 32000 for the next token).
constexpr double kFall = 0.10;
bool Stable(const std::vector<double>& losses, double chance) {
  if (Cycle(losses, true) > (1 - kFall) * Cycle(losses, false)) return false;
  return std::all_of(losses.begin(), losses.end(), [&](double l) { return std::isfinite(l) && l <= 2 * chance; });
}

TEST(FullSizeTraining, BertBaseLearnsWithItsRecipeAndDivergedWithTheOldSettings) {
  const ReducedCase c = ReducedBert();
  torch::manual_seed(1);
  const auto now = Train(c, c.def.make("full"), c.def.Optimizer("full", c.batch));
  EXPECT_TRUE(Stable(now, std::log(10.0))) << Text(now);
  // Assessable: its loss spread is within what parity accepts of a reference.
  const std::vector<double> timed(now.begin() + 3, now.end());  // after amp's 3 warm-up steps
  EXPECT_LE(stats::StdDev(timed) / stats::Mean(timed), amp::kMaxFp32Spread) << Text(now);
  // SGD at 0.05 with momentum 0.9 and torch's initialisation: measured up to
  // 63 here (13.3 +- 59% on the H200).
  torch::manual_seed(1);
  common::Model old = c.def.make("full");
  TorchDefaults(old);
  const auto before = Train(c, std::move(old), common::OptimizerSpec{});
  EXPECT_FALSE(Stable(before, std::log(10.0))) << "the old settings were stable after all: " << Text(before);
}

TEST(FullSizeTraining, TheDecoderLearnsWithItsRecipe) {
  // (The old settings did not diverge on the decoder: it memorised the
  // cycled batches even faster. Only the recipe is checked here.)
  const ReducedCase c = ReducedDecoder();
  torch::manual_seed(1);
  const auto now = Train(c, c.def.make("full"), c.def.Optimizer("full", c.batch));
  EXPECT_TRUE(Stable(now, std::log(32000.0))) << Text(now);
  const std::vector<double> timed(now.begin() + 3, now.end());
  EXPECT_LE(stats::StdDev(timed) / stats::Mean(timed), amp::kMaxFp32Spread) << Text(now);
}

TEST(FullSizeTraining, Bf16FirstStepLossMatchesFp32UnderCpuAutocast) {
  const ReducedCase c = ReducedBert();
  auto batches = common::MakeBatches(c.def, "full", 1, 42, torch::kCPU, c.batch);
  torch::manual_seed(3);
  common::Trainer fp32(c.def.make("full"), common::Precision::kFp32, torch::kCPU);
  torch::manual_seed(3);
  common::Trainer bf16(c.def.make("full"), common::Precision::kBf16, torch::kCPU);
  const double a = fp32.Loss(batches[0]), b = bf16.Loss(batches[0]);
  EXPECT_NE(a, b) << "bf16 autocast ran in fp32";
  EXPECT_LE(std::abs(b - a) / a, amp::LossTolerance(common::Precision::kBf16).first) << a << " vs " << b;
  // The verdict the amp suite gives from the same figures.
  const auto r = amp::JudgeParity(common::Precision::kBf16, b, a, {2.0, 2.1, 1.9}, {2.0, 2.05, 1.95});
  EXPECT_TRUE(r.ok) << r.text;
  EXPECT_TRUE(r.assessable);
  const auto diverged = amp::JudgeParity(common::Precision::kBf16, b, a, {2.0}, {2.3, 13.3, 40.0});
  EXPECT_FALSE(diverged.assessable) << diverged.text;
  EXPECT_TRUE(diverged.ok) << "the first step still decides";
  EXPECT_FALSE(amp::JudgeParity(common::Precision::kBf16, 1.2 * a, a, {2.0}, {2.0}).ok);
}

}  // namespace
}  // namespace perfbench
