#include "quant_net.h"

#include <stdexcept>

#include "bert_net.h"
#include "layer_net.h"
#include "resnet_net.h"
#include "common/synthetic_images.h"
#include "weight_store.h"

namespace perfbench::quant {

Mode ParseMode(const std::string& precision) {
  if (precision == "fp32") return Mode::kFp32;
  if (precision == "bf16" || precision == "fp16") return Mode::kHalf;
  if (precision == "fp8") return Mode::kLowp;
  if (precision == "int8_dynamic") return Mode::kDynamic;
  if (precision == "int8_static" || precision == "int8_static_pct") return Mode::kStatic;
  if (precision == "int8_intmm") return Mode::kLowp;
  throw std::invalid_argument("unknown precision '" + precision + "'");
}

torch::Tensor QuantNet::Predictions(Mode mode, int64_t limit) const {
  torch::InferenceMode guard;
  std::vector<torch::Tensor> parts;
  const auto& x = data_.test_x;
  const int64_t n = limit < 0 ? x.size(0) : std::min(limit, x.size(0));
  for (int64_t i = 0; i < n; i += 256) {
    auto chunk = x.slice(0, i, std::min(i + 256, n));
    parts.push_back(Forward(chunk.to(device_), mode).argmax(1).to(torch::kCPU));
  }
  return torch::cat(parts);
}

double QuantNet::Accuracy(Mode mode) const {
  return Predictions(mode).eq(data_.test_y).to(torch::kFloat64).mean().item<double>();
}

torch::Tensor QuantNet::In(const torch::Tensor& x) const {
  auto y = x.device() == device_ ? x : x.to(device_);
  return y.is_floating_point() && y.scalar_type() != act_dtype_ ? y.to(act_dtype_) : y;
}

std::unique_ptr<QuantNet> MakeQuantNet(const std::string& name, const std::string& size, uint64_t seed,
                                       const torch::Device& device) {
  if (name == "mlp" || name == "cnn") return std::make_unique<LayerNet>(name, size, seed);
  if (name == "bert") return std::make_unique<BertNet>(size, seed, device);
  if (name == "resnet50") return std::make_unique<ResNetNet>(size, seed, device);
  throw std::invalid_argument("unknown quant model '" + name + "'");
}

double TrainingFlop(const std::string& name, const std::string& size) {
  if (name == "bert") return BertNet::TrainingFlop(size);
  if (name == "resnet50") return ResNetNet::TrainingFlop(size);
  return 0;
}

namespace {

void Fit(const std::vector<torch::Tensor>& params, const std::function<torch::Tensor(const torch::Tensor&)>& forward,
         const TaskData& data, int64_t steps, int64_t batch, double lr) {
  torch::optim::Adam opt(params, torch::optim::AdamOptions(lr));
  torch::AutoGradMode enable(true);
  const int64_t train = data.train_x.size(0);
  const torch::Device device = params.front().device();  // batches go where the parameters are
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t start = (step * batch) % (train - batch);
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(forward(data.train_x.slice(0, start, start + batch).to(device)),
                                                     data.train_y.slice(0, start, start + batch).to(device));
    loss.backward();
    opt.step();
  }
}

}  // namespace

bool FitClassifier(const std::vector<torch::Tensor>& params,
                   const std::function<torch::Tensor(const torch::Tensor&)>& forward, const TaskData& data,
                   int64_t steps, int64_t batch, double lr, const std::string& store_key,
                   const std::vector<torch::Tensor>& buffers) {
  std::vector<torch::Tensor> state = params;
  state.insert(state.end(), buffers.begin(), buffers.end());
  const std::string stored = store_key.empty() ? "" : WeightStorePath(store_key, params.front().device());
  if (LoadTrainedWeights(stored, state)) return true;
  Fit(params, forward, data, steps, batch, lr);
  SaveTrainedWeights(stored, state);
  return false;
}

std::pair<torch::Tensor, torch::Tensor> NoisyImages(uint64_t seed, int64_t n, int64_t image, double noise) {
  auto x = torch::empty({n, 3, image, image});
  auto y = torch::empty({n}, torch::kInt64);
  std::vector<uint8_t> rgb;
  for (int64_t i = 0; i < n; ++i) {
    int64_t label = 0;
    common::SynthesizeImage(seed, i, image, 10, &rgb, &label);
    x[i] = torch::from_blob(rgb.data(), {image, image, 3}, torch::kUInt8).permute({2, 0, 1}).to(torch::kFloat32)
               .div(255.0).sub(0.5).div(0.25);
    y[i] = label;
  }
  x.add_(torch::randn(x.sizes()) * noise);
  return {x, y};
}

TaskData SplitTask(const torch::Tensor& x, const torch::Tensor& y, int64_t train, int64_t calib) {
  const int64_t n = x.size(0);
  return TaskData{x.slice(0, 0, train), y.slice(0, 0, train), x.slice(0, train, train + calib),
                  x.slice(0, train + calib, n), y.slice(0, train + calib, n)};
}

}  // namespace perfbench::quant
