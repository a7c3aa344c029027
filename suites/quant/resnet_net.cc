#include "resnet_net.h"


#include "common/models.h"
#include "weight_store.h"

namespace perfbench::quant {
namespace {

struct Sizes {
  int64_t image, train, calib, test, steps, batch;
  double noise;
};
Sizes SizesFor(const std::string& size) {
  // Held-out sets of 2,048: the accuracy gate's tiers need at least 2,000.
  return size == "quick" ? Sizes{32, 4096, 256, 2048, 250, 64, 4.0} : Sizes{224, 512, 64, 2048, 64, 8, 4.0};
}

}  // namespace

double ResNetNet::TrainingFlop(const std::string& size) {
  const Sizes s = SizesFor(size);
  return 3.0 * common::ResNet50ForwardFlop(size) * static_cast<double>(s.batch * s.steps);
}

namespace {

const torch::nn::Module& Child(const torch::nn::Module& m, const std::string& name) {
  for (const auto& c : m.named_children())
    if (c.key() == name) return *c.value();
  throw std::logic_error("resnet50 has no module '" + name + "'");
}

}  // namespace

ResNetNet::ResNetNet(const std::string& size, uint64_t seed, const torch::Device& device) {
  const Sizes s = SizesFor(size);
  torch::manual_seed(static_cast<int64_t>(seed));
  auto [x, y] = NoisyImages(seed, s.train + s.calib + s.test, s.image, s.noise);
  data_ = SplitTask(x, y, s.train, s.calib);
  common::Model model = common::MakeResNet50(size, 10);
  module_ = model.module;
  module_forward_ = model.forward;
  module_->to(device);
  device_ = device;
  weights_loaded_ = FitClassifier(module_->parameters(), module_forward_, data_, s.steps, s.batch, 1e-3,
                                  TrainedWeightsKey("resnet50", size, seed), module_->buffers());
  module_->eval();
  torch::NoGradGuard no_grad;
  Fold(*module_);
}

// Reads the Sequential that common::MakeResNet50 documents, folding each
// batch norm into the convolution before it.
void ResNetNet::Fold(const torch::nn::Module& net) {
  auto fold = [](const std::string& name, const torch::nn::Module& conv, const torch::nn::Module& bn, bool relu) {
    const auto* c = conv.as<torch::nn::Conv2dImpl>();
    const auto* b = bn.as<torch::nn::BatchNorm2dImpl>();
    if (!c || !b) throw std::logic_error("resnet50: " + name + " is not a convolution and batch norm");
    const auto inv = b->weight / torch::sqrt(b->running_var + b->options.eps());
    Conv f{name, (c->weight * inv.view({-1, 1, 1, 1})).detach(), (b->bias - b->running_mean * inv).detach(),
           (*c->options.stride())[0], (*std::get<torch::ExpandingArray<2>>(c->options.padding()))[0], relu, {}};
    return f;
  };
  const auto children = net.children();
  stem_ = fold("stem", *children.at(0), *children.at(1), true);
  const auto* pool = children.at(3)->as<torch::nn::MaxPool2dImpl>();
  pool_kernel_ = (*pool->options.kernel_size())[0];
  pool_stride_ = (*pool->options.stride())[0];
  pool_padding_ = (*pool->options.padding())[0];
  for (size_t i = 4; i < children.size(); ++i) {
    const torch::nn::Module& m = *children[i];
    if (const auto* fc = m.as<torch::nn::LinearImpl>()) {
      fc_weight_ = fc->weight.detach();
      fc_bias_ = fc->bias.detach();
    }
    if (m.named_children().size() < 6) continue;  // pooling, flatten, the head
    const std::string name = "block" + std::to_string(blocks_.size());
    Block b{name, fold(name + ".c1", Child(m, "conv1"), Child(m, "bn1"), true),
            fold(name + ".c2", Child(m, "conv2"), Child(m, "bn2"), true),
            fold(name + ".c3", Child(m, "conv3"), Child(m, "bn3"), false), std::nullopt};
    for (const auto& c : m.named_children())
      if (c.key() == "downsample") b.down = fold(name + ".down", *c.value()->children().at(0), *c.value()->children().at(1), false);
    blocks_.push_back(std::move(b));
  }
}

std::string ResNetNet::Unsupported(Mode mode) const {
  if (mode == Mode::kDynamic || mode == Mode::kLowp)
    return "ResNet-50 is quantized statically (dynamic quantization, int8 or fp8 GEMMs, leaves its convolutions "
           "unquantized)";
  return "";
}

torch::Tensor ResNetNet::Forward(const torch::Tensor& x, Mode mode) const {
  if (!Unsupported(mode).empty()) throw std::invalid_argument(Unsupported(mode));
  if (mode == Mode::kStatic) return Static(x.device() == device_ ? x : x.to(device_));
  const auto input = In(x);
  return Logits(Float(channels_last_ ? input.contiguous(at::MemoryFormat::ChannelsLast) : input, nullptr));
}

torch::Tensor ResNetNet::ModuleForward(const torch::Tensor& x) const { return module_forward_(x); }

// The folded network in fp32; with an observer, the ranges calibration needs.
torch::Tensor ResNetNet::Float(torch::Tensor x, ActivationObserver* observer) const {
  auto conv = [&](const Conv& c, const torch::Tensor& in) {
    auto y = torch::conv2d(in, c.weight, c.bias, c.stride, c.padding);
    if (c.relu) y = torch::relu(y);
    if (observer) observer->Record(c.name, y);
    return y;
  };
  if (observer) observer->Record("input", x);
  x = torch::max_pool2d(conv(stem_, x), pool_kernel_, pool_stride_, pool_padding_);
  for (const auto& b : blocks_) {
    const auto identity = b.down ? conv(*b.down, x) : x;
    x = torch::relu(conv(b.c3, conv(b.c2, conv(b.c1, x))) + identity);
    if (observer) observer->Record(b.name + ".add", x);
  }
  x = torch::nn::functional::linear(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1), fc_weight_, fc_bias_);
  if (observer) observer->Record("fc", x);
  return x;
}

