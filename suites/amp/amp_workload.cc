#include "amp_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "common/models.h"
#include "common/projection.h"
#include "perfbench/statistics.h"
#include "perfbench/workload.h"

namespace perfbench::amp {

ParityBounds LossTolerance(Precision p) {
  switch (p) {
    case Precision::kFp32: return {0.0, 0.0};
    case Precision::kTf32: return {0.01, 0.05};  // 10-bit mantissa in the products
    case Precision::kBf16: return {0.03, 0.10};  // 8-bit mantissa
    case Precision::kFp16: return {0.01, 0.05};  // 11-bit mantissa
  }
  return {};
}

ParityResult JudgeParity(Precision p, double first, double first_fp32, const std::vector<double>& losses,
                         const std::vector<double>& losses_fp32) {
  const ParityBounds b = LossTolerance(p);
  const auto rel = [](double x, double ref) { return std::abs(x - ref) / std::max(std::abs(ref), 1e-12); };
  ParityResult r;
  const double d_first = rel(first, first_fp32);
  r.ok = d_first <= b.first;
  r.text = fmt::format("first-step loss {:.5g} vs fp32 {:.5g} ({:.2f}%, bound {:g}%)", first, first_fp32,
                       100 * d_first, 100 * b.first);
  const double mean32 = stats::Mean(losses_fp32), spread = stats::StdDev(losses_fp32) / std::abs(mean32);
  if (!(spread <= kMaxFp32Spread)) {
    r.assessable = false;
    r.text += fmt::format("; mean loss not assessable: fp32's own loss spread {:.3g} (sd/mean over {} steps) "
                          "exceeds {:g}", spread, losses_fp32.size(), kMaxFp32Spread);
    return r;
  }
  // Over the steps both ran (a budget may cut one short): the same point
  // of both trajectories.
  const size_t n = std::min(losses.size(), losses_fp32.size());
  const std::vector<double> mine(losses.begin(), losses.begin() + n), ref(losses_fp32.begin(), losses_fp32.begin() + n);
  const double d_mean = rel(stats::Mean(mine), stats::Mean(ref));
  r.ok = r.ok && d_mean <= b.mean;
  r.text += fmt::format("; mean loss over {} timed steps {:.5g} vs fp32 {:.5g} ({:.2f}%, bound {:g}%)", n,
                        stats::Mean(mine), stats::Mean(ref), 100 * d_mean, 100 * b.mean);
  return r;
}

using common::Batch;
using common::MakeBatches;
using common::ParsePrecision;
using common::Trainer;

namespace {

constexpr int kBatchesInPool = 4;  // cycled: the same data for every precision

// Parameters of `def` at `size`, counted once per process.
double ParameterCount(const ModelDef& def, const std::string& size) {
  static std::mutex mu;
  static std::map<std::string, double> known;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = known.emplace(def.name + "/" + size, 0.0);
  if (fresh) {
    torch::NoGradGuard no_grad;
    for (const auto& t : def.make(size).module->parameters()) it->second += static_cast<double>(t.numel());
  }
  return it->second;
}

bool Convolutional(const ModelDef& def);

// Why a variant cannot fit, projected before anything is built: its
// set-up (the first-step loss; fp16's loss-scale calibration), warm-up and
// the fewest timed steps against the time budget, at the rate of a GEMM
// probe (optimistic: a step is never faster than its FLOP at GEMM speed)
// and, for convolutional models, of a convolution probe,
// and its parameters, optimiser state and activations against MemAvailable
// (CPU). "" when it fits.
std::string Projection(const ModelDef& def, const std::string& size, int64_t batch, Precision p,
                       const torch::Device& device, const RunSettings& s) {
  const auto dtype = p == Precision::kBf16 ? torch::kBFloat16 : p == Precision::kFp16 ? torch::kHalf : torch::kFloat;
  const double steps = 1.0 / 3 + (p == Precision::kFp16 ? kBatchesInPool : 0) + s.warmup_steps +
                       RunSettings::kMinRepetitions;
  const double flop = def.FlopsPerStep(size, batch);
  const std::string what = fmt::format("set-up, {} warm-up and {} timed steps of {:.3g} TFLOP", s.warmup_steps,
                                       RunSettings::kMinRepetitions, flop / 1e12);
  if (std::string why = common::TimeProjection(what, steps * flop, device, dtype, s.timeout_s); !why.empty())
    return why;
  // A convolutional model's steps run at its convolutions' speed, which a GEMM cannot show (a CPU's
  // fp16 convolution backward through oneDNN's reference kernels).
  if (Convolutional(def))
    if (std::string why = common::TimeProjectionAt(what, steps * flop, common::ConvProbeFlops(device, dtype),
                                                   fmt::format("a {} 3x3 convolution probe", c10::toString(dtype)),
                                                   s.timeout_s);
        !why.empty())
      return why;
  if (!device.is_cpu() || !def.activation_bytes) return "";
  const double bytes = 4.0 * ParameterCount(def, size) * 4 + def.activation_bytes(size, batch);  // weights, grads, 2 states
  const double available = common::MemAvailableBytes();
  if (available > 0 && bytes > 0.9 * available)
    return fmt::format("projected {:.1f} GB for weights, gradients, optimiser state and activations at batch {} "
                       "exceeds 90% of the {:.1f} GB available", bytes / 1e9, batch, available / 1e9);
  return "";
}

class AmpWorkload final : public Workload {
 public:
  explicit AmpWorkload(const ModelDef& def) : def_(def) {}

