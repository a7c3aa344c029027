#include "quant_model.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/synthetic_images.h"

namespace perfbench::quant {
namespace {

// Boxed calls: robust to the exact C++ signature the kernels register.
c10::IValue Call(const char* name, const char* overload, std::vector<c10::IValue> args) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  torch::jit::Stack stack(std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  op.callBoxed(&stack);
  return std::move(stack[0]);
}

torch::Tensor QuantizeWeight(const torch::Tensor& w) {
  const double scale = std::max(w.abs().max().item<double>(), 1e-8) / 127.0;
  return at::quantize_per_tensor(w, scale, 0, at::kQInt8);
}

struct Sizes {
  int64_t in, hidden, image, train, calib, test, steps, batch;
};
Sizes SizesFor(const std::string& name, const std::string& size) {
  const bool quick = size == "quick";
  if (name == "mlp") return quick ? Sizes{64, 256, 0, 8192, 512, 2048, 1200, 256} : Sizes{256, 1024, 0, 32768, 1024, 8192, 2000, 256};
  return quick ? Sizes{0, 0, 16, 4096, 512, 2048, 300, 128} : Sizes{0, 0, 32, 8192, 1024, 4096, 500, 128};
}

}  // namespace

std::string SelectQEngine() {
  const auto& engines = at::globalContext().supportedQEngines();
  for (auto want : {at::QEngine::X86, at::QEngine::FBGEMM, at::QEngine::ONEDNN, at::QEngine::QNNPACK}) {
    if (std::find(engines.begin(), engines.end(), want) != engines.end()) {
      at::globalContext().setQEngine(want);
      return c10::toString(want);
    }
  }
  throw std::runtime_error("this LibTorch has no quantized engine");
}

QParams ActivationQParams(double lo, double hi, bool reduce_range) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  const double qmax = reduce_range ? 127 : 255;
  QParams q;
  q.scale = std::max((hi - lo) / qmax, 1e-8);
  q.zero_point = std::clamp<int64_t>(static_cast<int64_t>(std::lround(-lo / q.scale)), 0, static_cast<int64_t>(qmax));
  return q;
}

QuantModel::QuantModel(const std::string& name, const std::string& size, uint64_t seed) : name_(name), size_(size) {
  if (name != "mlp" && name != "cnn") throw std::invalid_argument("unknown quant model '" + name + "'");
  Train(seed);
}

int64_t QuantModel::input_features() const {
  return name_ == "mlp" ? data_.test_x.size(1) : 3 * image_ * image_;
}

namespace {

// A learnable task: a fixed random two-layer teacher (mlp), or the shared
// synthetic images under heavy pixel noise (cnn), so held-out accuracy has
// room to move.
std::pair<torch::Tensor, torch::Tensor> MakeTask(const std::string& name, const Sizes& s, uint64_t seed, int64_t n) {
  if (name == "mlp") {
    auto x = torch::randn({n, s.in});
    auto w1 = torch::randn({s.in, 64}) / std::sqrt(double(s.in));
    auto w2 = torch::randn({64, 10});
    return {x, torch::relu(x.mm(w1)).mm(w2).argmax(1)};
  }
  auto x = torch::empty({n, 3, s.image, s.image});
  auto y = torch::empty({n}, torch::kInt64);
  std::vector<uint8_t> rgb;
  for (int64_t i = 0; i < n; ++i) {
    int64_t label = 0;
    common::SynthesizeImage(seed, i, s.image, 10, &rgb, &label);
    x[i] = torch::from_blob(rgb.data(), {s.image, s.image, 3}, torch::kUInt8).permute({2, 0, 1}).to(torch::kFloat32)
               .div(255.0).sub(0.5).div(0.25);
    y[i] = label;
  }
  x.add_(torch::randn(x.sizes()) * 3.0);
  return {x, y};
}

}  // namespace

void QuantModel::Train(uint64_t seed) {
  torch::NoGradGuard outer;  // re-enabled in Fit only
  const Sizes s = SizesFor(name_, size_);
  torch::manual_seed(static_cast<int64_t>(seed));
  const int64_t n = s.train + s.calib + s.test;
  if (name_ != "mlp") image_ = s.image;
  auto [x, y] = MakeTask(name_, s, seed, n);
  data_.train_x = x.slice(0, 0, s.train);
  data_.train_y = y.slice(0, 0, s.train);
  data_.calib_x = x.slice(0, s.train, s.train + s.calib);
  data_.test_x = x.slice(0, s.train + s.calib, n);
  data_.test_y = y.slice(0, s.train + s.calib, n);
  InitLayers(s.in, s.hidden, s.image);
  Fit(s.steps, s.batch, s.train);
}