torch::Tensor ResNetNet::QConv(const Conv& c, const torch::Tensor& x) const {
  const QParams& q = act_.at(c.name);
  return CallOp(c.relu ? "quantized::conv2d_relu" : "quantized::conv2d", "new", {x, c.packed, q.scale, q.zero_point})
      .toTensor();
}

torch::Tensor ResNetNet::Static(torch::Tensor x) const {
  const QParams& in = act_.at("input");
  x = at::quantize_per_tensor(x.contiguous(), in.scale, in.zero_point, at::kQUInt8);
  x = at::max_pool2d(QConv(stem_, x), {pool_kernel_, pool_kernel_}, {pool_stride_, pool_stride_},
                     {pool_padding_, pool_padding_}, {1, 1});
  for (const auto& b : blocks_) {
    const auto identity = b.down ? QConv(*b.down, x) : x;
    const QParams& q = act_.at(b.name + ".add");
    x = CallOp("quantized::add_relu", "", {QConv(b.c3, QConv(b.c2, QConv(b.c1, x))), identity, q.scale, q.zero_point})
            .toTensor();
  }
  x = at::adaptive_avg_pool2d(x, {1, 1}).reshape({x.size(0), -1});
  const QParams& q = act_.at("fc");
  return CallOp("quantized::linear", "", {x, fc_packed_, q.scale, q.zero_point}).toTensor().dequantize();
}

void ResNetNet::Pack(Conv& c) const {
  const std::vector<int64_t> stride = {c.stride, c.stride}, padding = {c.padding, c.padding}, ones = {1, 1};
  c.packed = CallOp("quantized::conv2d_prepack", "",
                    {QuantizeWeightPerChannel(c.weight), std::optional<at::Tensor>(c.bias), c10::IValue(stride),
                     c10::IValue(padding), c10::IValue(ones), int64_t{1}});
}

void ResNetNet::Calibrate(Observer observer, double miscalibrate) {
  torch::NoGradGuard no_grad;
  ActivationObserver seen;
  for (int64_t i = 0; i < data_.calib_x.size(0); i += 64)
    Float(data_.calib_x.slice(0, i, std::min(i + 64, data_.calib_x.size(0))), &seen);
  act_ = seen.Finish(observer, EngineWantsReducedRange(), miscalibrate);
  Pack(stem_);
  for (auto& b : blocks_) {
    for (Conv* c : {&b.c1, &b.c2, &b.c3}) Pack(*c);
    if (b.down) Pack(*b.down);
  }
  fc_packed_ = CallOp("quantized::linear_prepack", "",
                      {QuantizeWeightPerChannel(fc_weight_), std::optional<at::Tensor>(fc_bias_)});
}

void ResNetNet::PrepareDynamic() { throw std::invalid_argument(Unsupported(Mode::kDynamic)); }
void ResNetNet::PrepareLowp(const LowpSpec&) { throw std::invalid_argument(Unsupported(Mode::kLowp)); }

void ResNetNet::PrepareHalf(torch::ScalarType dtype) {
  act_dtype_ = dtype;
  channels_last_ = device_.is_cuda();
  ForEachTensor([&](const torch::Tensor& t) {
    auto h = t.to(dtype);
    return channels_last_ && h.dim() == 4 ? h.contiguous(at::MemoryFormat::ChannelsLast) : h;
  });
}

int64_t ResNetNet::ModelBytes(Mode mode) const {
  const bool int8 = mode == Mode::kStatic;
  const int64_t width = int8 ? 1 : mode == Mode::kHalf ? 2 : 4;
  auto bytes = [int8, width](const torch::Tensor& w, const torch::Tensor& b) {
    // int8: fp32 biases, a scale and zero point per channel
    return w.numel() * width + b.numel() * (int8 ? 4 : width) + (int8 ? w.size(0) * 8 : 0);
  };
  int64_t total = bytes(stem_.weight, stem_.bias) + bytes(fc_weight_, fc_bias_);
  for (const auto& b : blocks_) {
    for (const Conv* c : {&b.c1, &b.c2, &b.c3}) total += bytes(c->weight, c->bias);
    if (b.down) total += bytes(b.down->weight, b.down->bias);
  }
  return total;
}

void ResNetNet::ForEachTensor(const std::function<torch::Tensor(const torch::Tensor&)>& f) {
  auto apply = [&](Conv& c) {
    c.weight = f(c.weight);
    c.bias = f(c.bias);
  };
  apply(stem_);
  for (auto& b : blocks_) {
    for (Conv* c : {&b.c1, &b.c2, &b.c3}) apply(*c);
    if (b.down) apply(*b.down);
  }
  fc_weight_ = f(fc_weight_);
  fc_bias_ = f(fc_bias_);
}

void ResNetNet::To(const torch::Device& device) {
  device_ = device;
  ForEachTensor([&](const torch::Tensor& t) { return t.to(device); });
}

}  // namespace perfbench::quant
