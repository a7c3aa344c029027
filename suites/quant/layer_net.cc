#include "layer_net.h"

#include <cmath>

#include "weight_store.h"

namespace perfbench::quant {
namespace {

struct Sizes {
  int64_t in, hidden, image, train, calib, test, steps, batch;
};
Sizes SizesFor(const std::string& name, const std::string& size) {
  const bool quick = size == "quick";
  if (name == "mlp") return quick ? Sizes{64, 256, 0, 8192, 512, 2048, 1200, 256} : Sizes{256, 1024, 0, 32768, 1024, 8192, 2000, 256};
  return quick ? Sizes{0, 0, 16, 4096, 512, 2048, 300, 128} : Sizes{0, 0, 32, 8192, 1024, 4096, 500, 128};
}

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
  return NoisyImages(seed, n, s.image, 3.0);
}

}  // namespace

LayerNet::LayerNet(const std::string& name, const std::string& size, uint64_t seed) : name_(name) {
  if (name != "mlp" && name != "cnn") throw std::invalid_argument("unknown layer model '" + name + "'");
  torch::NoGradGuard no_grad;  // re-enabled while fitting only
  const Sizes s = SizesFor(name_, size);
  torch::manual_seed(static_cast<int64_t>(seed));
  auto [x, y] = MakeTask(name_, s, seed, s.train + s.calib + s.test);
  data_ = SplitTask(x, y, s.train, s.calib);
  InitLayers(s.in, s.hidden, s.image);
  std::vector<torch::Tensor> params;
  for (auto& l : layers_) {
    params.push_back(l.weight.set_requires_grad(true));
    params.push_back(l.bias.set_requires_grad(true));
  }
  weights_loaded_ = FitClassifier(
      params, [this](const torch::Tensor& xb) { return Float(xb, Mode::kFp32, nullptr); }, data_, s.steps, s.batch,
      2e-3, TrainedWeightsKey(name_, size, seed));
  for (auto& l : layers_) {
    l.weight = l.weight.detach();
    l.bias = l.bias.detach();
  }
}

// Layers, initialised like torch::nn's defaults (seeded by the constructor).
void LayerNet::InitLayers(int64_t in, int64_t hidden, int64_t image) {
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

torch::Tensor LayerNet::Forward(const torch::Tensor& x, Mode mode) const {
  if (mode == Mode::kStatic) return Static(x.device() == device_ ? x : x.to(device_));
  return Logits(Float(In(x), mode, nullptr));
}

// fp32, dynamic and _int_mm: float activations between layers. With an
// observer, every layer's input and output (after the fused ReLU, before
// pooling: pooling keeps the range) are recorded.
torch::Tensor LayerNet::Float(torch::Tensor x, Mode mode, ActivationObserver* observer) const {
  for (const auto& l : layers_) {
    if (!l.conv && x.dim() > 2) x = x.reshape({x.size(0), -1});
    if (observer) observer->Record(l.name + ".in", x);
    if (l.conv) x = torch::conv2d(x, l.weight, l.bias, 1, 1);
    else if (mode == Mode::kLowp) x = l.lowp(x);
    else if (mode == Mode::kDynamic) x = CallOp("quantized::linear_dynamic", "", {x, l.packed, reduce_range_}).toTensor();
    else x = torch::nn::functional::linear(x, l.weight, l.bias);
    if (l.relu_after) x = torch::relu(x);
    if (observer) observer->Record(l.name + ".out", x);
    if (l.pool_after) x = torch::max_pool2d(x, {2, 2});
  }
  return x;
}

torch::Tensor LayerNet::Static(torch::Tensor x) const {
  const QParams& q = act_.at(layers_.front().name + ".in");
  x = at::quantize_per_tensor(x.contiguous(), q.scale, q.zero_point, at::kQUInt8);
  for (const auto& l : layers_) {
    if (!l.conv && x.dim() > 2) x = x.reshape({x.size(0), -1});
    const QParams& out = act_.at(l.name + ".out");
    const char* op = l.conv ? (l.relu_after ? "quantized::conv2d_relu" : "quantized::conv2d")
                            : (l.relu_after ? "quantized::linear_relu" : "quantized::linear");
    x = CallOp(op, l.conv ? "new" : "", {x, l.packed, out.scale, out.zero_point}).toTensor();
    // Every argument spelled out: the quantized kernel reads two dilation values.
    if (l.pool_after) x = at::max_pool2d(x, {2, 2}, {2, 2}, {0, 0}, {1, 1});
  }
  return x.dequantize();
}

void LayerNet::PrepareHalf(torch::ScalarType dtype) {
  act_dtype_ = dtype;
  for (auto& l : layers_) {
    l.weight = l.weight.to(dtype);
    l.bias = l.bias.to(dtype);
  }
}

void LayerNet::PrepareLowp(const LowpSpec& spec) {
  act_dtype_ = spec.activations;
  for (auto& l : layers_) {
    if (!l.conv) l.lowp = LowpLinear::Prepare(l.weight, l.bias, spec);
    l.weight = l.weight.to(spec.activations);
    l.bias = l.bias.to(spec.activations);
  }
}

void LayerNet::To(const torch::Device& device) {
  device_ = device;
  for (auto& l : layers_) {
    l.weight = l.weight.to(device);
    l.bias = l.bias.to(device);
  }
}

void LayerNet::PrepareDynamic() {
  reduce_range_ = EngineWantsReducedRange();
  for (auto& l : layers_)
    if (!l.conv)
      l.packed = CallOp("quantized::linear_prepack", "", {QuantizeWeight(l.weight), std::optional<at::Tensor>(l.bias)});
}

void LayerNet::Calibrate(Observer observer, double miscalibrate) {
  torch::NoGradGuard no_grad;
  reduce_range_ = EngineWantsReducedRange();
  ActivationObserver seen;
  Float(data_.calib_x, Mode::kFp32, &seen);
  act_ = seen.Finish(observer, reduce_range_, miscalibrate);
  for (auto& l : layers_) {
    auto qw = QuantizeWeight(l.weight);
    const std::vector<int64_t> ones = {1, 1};
    l.packed = l.conv ? CallOp("quantized::conv2d_prepack", "",
                               {qw, std::optional<at::Tensor>(l.bias), c10::IValue(ones), c10::IValue(ones),
                                c10::IValue(ones), int64_t{1}})
                      : CallOp("quantized::linear_prepack", "", {qw, std::optional<at::Tensor>(l.bias)});
  }
}

int64_t LayerNet::ModelBytes(Mode mode) const {
  int64_t bytes = 0;
  const int64_t width = torch::elementSize(act_dtype_);
  for (const auto& l : layers_) {
    if (mode == Mode::kLowp && l.lowp.defined()) bytes += l.lowp.Bytes();
    else if (mode == Mode::kStatic || (mode == Mode::kDynamic && !l.conv))
      bytes += l.weight.numel() + l.bias.numel() * 4 + 8;  // int8, fp32 biases, scale + zero point
    else bytes += (l.weight.numel() + l.bias.numel()) * (mode == Mode::kFp32 ? 4 : width);
  }
  return bytes;
}

}  // namespace perfbench::quant
