#include "common/training.h"

#include <torch/cuda.h>

#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <mutex>
#include <stdexcept>

namespace perfbench::common {

Precision ParsePrecision(const std::string& name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "bf16") return Precision::kBf16;
  if (name == "fp16") return Precision::kFp16;
  throw std::invalid_argument("unknown precision '" + name + "' (fp32, bf16, fp16)");
}

AutocastGuard::AutocastGuard(c10::DeviceType device, at::ScalarType dtype) : device_(device) {
  prev_cache_ = at::autocast::is_autocast_cache_enabled();
  prev_enabled_ = at::autocast::is_autocast_enabled(device_);
  prev_dtype_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::set_autocast_dtype(device_, dtype);
  at::autocast::increment_nesting();
  at::autocast::set_autocast_cache_enabled(true);
}

AutocastGuard::~AutocastGuard() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, prev_enabled_);
  at::autocast::set_autocast_dtype(device_, prev_dtype_);
  at::autocast::set_autocast_cache_enabled(prev_cache_);
}

std::string LossScalingUnavailable(const std::string& device) {
  const auto key = device == "cuda" ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU;
  for (const char* op : {"aten::_amp_foreach_non_finite_check_and_unscale_", "aten::_amp_update_scale_"}) {
    auto handle = c10::Dispatcher::singleton().findOp({op, ""});
    if (!handle || !handle->hasKernelForDispatchKey(key))
      return std::string(op) + " has no " + device + " kernel in this LibTorch";
  }
  return "";
}

int64_t ModelDef::ItemsPerBatch(const std::string& size) const {
  return batch(size) * (items == "tokens" ? sample_shape(size).front() : 1);
}

double ModelDef::FlopsPerStep(const std::string& size) const {
  if (!flops_per_step) return 0;
  static std::mutex mu;
  static std::map<std::string, double> known;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = known.emplace(name + "/" + size, 0.0);
  if (fresh) it->second = flops_per_step(size);
  return it->second;
}

namespace {

// Token batches: ids uniform in [0, vocab); labels the next token (causal
// LM, the last position predicting the first) or the first token's id
// modulo the classes (learnable: the class is in the input).
std::vector<Batch> TokenBatches(const ModelDef& def, const std::string& size, int count, at::Generator& gen,
                                torch::Device device) {
  const int64_t b = def.batch(size), seq = def.sample_shape(size).front();
  std::vector<Batch> out;
  for (int i = 0; i < count; ++i) {
    torch::Tensor x = at::randint(def.vocab(size), {b, seq}, gen, torch::kLong);
    torch::Tensor y = def.causal_lm ? x.roll(-1, 1).reshape({b * seq}) : x.select(1, 0).remainder(def.classes);
    out.push_back({x.to(device), y.to(device)});
  }
  return out;
}

}  // namespace

std::vector<Batch> MakeBatches(const ModelDef& def, const std::string& size, int count, uint64_t seed,
                               torch::Device device) {
  // A private generator: the data must not depend on what else ran before.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x9e3779b97f4a7c15ULL);
  if (def.vocab) return TokenBatches(def, size, count, gen, device);
  std::vector<int64_t> shape = def.sample_shape(size);
  const int64_t b = def.batch(size);
  int64_t features = 1;
  for (auto d : shape) features *= d;
  // A teacher over every input feature, or, for large images (ResNet-50 at
  // 224x224 and 1000 classes would need a 600 MB teacher), over the image
  // average-pooled to 3x4x4.
  const bool pooled = shape.size() == 3 && features * def.classes > (int64_t{1} << 24);
  const int64_t taught = pooled ? shape[0] * 16 : features;
  torch::Tensor teacher = at::randn({taught, def.classes}, gen, torch::kFloat);
  std::vector<Batch> out;
  for (int i = 0; i < count; ++i) {
    std::vector<int64_t> full{b};
    full.insert(full.end(), shape.begin(), shape.end());
    torch::Tensor x = at::randn(full, gen, torch::kFloat);
    torch::Tensor seen = pooled ? torch::adaptive_avg_pool2d(x, {4, 4}) : x;
    torch::Tensor y = seen.reshape({b, taught}).matmul(teacher).argmax(1);
    out.push_back({x.to(device), y.to(device)});
  }
  return out;
}

Trainer::Trainer(Model model, Precision precision, torch::Device device, double lr)
    : model_(std::move(model)), precision_(precision), device_(device) {
  model_.module->to(device_);
  params_ = model_.module->parameters();
  optimizer_ = std::make_unique<torch::optim::SGD>(params_, torch::optim::SGDOptions(lr).momentum(0.9));
  if (precision_ == Precision::kFp16) {
    // Python GradScaler's defaults: init 2^16, growth 2, backoff 0.5, interval 2000.
    scale_ = torch::full({1}, 65536.0f, torch::TensorOptions().device(device_));
    growth_tracker_ = torch::zeros({1}, torch::TensorOptions().dtype(torch::kInt32).device(device_));
  }
}