  Status SetUp(const RunContext& ctx) override {
    precision_ = ParsePrecision(ctx.params.Get("precision"));
    const std::string size = ctx.params.Get("size");
    const torch::Device device(ctx.settings.device == "cuda" ? torch::kCUDA : torch::kCPU);
    accumulation_ = ctx.params.GetInt("accumulation", 1);
    memory_format_ = ctx.params.Get("memory_format", "contiguous");
    if (memory_format_ != "contiguous" && memory_format_ != "channels_last")
      return Status::Error("memory_format '" + memory_format_ + "': expected contiguous or channels_last");
    batch_size_ = ctx.params.GetInt("batch", def_.batch(size));
    if (batch_size_ < 1) return Status::Error("batch must be at least 1");
    if (std::string why = Projection(def_, size, batch_size_, precision_, device, ctx.settings); !why.empty())
      return Status::Skipped(why);
    // Same seed -> same initial weights for every precision of the group.
    torch::manual_seed(ctx.settings.seed);
    common::Model model = def_.make(size);
    batches_ = MakeBatches(def_, size, kBatchesInPool, ctx.settings.seed, device, batch_size_);
    if (memory_format_ == "channels_last") common::ToChannelsLast(model, batches_);
    optimizer_ = def_.Optimizer(size, batch_size_);
    trainer_ = std::make_unique<Trainer>(std::move(model), precision_, device, optimizer_);
    items_ = def_.ItemsPerBatch(size, batch_size_);
    flops_per_step_ = def_.FlopsPerStep(size, batch_size_);
    for (const auto& b : batches_) micro_.push_back(common::MicroBatches(b, accumulation_));
    first_loss_ = trainer_->Loss(batches_[0]);  // the same weights and batch for every precision
    // A slow (emulated) fp16 step calibrates on the batches that fit a third of its soft budget (--quick's or
    // its share of the run's).
    const double bound = ctx.budget_s > 0 ? ctx.budget_s / 3 : std::numeric_limits<double>::infinity();
    initial_loss_scale_ = trainer_->CalibrateLossScale(batches_, bound, &calibrated_batches_);
    if (precision_ == Precision::kFp16 && calibrated_batches_ < batches_.size())
      quick_bound_ = fmt::format("the loss scale calibrated on {} of the {} batches (bounded to about {:.3g} s)",
                                 calibrated_batches_, batches_.size(), bound);
    return Status::Ok();
  }

  Status RunStep(StepRecorder& rec) override {
    const size_t i = step_++ % batches_.size();
    torch::Tensor loss = accumulation_ == 1 ? trainer_->Step(batches_[i]) : trainer_->Step(micro_[i]);
    rec.SetItemsProcessed(static_cast<double>(items_));
    rec.Add("loss", loss.item<double>());
    rec.Add("first_loss", first_loss_);
    return Status::Ok();
  }

