#include "common/training.h"

#include <torch/cuda.h>

#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace perfbench::common {

Precision ParsePrecision(const std::string& name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "tf32") return Precision::kTf32;
  if (name == "bf16") return Precision::kBf16;
  if (name == "fp16") return Precision::kFp16;
  throw std::invalid_argument("unknown precision '" + name + "' (fp32, tf32, bf16, fp16)");
}

std::string OptimizerSpec::Text() const {
  std::ostringstream o;
  o << (kind == Kind::kAdamW ? "adamw" : "sgd") << " lr=" << lr;
  if (kind == Kind::kSgd) o << " momentum=" << momentum;
  if (weight_decay > 0) o << " weight_decay=" << weight_decay;
  if (warmup_steps > 0) o << " warmup_steps=" << warmup_steps;
  if (clip_norm > 0) o << " clip_norm=" << clip_norm;
  return o.str();
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

int64_t ModelDef::ItemsPerBatch(const std::string& size, int64_t b) const {
  return (b > 0 ? b : batch(size)) * (items == "tokens" ? sample_shape(size).front() : 1);
}

double ModelDef::FlopsPerStep(const std::string& size, int64_t b) const {
  if (!flops_per_step) return 0;
  static std::mutex mu;
  static std::map<std::string, double> known;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = known.emplace(name + "/" + size, 0.0);
  if (fresh) it->second = flops_per_step(size);
  // Every count is linear in the batch (FLOP per sample times samples).
  return b > 0 ? it->second * static_cast<double>(b) / static_cast<double>(batch(size)) : it->second;
}

std::pair<torch::Tensor, torch::Tensor> TopicTokens(int64_t n, int64_t seq, at::Generator& gen) {
  constexpr int64_t kVocab = 200, kBand = (kVocab - 1) / 10;
  torch::Tensor y = at::randint(0, 10, {n}, gen, torch::kLong);
  torch::Tensor uniform = at::randint(1, kVocab, {n, seq}, gen, torch::kLong);
  torch::Tensor topic = 1 + y.unsqueeze(1) * kBand + at::randint(0, kBand, {n, seq}, gen, torch::kLong);
  torch::Tensor ids = torch::where(at::rand({n, seq}, gen) < 0.3, topic, uniform);
  ids.select(1, 0).zero_();  // [CLS]
  return {ids, y};
}

namespace {

// Token batches of `b` sequences: a causal LM's are uniform ids in [0,
// vocab) labelled with the next token (the last position predicting the
// first); a classifier's are the topic task (TopicTokens), whose class is
// spread over the sequence, not readable off one token.
std::vector<Batch> TokenBatches(const ModelDef& def, const std::string& size, int count, at::Generator& gen,
                                torch::Device device, int64_t b) {
  const int64_t seq = def.sample_shape(size).front();
  std::vector<Batch> out;
  for (int i = 0; i < count; ++i) {
    if (def.causal_lm) {
      torch::Tensor x = at::randint(def.vocab(size), {b, seq}, gen, torch::kLong);
      out.push_back({x.to(device), x.roll(-1, 1).reshape({b * seq}).to(device)});
    } else {
      auto [x, y] = TopicTokens(b, seq, gen);
      out.push_back({x.to(device), y.remainder(def.classes).to(device)});
    }
  }
  return out;
}

}  // namespace

std::vector<Batch> MakeBatches(const ModelDef& def, const std::string& size, int count, uint64_t seed,
                               torch::Device device, int64_t batch) {
  // A private generator: the data must not depend on what else ran before.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x9e3779b97f4a7c15ULL);
  const int64_t b = batch > 0 ? batch : def.batch(size);
  if (def.vocab) return TokenBatches(def, size, count, gen, device, b);
  std::vector<int64_t> shape = def.sample_shape(size);
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

Trainer::Trainer(Model model, Precision precision, torch::Device device, OptimizerSpec spec)
    : model_(std::move(model)), precision_(precision), device_(device), spec_(spec) {
  if (model_.module) {
    model_.module->to(device_);
    params_ = model_.module->parameters();
  } else {
    params_ = model_.parameters;
  }
  if (spec_.kind == OptimizerSpec::Kind::kAdamW) {
    optimizer_ = std::make_unique<torch::optim::AdamW>(
        params_, torch::optim::AdamWOptions(spec_.lr).weight_decay(spec_.weight_decay).eps(1e-6));
  } else {
    optimizer_ = std::make_unique<torch::optim::SGD>(
        params_, torch::optim::SGDOptions(spec_.lr).momentum(spec_.momentum).weight_decay(spec_.weight_decay));
  }
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

torch::Tensor Trainer::LossOf(const Batch& batch) {
  const auto compute = [&] {
    if (model_.loss) return model_.loss(batch).to(torch::kFloat);
    return torch::nn::functional::cross_entropy(model_.forward(batch.x).to(torch::kFloat), batch.y);
  };
  if (precision_ == Precision::kFp32 || precision_ == Precision::kTf32) return compute();
  AutocastGuard guard(device_.type(), precision_ == Precision::kBf16 ? at::kBFloat16 : at::kHalf);
  return compute();
}

double Trainer::Loss(const Batch& batch) {
  torch::NoGradGuard no_grad;
  return LossOf(batch).item<double>();
}

torch::Tensor Trainer::Accumulate(const Batch& batch, double weight) {
  const torch::Tensor loss = LossOf(batch);
  // Backward outside the autocast region, as in Python.
  torch::Tensor scaled = weight == 1.0 ? loss : loss * weight;
  if (precision_ == Precision::kFp16) scaled = scaled * scale_;
  scaled.backward();
  return loss.detach();
}

void InitTransformerWeights(torch::nn::Module& module, double std) {
  torch::NoGradGuard no_grad;
  for (auto& m : module.modules(/*include_self=*/true)) {
    if (auto* linear = m->as<torch::nn::LinearImpl>()) {
      linear->weight.normal_(0.0, std);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* embedding = m->as<torch::nn::EmbeddingImpl>()) {
      embedding->weight.normal_(0.0, std);
    }
  }
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
  if (spec_.kind != OptimizerSpec::Kind::kSgd) throw std::logic_error("Trainer::Save supports SGD only");
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
  if (spec_.kind != OptimizerSpec::Kind::kSgd) throw std::logic_error("Trainer::Restore supports SGD only");
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
    Update();
    return;
  }
  torch::Tensor found_inf = UnscaleGradients();
  // .item() synchronises, exactly as Python's GradScaler.step does.
  if (found_inf.item<float>() == 0.0f) {
    Update();
  } else {
    ++updates_;  // a skipped step still advances the schedule
  }
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf, 2.0, 0.5, 2000);
}

void Trainer::Update() {
  if (spec_.warmup_steps > 0) {
    const double f = std::min(1.0, static_cast<double>(updates_ + 1) / static_cast<double>(spec_.warmup_steps));
    for (auto& group : optimizer_->param_groups()) group.options().set_lr(spec_.lr * f);
  }
  if (spec_.clip_norm > 0) torch::nn::utils::clip_grad_norm_(params_, spec_.clip_norm);
  optimizer_->step();
  ++updates_;
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

double Trainer::CalibrateLossScale(const std::vector<Batch>& batches, double max_seconds, size_t* calibrated) {
  if (calibrated) *calibrated = 0;
  if (precision_ != Precision::kFp16) return 1.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& batch : batches) {
    for (int tries = 0; tries < 24; ++tries) {
      ForwardBackward(batch);
      if (UnscaleGradients().item<float>() == 0.0f) break;  // the step's own check
      scale_.mul_(0.5);
    }
    if (calibrated) ++*calibrated;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > max_seconds) break;
  }
  optimizer_->zero_grad(/*set_to_none=*/true);
  return LossScale();
}

double Trainer::LossScale() const { return scale_.defined() ? scale_.item<double>() : 1.0; }

}  // namespace perfbench::common
