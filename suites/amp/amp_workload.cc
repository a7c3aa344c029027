#include "amp_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "common/models.h"
#include "perfbench/workload.h"

namespace perfbench::amp {

double LossTolerance(Precision p) {
  switch (p) {
    case Precision::kFp32: return 0.0;
    case Precision::kBf16: return 0.10;  // 8-bit mantissa
    case Precision::kFp16: return 0.05;  // 11-bit mantissa
  }
  return 0.0;
}

using common::Batch;
using common::MakeBatches;
using common::ParsePrecision;
using common::Trainer;

namespace {

constexpr int kBatchesInPool = 4;  // cycled: the same data for every precision

class AmpWorkload final : public Workload {
 public:
  explicit AmpWorkload(const ModelDef& def) : def_(def) {}

  Status SetUp(const RunContext& ctx) override {
    precision_ = ParsePrecision(ctx.params.Get("precision"));
    const std::string size = ctx.params.Get("size");
    const torch::Device device(ctx.settings.device == "cuda" ? torch::kCUDA : torch::kCPU);
    accumulation_ = ctx.params.GetInt("accumulation", 1);
    channels_last_ = ctx.params.Get("memory_format", "contiguous");
    if (channels_last_ != "contiguous" && channels_last_ != "channels_last")
      return Status::Error("memory_format '" + channels_last_ + "': expected contiguous or channels_last");
    // Same seed -> same initial weights for every precision of the group.
    torch::manual_seed(ctx.settings.seed);
    common::Model model = def_.make(size);
    batches_ = MakeBatches(def_, size, kBatchesInPool, ctx.settings.seed, device);
    if (channels_last_ == "channels_last") common::ToChannelsLast(model, batches_);
    trainer_ = std::make_unique<Trainer>(std::move(model), precision_, device, def_.lr);
    batch_size_ = def_.batch(size);
    items_ = def_.ItemsPerBatch(size);
    flops_per_step_ = def_.FlopsPerStep(size);
    for (const auto& b : batches_) micro_.push_back(common::MicroBatches(b, accumulation_));
    initial_loss_scale_ = trainer_->CalibrateLossScale(batches_);
    return Status::Ok();
  }

  Status RunStep(StepRecorder& rec) override {
    const size_t i = step_++ % batches_.size();
    torch::Tensor loss = accumulation_ == 1 ? trainer_->Step(batches_[i]) : trainer_->Step(micro_[i]);
    rec.SetItemsProcessed(static_cast<double>(items_));
    rec.Add("loss", loss.item<double>());
    return Status::Ok();
  }

  Status Verify(const VerifyContext& ctx) override {
    auto it = ctx.samples.find("loss_delta");
    if (precision_ == Precision::kFp32 || it == ctx.samples.end() || it->second.empty()) return Status::Ok();
    const double worst = *std::max_element(it->second.begin(), it->second.end());
    const double tol = LossTolerance(precision_);
    if (worst > tol)
      return Status::Error(fmt::format("loss parity: |loss - loss(fp32)| reached {:.4g}, tolerance {:.3g}", worst, tol));
    return Status::Ok();
  }

  std::map<std::string, std::string> Attributes() const override {
    std::map<std::string, std::string> a{{"batch_size", std::to_string(batch_size_)}};
    if (accumulation_ > 1) a["micro_batch_size"] = std::to_string(batch_size_ / accumulation_);
    if (flops_per_step_ > 0) a["flops_per_step"] = fmt::format("{:.6g}", flops_per_step_);
    if (precision_ == Precision::kFp16 && trainer_) {
      a["initial_loss_scale"] = fmt::format("{:g} (calibrated in set-up: halved from 2^16 until finite)",
                                            initial_loss_scale_);
      a["final_loss_scale"] = fmt::format("{:g}", trainer_->LossScale());
    }
    if (precision_ != Precision::kFp32) a["loss_tolerance"] = fmt::format("{:g}", LossTolerance(precision_));
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
  std::vector<Batch> batches_;
  std::vector<std::vector<Batch>> micro_;  // batches_ split for gradient accumulation
  int64_t accumulation_ = 1;
  double initial_loss_scale_ = 1;
  std::string channels_last_;
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

WorkloadInfo AmpInfo(const ModelDef& def) {
  WorkloadInfo info;
  info.suite = "amp";
  info.name = def.name;
  info.description = def.description;
  info.metrics = {{"throughput", def.items + "/s", Better::kHigher}, {"step_time", "s", Better::kLower},
                  {"peak_memory", "bytes", Better::kLower},     {"peak_rss", "bytes", Better::kLower},
                  {"loss", "1", Better::kLower},                {"loss_delta", "1", Better::kLower},
                  {"speedup", "ratio", Better::kHigher},        {"energy", "J", Better::kLower},
                  {"energy_per_sample", "J/sample", Better::kLower}};
  info.variants = Params::Product({{"precision", {"fp32", "bf16", "fp16"}}, {"size", {"full"}}});
  info.quick_variants = Params::Product({{"precision", {"fp32", "bf16", "fp16"}}, {"size", {"quick"}}});
  info.compare_param = "precision";
  info.reference_value = "fp32";
  info.derived = {{"speedup", "step_time", DerivedMetric::Kind::kReferenceOverVariant},
                  {"loss_delta", "loss", DerivedMetric::Kind::kAbsDifference}};
  info.skip_reason = [](const Params& p, const std::string& device) -> std::string {
    if (p.Get("precision") == "fp16") return common::LossScalingUnavailable(device);
    return "";
  };
  info.slow_cause = SlowCause;
  // advise: mixed precision, gradient accumulation at the same effective
  // batch (optional param `accumulation`, micro-batches of batch/k), and for
  // the convolutional model the channels-last memory format (optional param
  // `memory_format`).
  info.knobs = {{"precision", {{"precision", "fp32"}}, {{{"precision", "bf16"}}, {{"precision", "fp16"}}}},
                {"accumulation", {{"accumulation", "1"}}, {{{"accumulation", "2"}}, {{"accumulation", "4"}}}}};
  if (def.name == "cnn" || def.name == "resnet50")
    info.knobs.push_back({"memory_format", {{"memory_format", "contiguous"}}, {{{"memory_format", "channels_last"}}}});
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
