#include "amp_workload.h"

#include <map>

#include <algorithm>
#include <cstdio>
#include <memory>

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

namespace {

constexpr int kBatchesInPool = 4;  // cycled: the same data for every precision

class AmpWorkload final : public Workload {
 public:
  explicit AmpWorkload(const ModelDef& def) : def_(def) {}

  Status SetUp(const RunContext& ctx) override {
    precision_ = ParsePrecision(ctx.params.Get("precision"));
    const std::string size = ctx.params.Get("size");
    const torch::Device device(ctx.device == "cuda" ? torch::kCUDA : torch::kCPU);
    // Same seed -> same initial weights for every precision of the group.
    torch::manual_seed(ctx.seed);
    trainer_ = std::make_unique<Trainer>(def_.make(size), precision_, device);
    batches_ = MakeBatches(def_, size, kBatchesInPool, ctx.seed, device);
    batch_size_ = def_.batch(size);
    return Status::Ok();
  }

  Status RunStep(StepRecorder& rec) override {
    const Batch& b = batches_[step_++ % batches_.size()];
    torch::Tensor loss = trainer_->Step(b);
    rec.SetItemsProcessed(static_cast<double>(batch_size_));
    rec.Add("loss", loss.item<double>());
    return Status::Ok();
  }

  Status Verify(const VerifyContext& ctx) override {
    auto it = ctx.samples.find("loss_delta");
    if (precision_ == Precision::kFp32 || it == ctx.samples.end() || it->second.empty()) return Status::Ok();
    const double worst = *std::max_element(it->second.begin(), it->second.end());
    const double tol = LossTolerance(precision_);
    if (worst > tol) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "loss parity: |loss - loss(fp32)| reached %.4g, tolerance %.3g", worst, tol);
      return Status::Error(msg);
    }
    return Status::Ok();
  }

  std::map<std::string, std::string> Attributes() const override {
    std::map<std::string, std::string> a{{"batch_size", std::to_string(batch_size_)}};
    if (precision_ == Precision::kFp16 && trainer_) a["final_loss_scale"] = std::to_string(trainer_->LossScale());
    if (precision_ != Precision::kFp32) {
      char tol[32];
      std::snprintf(tol, sizeof tol, "%g", LossTolerance(precision_));
      a["loss_tolerance"] = tol;
    }
    return a;
  }

  void TearDown() override {
    batches_.clear();
    trainer_.reset();
  }

 private:
  const ModelDef& def_;
  Precision precision_ = Precision::kFp32;
  std::unique_ptr<Trainer> trainer_;
  std::vector<Batch> batches_;
  int64_t batch_size_ = 0;
  size_t step_ = 0;
};

}  // namespace

namespace {
std::map<std::string, std::shared_ptr<const ModelDef>>& ModelDefs() {
  static std::map<std::string, std::shared_ptr<const ModelDef>> defs;
  return defs;
}
}  // namespace

const ModelDef* FindModelDef(const std::string& name) {
  auto it = ModelDefs().find(name);
  return it == ModelDefs().end() ? nullptr : it->second.get();
}

bool RegisterAmpWorkload(ModelDef def) {
  auto shared = std::make_shared<const ModelDef>(std::move(def));
  ModelDefs()[shared->name] = shared;
  WorkloadInfo info;
  info.suite = "amp";
  info.name = shared->name;
  info.description = shared->description;
  info.metrics = {{"throughput", "samples/s", Better::kHigher}, {"step_time", "s", Better::kLower},
                  {"peak_memory", "bytes", Better::kLower},     {"peak_rss", "bytes", Better::kLower},
                  {"loss", "1", Better::kLower},                {"loss_delta", "1", Better::kLower},
                  {"speedup", "ratio", Better::kHigher}};
  info.variants = Params::Product({{"precision", {"fp32", "bf16", "fp16"}}, {"size", {"full"}}});
  info.quick_variants = Params::Product({{"precision", {"fp32", "bf16", "fp16"}}, {"size", {"quick"}}});
  info.compare_param = "precision";
  info.reference_value = "fp32";
  info.skip_reason = [](const Params& p, const std::string& device) -> std::string {
    if (p.Get("precision") == "fp16") return LossScalingUnavailable(device);
    return "";
  };
  return RegisterWorkload(std::move(info), [shared]() -> std::unique_ptr<Workload> {
    return std::make_unique<AmpWorkload>(*shared);
  });
}

}  // namespace perfbench::amp