// Layers, initialised like torch::nn's defaults (seeded by Train).
void QuantModel::InitLayers(int64_t in, int64_t hidden, int64_t image) {
  auto add = [&](const std::string& nm, bool conv, std::vector<int64_t> wshape, bool relu, bool pool) {
    Layer l;
    l.name = nm;
    l.conv = conv;
    l.relu_after = relu;
    l.pool_after = pool;
    int64_t fan_in = 1;
    for (size_t i = 1; i < wshape.size(); ++i) fan_in *= wshape[i];
    const double bound = 1.0 / std::sqrt(double(fan_in));
    l.weight = torch::empty(wshape).uniform_(-bound, bound);
    l.bias = torch::empty({wshape[0]}).uniform_(-bound, bound);
    layers_.push_back(l);
  };
  if (name_ == "mlp") {
    add("fc1", false, {hidden, in}, true, false);
    add("fc2", false, {hidden, hidden}, true, false);
    add("fc3", false, {10, hidden}, false, false);
  } else {
    add("conv1", true, {16, 3, 3, 3}, true, true);
    add("conv2", true, {32, 16, 3, 3}, true, true);
    add("fc", false, {10, 32 * (image / 4) * (image / 4)}, false, false);
  }
}

// Adam on the training split, then the weights are frozen.
void QuantModel::Fit(int64_t steps, int64_t batch, int64_t train) {
  std::vector<torch::Tensor> params;
  for (auto& l : layers_) {
    l.weight.set_requires_grad(true);
    l.bias.set_requires_grad(true);
    params.push_back(l.weight);
    params.push_back(l.bias);
  }
  torch::optim::Adam opt(params, torch::optim::AdamOptions(2e-3));
  torch::GradMode::set_enabled(true);
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t start = (step * batch) % (train - batch);
    auto xb = data_.train_x.slice(0, start, start + batch);
    auto yb = data_.train_y.slice(0, start, start + batch);
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(Run(xb, 0), yb);
    loss.backward();
    opt.step();
  }
  torch::GradMode::set_enabled(false);
  for (auto& l : layers_) {
    l.weight = l.weight.detach();
    l.bias = l.bias.detach();
  }
}

torch::Tensor QuantModel::Run(const torch::Tensor& input, int mode) const {
  torch::Tensor x = input.device() == device_ ? input : input.to(device_);
  if (mode == 2) {
    const QParams& q = act_.at(layers_.front().name + ".in");
    x = at::quantize_per_tensor(x.contiguous(), q.scale, q.zero_point, at::kQUInt8);
  }
  for (const auto& l : layers_) {
    if (!l.conv && x.dim() > 2) x = x.reshape({x.size(0), -1});
    if (mode == 2) {
      const QParams& out = act_.at(l.name + ".out");
      if (l.conv)
        x = Call(l.relu_after ? "quantized::conv2d_relu" : "quantized::conv2d", "new",
                 {x, l.packed, out.scale, out.zero_point})
                .toTensor();
      else
        x = Call(l.relu_after ? "quantized::linear_relu" : "quantized::linear", "",
                 {x, l.packed, out.scale, out.zero_point})
                .toTensor();
      // Every argument spelled out: the quantized kernel reads two dilation values.
      if (l.pool_after) x = at::max_pool2d(x, {2, 2}, {2, 2}, {0, 0}, {1, 1});
      continue;
    }
    if (l.conv) {
      x = torch::conv2d(x, l.weight, l.bias, 1, 1);
    } else if (mode == 3) {
      const int64_t m = x.size(0), n = l.weight.size(0);
      auto sx = x.abs().amax(1, /*keepdim=*/true).clamp_min(1e-8) / 127.0;
      auto xq = (x / sx).round().clamp(-127, 127).to(torch::kInt8);
      if (m <= 16) xq = torch::cat({xq, torch::zeros({17 - m, xq.size(1)}, xq.options())});  // CUDA: M > 16
      auto acc = at::_int_mm(xq, l.wq_t).slice(0, 0, m).slice(1, 0, n);
      x = acc.to(torch::kFloat32) * sx * l.w_scale.slice(0, 0, n) + l.bias;
    } else if (mode == 1) {
      x = Call("quantized::linear_dynamic", "", {x, l.packed, reduce_range_}).toTensor();
    } else {
      x = torch::nn::functional::linear(x, l.weight, l.bias);
    }
    if (l.relu_after) x = torch::relu(x);
    if (l.pool_after) x = torch::max_pool2d(x, {2, 2});
  }
  return mode == 2 ? x.dequantize() : x;
}

torch::Tensor QuantModel::Fp32(const torch::Tensor& x) const { return Run(x, 0); }
torch::Tensor QuantModel::Int8Dynamic(const torch::Tensor& x) const { return Run(x, 1); }
torch::Tensor QuantModel::Int8Static(const torch::Tensor& x) const { return Run(x, 2); }
torch::Tensor QuantModel::Int8IntMm(const torch::Tensor& x) const { return Run(x, 3); }