torch::Tensor Trainer::ForwardBackward(const Batch& batch) {
  optimizer_->zero_grad(/*set_to_none=*/true);
  return Accumulate(batch, 1.0);
}

torch::Tensor Trainer::Step(const std::vector<Batch>& micro_batches) {
  optimizer_->zero_grad(/*set_to_none=*/true);
  const double weight = 1.0 / static_cast<double>(micro_batches.size());
  torch::Tensor total;
  for (const auto& b : micro_batches) {
    torch::Tensor loss = Accumulate(b, weight);
    total = total.defined() ? total + loss : loss;
  }
  OptimizerStep();
  return total * weight;
}

torch::Tensor Trainer::Accumulate(const Batch& batch, double weight) {
  torch::Tensor loss;
  if (precision_ == Precision::kFp32) {
    loss = torch::nn::functional::cross_entropy(model_.forward(batch.x), batch.y);
  } else {
    const auto dtype = precision_ == Precision::kBf16 ? at::kBFloat16 : at::kHalf;
    AutocastGuard guard(device_.type(), dtype);
    torch::Tensor logits = model_.forward(batch.x);
    loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), batch.y);
  }
  // Backward outside the autocast region, as in Python.
  torch::Tensor scaled = weight == 1.0 ? loss : loss * weight;
  if (precision_ == Precision::kFp16) scaled = scaled * scale_;
  scaled.backward();
  return loss.detach();
}

std::vector<Batch> MicroBatches(const Batch& batch, int64_t parts) {
  const int64_t n = batch.x.size(0);
  if (parts < 1 || n % parts != 0)
    throw std::invalid_argument("a batch of " + std::to_string(n) + " does not split into " + std::to_string(parts) +
                                " equal micro-batches");
  std::vector<Batch> out;
  auto xs = batch.x.chunk(parts, 0), ys = batch.y.chunk(parts, 0);
  for (int64_t i = 0; i < parts; ++i) out.push_back({xs[static_cast<size_t>(i)], ys[static_cast<size_t>(i)]});
  return out;
}

void ToChannelsLast(Model& model, std::vector<Batch>& batches) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.module->parameters())
    if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
  for (auto& b : batches)
    if (b.x.dim() == 4) b.x = b.x.contiguous(at::MemoryFormat::ChannelsLast);
}

void SynchronizeDevice(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

Trainer::State Trainer::Save() const {
  torch::NoGradGuard no_grad;
  State s;
  for (const auto& p : params_) {
    s.params.push_back(p.detach().clone());
    auto it = optimizer_->state().find(p.unsafeGetTensorImpl());
    torch::Tensor m;
    if (it != optimizer_->state().end())
      m = static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer().clone();
    s.momentum.push_back(m);
  }
  return s;
}

void Trainer::Restore(const State& s) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i].copy_(s.params[i]);
    auto it = optimizer_->state().find(params_[i].unsafeGetTensorImpl());
    if (it == optimizer_->state().end()) continue;
    auto& st = static_cast<torch::optim::SGDParamState&>(*it->second);
    if (s.momentum[i].defined())
      st.momentum_buffer().copy_(s.momentum[i]);
    else
      optimizer_->state().erase(it);  // no momentum yet before the step
  }
}

void Trainer::OptimizerStep() {
  if (precision_ != Precision::kFp16) {
    optimizer_->step();
    return;
  }
  torch::Tensor found_inf = UnscaleGradients();
  // .item() synchronises, exactly as Python's GradScaler.step does.
  if (found_inf.item<float>() == 0.0f) optimizer_->step();
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf, 2.0, 0.5, 2000);
}

torch::Tensor Trainer::UnscaleGradients() {
  std::vector<torch::Tensor> grads;
  for (auto& p : params_)
    if (p.grad().defined()) grads.push_back(p.grad());
  torch::Tensor found_inf = torch::zeros({1}, torch::TensorOptions().device(device_));
  torch::Tensor inv_scale = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);
  return found_inf;
}

double Trainer::CalibrateLossScale(const std::vector<Batch>& batches) {
  if (precision_ != Precision::kFp16) return 1.0;
  for (const auto& batch : batches) {
    for (int tries = 0; tries < 24; ++tries) {
      ForwardBackward(batch);
      if (UnscaleGradients().item<float>() == 0.0f) break;  // the step's own check
      scale_.mul_(0.5);
    }
  }
  optimizer_->zero_grad(/*set_to_none=*/true);
  return LossScale();
}

double Trainer::LossScale() const { return scale_.defined() ? scale_.item<double>() : 1.0; }

}  // namespace perfbench::common
