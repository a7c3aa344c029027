// A model of the quant suite: trained at start (seeded, deterministic) on a
// learnable synthetic task with a held-out split, then run in fp32 and in
// the int8 forms it supports.
//   mlp, cnn   small layer stacks (layer_net.h): every form
//   bert       a BERT encoder (bert_net.h): int8 dynamic, its Linear layers
//   resnet50   ResNet-50 v1.5, batch norm folded (resnet_net.h): int8 static
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "int8_ops.h"
#include "lowp_linear.h"

namespace perfbench::quant {

// How a forward pass runs:
//   kFp32     the trained model in fp32
//   kHalf     every weight and activation in bf16 or fp16 (PrepareHalf)
//   kDynamic  int8 weights, activations quantized on the fly per call
//             (quantized::linear_dynamic; convolutions stay fp32)
//   kStatic   int8 weights and activations with qparams from calibration
//   kLowp     the Linear layers through lowp_linear.h (int8 via _int_mm,
//             the GPU's int8 path, or fp8 via _scaled_mm), activations
//             quantized per call; the rest in PrepareLowp's dtype
enum class Mode { kFp32, kHalf, kDynamic, kStatic, kLowp };

// "fp32" | "bf16" | "fp16" | "int8_dynamic" | "int8_static" |
// "int8_static_pct" | "int8_intmm" | "fp8"; throws std::invalid_argument
// otherwise.
Mode ParseMode(const std::string& precision);

struct TaskData {
  torch::Tensor train_x, train_y, calib_x, test_x, test_y;
};

class QuantNet {
 public:
  virtual ~QuantNet() = default;
  // A copy with its own int8 state (the trained weights are shared).
  virtual std::unique_ptr<QuantNet> Clone() const = 0;

  const TaskData& data() const { return data_; }
  torch::Device device() const { return device_; }
  // Whether `mode` is supported, and why not ("" when it is).
  virtual std::string Unsupported(Mode mode) const = 0;

  // Prepare the low-precision forms, on the device the model is on (To
  // first): every weight and activation in `dtype` (kHalf); the Linear
  // layers in `spec.format` with the other layers and the activations
  // between them in `spec.activations` (kLowp); packed weights for kDynamic; or
  // calibration on the held-out calibration split for kStatic. Every
  // activation scale is multiplied by `miscalibrate` (tests: 100 is a
  // deliberately broken calibration).
  virtual void PrepareHalf(torch::ScalarType dtype) = 0;
  virtual void PrepareLowp(const LowpSpec& spec) = 0;
  virtual void PrepareDynamic() = 0;
  virtual void Calibrate(Observer observer, double miscalibrate = 1.0) = 0;
  // Activation qparams by name, after Calibrate.
  const std::map<std::string, QParams>& activation_qparams() const { return act_; }

  // Logits [batch, classes] for a batch of samples.
  virtual torch::Tensor Forward(const torch::Tensor& x, Mode mode) const = 0;
  // Weight bytes in `mode`: int8 weights, fp32 biases, a scale and zero
  // point per int8 tensor or channel (packing overhead not counted).
  virtual int64_t ModelBytes(Mode mode) const = 0;
  // Moves the fp32 weights to `device` (before any Prepare).
  virtual void To(const torch::Device& device) = 0;

  // Top-1 predictions [test samples] (on the CPU) for the held-out test
  // split, in chunks of 256 samples; Accuracy is their agreement with the
  // labels.
  // `limit` >= 0: the first `limit` held-out samples only (--quick bounds a
  // slow precision's accuracy pass).
  torch::Tensor Predictions(Mode mode, int64_t limit = -1) const;
  double Accuracy(Mode mode) const;
  // Whether training was loaded from the weight store rather than run here.
  bool weights_loaded() const { return weights_loaded_; }

 protected:
  // A floating input in the dtype the prepared form computes in, and logits
  // back in fp32.
  torch::Tensor In(const torch::Tensor& x) const;
  static torch::Tensor Logits(const torch::Tensor& y) { return y.to(torch::kFloat32); }

  torch::ScalarType act_dtype_ = torch::kFloat32;
  TaskData data_;
  std::map<std::string, QParams> act_;
  torch::Device device_{torch::kCPU};
  bool weights_loaded_ = false;
};

// The model `name` ("mlp" | "cnn" | "bert" | "resnet50") at `size` ("quick" |
// "full"), trained (bert and resnet50 on `device`, where they then stay; the
// small layer stacks on the CPU); throws std::invalid_argument for an
// unknown name.
std::unique_ptr<QuantNet> MakeQuantNet(const std::string& name, const std::string& size, uint64_t seed,
                                       const torch::Device& device = torch::kCPU);
// FLOP of the training MakeQuantNet runs for `name` at `size`; 0 where it
// is small enough not to matter (mlp, cnn).
double TrainingFlop(const std::string& name, const std::string& size);

// Trains `params` with Adam for `steps` batches of `batch` taken in turn from
// the training split (moved to the parameters' device), with cross-entropy
// of `forward`'s logits. With a `store_key` (model/size/seed), a result the
// weight store (weight_store.h) holds for it is loaded instead, and a fresh
// one is stored: `params` and `buffers` (what training changes beside the
// parameters: batch-norm statistics). Returns whether it loaded.
bool FitClassifier(const std::vector<torch::Tensor>& params,
                   const std::function<torch::Tensor(const torch::Tensor&)>& forward, const TaskData& data,
                   int64_t steps, int64_t batch, double lr, const std::string& store_key = "",
                   const std::vector<torch::Tensor>& buffers = {});

// `n` of the shared synthetic images (stripes and colours per class, 10
// classes), image x image, normalised, plus N(0, noise^2) pixel noise so that
// held-out accuracy has room to move; deterministic in `seed`.
std::pair<torch::Tensor, torch::Tensor> NoisyImages(uint64_t seed, int64_t n, int64_t image, double noise);

// Splits `x`, `y` (n samples) into train | calib | test of the given sizes.
TaskData SplitTask(const torch::Tensor& x, const torch::Tensor& y, int64_t train, int64_t calib);

}  // namespace perfbench::quant