void QuantModel::PrepareIntMm() {
  torch::NoGradGuard no_grad;
  for (auto& l : layers_) {
    if (l.conv) continue;
    const auto w = l.weight.to(torch::kCPU);
    const int64_t n = w.size(0), npad = (n + 7) / 8 * 8;
    auto scale = w.abs().amax(1).clamp_min(1e-8) / 127.0;  // per output channel
    auto wq = (w / scale.unsqueeze(1)).round().clamp(-127, 127).to(torch::kInt8);
    if (npad > n) {
      wq = torch::cat({wq, torch::zeros({npad - n, wq.size(1)}, wq.options())});
      scale = torch::cat({scale, torch::ones({npad - n})});
    }
    l.wq_t = wq.t().contiguous().to(device_);
    l.w_scale = scale.to(device_);
  }
}

void QuantModel::To(const torch::Device& device) {
  device_ = device;
  for (auto& l : layers_) {
    l.weight = l.weight.to(device);
    l.bias = l.bias.to(device);
    if (l.wq_t.defined()) l.wq_t = l.wq_t.to(device);
    if (l.w_scale.defined()) l.w_scale = l.w_scale.to(device);
  }
}

void QuantModel::PrepareDynamic() {
  const std::string engine = c10::toString(at::globalContext().qEngine());
  reduce_range_ = engine == "FBGEMM" || engine == "X86";
  for (auto& l : layers_)
    if (!l.conv) l.packed = Call("quantized::linear_prepack", "", {QuantizeWeight(l.weight), std::optional<at::Tensor>(l.bias)});
}

std::map<std::string, torch::Tensor> QuantModel::Observe(const torch::Tensor& input) const {
  std::map<std::string, torch::Tensor> seen;
  torch::Tensor x = input;
  for (const auto& l : layers_) {
    if (!l.conv && x.dim() > 2) x = x.reshape({x.size(0), -1});
    seen[l.name + ".in"] = x;
    x = l.conv ? torch::conv2d(x, l.weight, l.bias, 1, 1) : torch::nn::functional::linear(x, l.weight, l.bias);
    if (l.relu_after) x = torch::relu(x);
    seen[l.name + ".out"] = x;  // after the fused ReLU, before pooling (pooling keeps the range)
    if (l.pool_after) x = torch::max_pool2d(x, {2, 2});
  }
  return seen;
}

void QuantModel::Calibrate(Observer observer, double miscalibrate) {
  const std::string engine = c10::toString(at::globalContext().qEngine());
  reduce_range_ = engine == "FBGEMM" || engine == "X86";
  act_.clear();
  for (const auto& [key, t] : Observe(data_.calib_x)) {
    double lo, hi;
    if (observer == Observer::kMinMax) {
      lo = t.min().item<double>();
      hi = t.max().item<double>();
    } else {
      // 0.01th and 99.99th percentiles: one stray value cannot stretch the scale.
      auto flat = std::get<0>(t.reshape(-1).sort());
      const int64_t n = flat.size(0);
      lo = flat[std::clamp<int64_t>(static_cast<int64_t>(std::floor(0.0001 * (n - 1))), 0, n - 1)].item<double>();
      hi = flat[std::clamp<int64_t>(static_cast<int64_t>(std::ceil(0.9999 * (n - 1))), 0, n - 1)].item<double>();
    }
    QParams q = ActivationQParams(lo, hi, reduce_range_);
    q.scale *= miscalibrate;
    act_[key] = q;
  }
  for (auto& l : layers_) {
    auto qw = QuantizeWeight(l.weight);
    if (l.conv) {
      const std::vector<int64_t> ones = {1, 1};
      l.packed = Call("quantized::conv2d_prepack", "",
                      {qw, std::optional<at::Tensor>(l.bias), c10::IValue(ones), c10::IValue(ones), c10::IValue(ones),
                       int64_t{1}});
    } else {
      l.packed = Call("quantized::linear_prepack", "", {qw, std::optional<at::Tensor>(l.bias)});
    }
  }
}

double QuantModel::Accuracy(const std::string& precision) const {
  torch::InferenceMode guard;
  torch::Tensor logits;
  const int mode = precision == "fp32" ? 0 : precision == "int8_dynamic" ? 1 : precision == "int8_intmm" ? 3 : 2;
  // In chunks: the static conv path allocates per call.
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < data_.test_x.size(0); i += 512)
    parts.push_back(Run(data_.test_x.slice(0, i, std::min(i + 512, data_.test_x.size(0))), mode));
  logits = torch::cat(parts).to(torch::kCPU);
  return logits.argmax(1).eq(data_.test_y).to(torch::kFloat64).mean().item<double>();
}

int64_t QuantModel::ModelBytes(const std::string& precision) const {
  int64_t bytes = 0;
  for (const auto& l : layers_) {
    const bool dynamic = precision == "int8_dynamic" || precision == "int8_intmm";
    const bool int8 = precision != "fp32" && (!dynamic || !l.conv);
    bytes += l.weight.numel() * (int8 ? 1 : 4) + l.bias.numel() * 4;
    if (precision == "int8_intmm" && int8)
      bytes += l.weight.size(0) * 4;  // a scale per output channel
    else if (int8)
      bytes += 8;  // one scale (fp32) and zero point (int32) per weight tensor
  }
  return bytes;
}

}  // namespace perfbench::quant
