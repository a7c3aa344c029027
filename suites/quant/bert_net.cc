#include "bert_net.h"


#include "common/models.h"
#include "weight_store.h"

namespace perfbench::quant {
namespace {

struct Sizes {
  common::BertConfig config;
  int64_t train, calib, test, steps, batch;
};
Sizes SizesFor(const std::string& size) {
  // Held-out sets of 2,048: the accuracy gate's tiers need at least 2,000.
  if (size == "quick") return Sizes{{2, 128, 2, 200, 32, 32}, 4096, 256, 2048, 300, 32};
  common::BertConfig base = common::BertConfigFor("base");
  return Sizes{base, 1024, 64, 2048, 128, 8};
}

// The topic task (common::TopicTokens, shared with amp's bert): prototyped
// in Python with the quick shapes (2 layers, 128 wide, 300 Adam steps of 32
// at lr 1e-3): held-out accuracy ~0.93, learnt in ~10 s on 2 cores; with
// 64-token sequences, a larger vocabulary or p = 0.1 it stayed near chance
// in that budget. Drawn from the default generator, which the suite seeds.
std::pair<torch::Tensor, torch::Tensor> TopicTask(const common::BertConfig& c, int64_t n) {
  at::Generator gen = at::globalContext().defaultGenerator(c10::DeviceType::CPU);
  return common::TopicTokens(n, c.seq, gen);
}

}  // namespace

BertNet::BertNet(const std::string& size, uint64_t seed, const torch::Device& device) {
  const Sizes s = SizesFor(size);
  torch::manual_seed(static_cast<int64_t>(seed));
  auto [x, y] = TopicTask(s.config, s.train + s.calib + s.test);
  data_ = SplitTask(x, y, s.train, s.calib);
  common::Model model = common::MakeBert(s.config);
  module_ = model.module;
  module_forward_ = model.forward;
  module_->to(device);
  device_ = device;
  weights_loaded_ = FitClassifier(module_->parameters(), module_forward_, data_, s.steps, s.batch, 1e-3,
                                  TrainedWeightsKey("bert", size, seed), module_->buffers());
  module_->eval();
  layers_ = s.config.layers;
  heads_ = s.config.heads;
  for (const auto& m : module_->named_modules())
    if (const auto* linear = m.value()->as<torch::nn::LinearImpl>())
      linears_[m.key()] = Linear{linear->weight.detach(), linear->bias.detach(), {}, {}};
  for (const auto& p : module_->named_parameters()) {
    const std::string& key = p.key();
    if (!linears_.count(key.substr(0, key.rfind('.')))) tensors_[key] = p.value().detach();
  }
}

double BertNet::TrainingFlop(const std::string& size) {
  const Sizes s = SizesFor(size);
  const double h = static_cast<double>(s.config.hidden), per_layer = 12 * h * h;  // qkv, out, 2 x feed-forward
  return 6.0 * static_cast<double>(s.config.layers) * per_layer * static_cast<double>(s.batch * s.config.seq) *
         static_cast<double>(s.steps);
}

std::string BertNet::Unsupported(Mode mode) const {
  if (mode == Mode::kStatic)
    return "BERT is quantized dynamically (its Linear layers, the canonical case); static int8 would need "
           "quantized layer norm, softmax and GELU";
  return "";
}

torch::Tensor BertNet::Apply(const std::string& name, const torch::Tensor& x, Mode mode) const {
  const Linear& l = linears_.at(name);
  if (mode == Mode::kDynamic) return CallOp("quantized::linear_dynamic", "", {x, l.packed, reduce_range_}).toTensor();
  if (mode == Mode::kLowp) return l.lowp(x);
  return torch::nn::functional::linear(x, l.weight, l.bias);
}

torch::Tensor BertNet::LayerNorm(const std::string& name, const torch::Tensor& x) const {
  return torch::layer_norm(x, {x.size(-1)}, tensors_.at(name + ".weight"), tensors_.at(name + ".bias"), 1e-12);
}

// As common/bert.cc's BertLayer: post-norm attention and GELU feed-forward.
torch::Tensor BertNet::Layer(int64_t i, const torch::Tensor& x, Mode mode) const {
  const std::string p = "layer" + std::to_string(i) + ".";
  const int64_t b = x.size(0), s = x.size(1), h = x.size(2);
  auto parts = Apply(p + "qkv", x, mode).view({b, s, 3, heads_, h / heads_}).permute({2, 0, 3, 1, 4});
  auto a = at::scaled_dot_product_attention(parts[0], parts[1], parts[2]);
  auto y = LayerNorm(p + "ln1", x + Apply(p + "out", a.transpose(1, 2).reshape({b, s, h}), mode));
  return LayerNorm(p + "ln2", y + Apply(p + "ff2", torch::gelu(Apply(p + "ff1", y, mode)), mode));
}

torch::Tensor BertNet::Forward(const torch::Tensor& input, Mode mode) const {
  if (mode == Mode::kStatic) throw std::invalid_argument(Unsupported(mode));
  const auto ids = In(input);
  const auto positions = torch::arange(ids.size(1), ids.options());
  auto x = torch::embedding(tensors_.at("word.weight"), ids) +
           torch::embedding(tensors_.at("position.weight"), positions).unsqueeze(0) +
           tensors_.at("token_type.weight")[0];
  x = LayerNorm("ln", x);
  for (int64_t i = 0; i < layers_; ++i) x = Layer(i, x, mode);
  return Logits(Apply("head", torch::tanh(Apply("pooler", x.select(1, 0).contiguous(), mode)), mode));
}

torch::Tensor BertNet::ModuleForward(const torch::Tensor& ids) const { return module_forward_(ids); }

void BertNet::PrepareDynamic() {
  reduce_range_ = EngineWantsReducedRange();
  for (auto& [name, l] : linears_)
    l.packed = CallOp("quantized::linear_prepack", "", {QuantizeWeight(l.weight), std::optional<at::Tensor>(l.bias)});
}

void BertNet::PrepareHalf(torch::ScalarType dtype) {
  act_dtype_ = dtype;
  for (auto& [name, t] : tensors_) t = t.to(dtype);
  for (auto& [name, l] : linears_) {
    l.weight = l.weight.to(dtype);
    l.bias = l.bias.to(dtype);
  }
}

void BertNet::PrepareLowp(const LowpSpec& spec) {
  act_dtype_ = spec.activations;
  for (auto& [name, t] : tensors_) t = t.to(spec.activations);
  for (auto& [name, l] : linears_) l.lowp = LowpLinear::Prepare(l.weight, l.bias, spec);
}

void BertNet::Calibrate(Observer, double) { throw std::invalid_argument(Unsupported(Mode::kStatic)); }

int64_t BertNet::ModelBytes(Mode mode) const {
  int64_t bytes = 0;
  const int64_t width = mode == Mode::kFp32 || mode == Mode::kDynamic ? 4 : torch::elementSize(act_dtype_);
  for (const auto& [name, t] : tensors_) bytes += t.numel() * width;
  for (const auto& [name, l] : linears_) {
    if (mode == Mode::kLowp) bytes += l.lowp.Bytes();
    else if (mode == Mode::kDynamic) bytes += l.weight.numel() + l.bias.numel() * 4 + 8;  // scale + zero point
    else bytes += (l.weight.numel() + l.bias.numel()) * width;
  }
  return bytes;
}

void BertNet::To(const torch::Device& device) {
  device_ = device;
  for (auto& [name, t] : tensors_) t = t.to(device);
  for (auto& [name, l] : linears_) {
    l.weight = l.weight.to(device);
    l.bias = l.bias.to(device);
  }
}

}  // namespace perfbench::quant