  Status Verify(const VerifyContext& ctx) override {
    if (precision_ == Precision::kFp32 || ctx.reference == nullptr) return Status::Ok();
    const auto find = [](const auto& samples, const char* m) {
      auto it = samples.find(m);
      return it == samples.end() ? std::vector<double>{} : it->second;
    };
    const auto losses = find(ctx.samples, "loss"), ref_losses = find(*ctx.reference, "loss");
    const auto ref_first = find(*ctx.reference, "first_loss");
    if (losses.empty() || ref_losses.empty() || ref_first.empty()) return Status::Ok();
    const ParityResult r = JudgeParity(precision_, first_loss_, ref_first.front(), losses, ref_losses);
    parity_ = (r.ok ? (r.assessable ? "ok: " : "first step ok: ") : "failed: ") + r.text;
    return r.ok ? Status::Ok() : Status::Error("loss parity: " + r.text);
  }

  std::map<std::string, std::string> Attributes() const override {
    std::map<std::string, std::string> a{{"batch_size", std::to_string(batch_size_)},
                                         {"memory_format", memory_format_}, {"optimizer", optimizer_.Text()}};
    if (accumulation_ > 1) a["micro_batch_size"] = std::to_string(batch_size_ / accumulation_);
    if (flops_per_step_ > 0) a["flops_per_step"] = fmt::format("{:.6g}", flops_per_step_);
    if (precision_ == Precision::kFp16 && trainer_) {
      a["initial_loss_scale"] = fmt::format("{:g} (calibrated in set-up on {} of {} batches: halved from 2^16 until finite)",
                                            initial_loss_scale_, calibrated_batches_, batches_.size());
      a["final_loss_scale"] = fmt::format("{:g}", trainer_->LossScale());
    }
    if (!parity_.empty()) a["loss_parity"] = parity_;
    if (!quick_bound_.empty()) a[kQuickBoundAttribute] = quick_bound_;
    return a;
  }

  void TearDown() override {
    micro_.clear();
    batches_.clear();
    trainer_.reset();
  }

 private:
  const ModelDef& def_;
  Precision precision_ = Precision::kFp32;
  std::unique_ptr<Trainer> trainer_;
  common::OptimizerSpec optimizer_;
  std::vector<Batch> batches_;
  std::vector<std::vector<Batch>> micro_;  // batches_ split for gradient accumulation
  int64_t accumulation_ = 1;
  double initial_loss_scale_ = 1;
  size_t calibrated_batches_ = 0;  // of batches_, for the loss scale (--quick may bound it)
  std::string quick_bound_;        // what --quick bounded, for the attribute
  double first_loss_ = 0;  // batch 0's loss before any update
  std::string memory_format_;
  std::string parity_;     // the loss-parity verdict, for the attributes
  int64_t batch_size_ = 0;
  int64_t items_ = 0;           // what throughput counts per step (samples, images or tokens)
  double flops_per_step_ = 0;   // analytic, from the model definition; 0 when unknown
  size_t step_ = 0;
};

}  // namespace

namespace {

// The CPU's feature flags (/proc/cpuinfo), empty where unreadable.
const std::set<std::string>& CpuFlags() {
  static const std::set<std::string> flags = [] {
    std::set<std::string> out;
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("flags", 0) != 0) continue;
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) out.insert(w);
      break;
    }
    return out;
  }();
  return flags;
}

// Why a reduced precision is slow here, when the CPU lacks it natively.
std::string SlowCause(const Params& p, const std::string& device) {
  if (device != "cpu" || CpuFlags().empty()) return "";
  const std::string precision = p.Get("precision");
  const auto has = [](const char* f) { return CpuFlags().count(f) > 0; };
  if (precision == "bf16" && !has("avx512_bf16") && !has("amx_bf16"))
    return "no native bf16 on this CPU, no AVX512-BF16 or AMX-BF16: autocast emulates it";
  if (precision == "fp16" && !has("avx512_fp16") && !has("amx_fp16"))
    return "no native fp16 on this CPU, no AVX512-FP16 or AMX-FP16: autocast emulates it";
  return "";
}

bool Convolutional(const ModelDef& def) { return def.name == "cnn" || def.name == "resnet50"; }

std::vector<Params> Variants(const ModelDef& def, const std::string& size) {
  std::vector<std::pair<std::string, std::vector<std::string>>> axes = {
      {"precision", {"fp32", "tf32", "bf16", "fp16"}}, {"size", {size}}};
  if (Convolutional(def)) axes.push_back({"memory_format", {"channels_last"}});
  return Params::Product(axes);
}

// fp32 is strict IEEE everywhere; tf32 asks for TensorFloat-32; the
// convolutional models let cuDNN pick its algorithms per shape, as
// practitioners train (torch.backends.cudnn.benchmark = True).
MathMode AmpMathMode(const ModelDef& def, const Params& p) {
  MathMode m;
  if (p.Get("precision") == "tf32") m.fp32_precision = "tf32";
  m.cudnn_benchmark = Convolutional(def);
  return m;
}

std::string AmpSkipReason(const Params& p, const std::string& device) {
  if (p.Get("precision") == "tf32" && device != "cuda")
    return "tf32 is a GPU math mode (TensorFloat-32 tensor cores); on a " + device + " fp32 is the reference";
  if (p.Get("precision") == "fp16") return common::LossScalingUnavailable(device);
  return "";
}

WorkloadInfo AmpInfo(const ModelDef& def) {
  WorkloadInfo info;
  info.suite = "amp";
  info.name = def.name;
  info.description = def.description;
  info.metrics = {{"throughput", def.items + "/s", Better::kHigher}, {"step_time", "s", Better::kLower},
                  {"peak_memory", "bytes", Better::kLower},     {"peak_rss", "bytes", Better::kLower},
                  {"loss", "1", Better::kLower},                {"loss_delta", "1", Better::kLower},
                  {"first_loss", "1", Better::kLower},          {"speedup", "ratio", Better::kHigher},
                  {"speedup_tf32", "ratio", Better::kHigher},
                  {"energy", "J", Better::kLower},              {"energy_per_sample", "J/sample", Better::kLower}};
  info.variants = Variants(def, "full");
  info.quick_variants = Variants(def, "quick");
  info.compare_param = "precision";
  info.reference_value = "fp32";
  // On a GPU speed-ups over strict fp32 and over tf32 (what an fp32 run
  // gets there by default); tf32 is skipped elsewhere, and so is speedup_tf32.
  info.derived = {{"speedup", "step_time", DerivedMetric::Kind::kReferenceOverVariant},
                  {"speedup_tf32", "step_time", DerivedMetric::Kind::kReferenceOverVariant, "tf32"},
                  {"loss_delta", "loss", DerivedMetric::Kind::kAbsDifference}};
  info.skip_reason = AmpSkipReason;
  info.slow_cause = SlowCause;
  info.math_mode = [&def](const Params& p) { return AmpMathMode(def, p); };
  if (def.full_batch) {
    info.device_params = [&def](const Params& p, const std::string& device) {
      return p.Get("size") == "full" ? Params{{"batch", std::to_string(def.full_batch(device))}} : Params{};
    };
  }
  // advise: mixed precision, gradient accumulation at the same effective
  // batch (optional param `accumulation`, micro-batches of batch/k), and for
  // the convolutional models the memory format (channels_last by default).
  info.knobs = {{"precision", {{"precision", "fp32"}}, {{{"precision", "bf16"}}, {{"precision", "fp16"}}}},
                {"accumulation", {{"accumulation", "1"}}, {{{"accumulation", "2"}}, {{"accumulation", "4"}}}}};
  if (Convolutional(def))
    info.knobs.push_back({"memory_format", {{"memory_format", "channels_last"}}, {{{"memory_format", "contiguous"}}}});
  return info;
}

bool RegisterAll() {
  for (const ModelDef& def : common::AllModels()) {
    RegisterWorkload(AmpInfo(def), [&def]() -> std::unique_ptr<Workload> { return std::make_unique<AmpWorkload>(def); });
  }
  return true;
}

[[maybe_unused]] const bool registered = RegisterAll();

}  // namespace

}  // namespace perfbench::amp
