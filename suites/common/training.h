// The training step shared by the amp suite (and, through it, by suites
// that train the same models): autocast, fp16 loss scaling, SGD.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "perfbench/params.h"

namespace perfbench::common {

enum class Precision { kFp32, kBf16, kFp16 };
// "fp32" | "bf16" | "fp16"; throws std::invalid_argument otherwise.
Precision ParsePrecision(const std::string& name);

// Waits for the device's queued work (CUDA) before a clock is read; no-op on the CPU.
void SynchronizeDevice(const torch::Device& device);

// RAII equivalent of Python's `with torch.autocast(device, dtype)`: saves the
// thread's autocast state, enables it, and restores it on exit (clearing the
// cast cache when the outermost guard ends, see pytorch#46649).
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device, at::ScalarType dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool prev_enabled_;
  at::ScalarType prev_dtype_;
  bool prev_cache_;
};

// Why fp16 loss scaling cannot run on `device` here ("" if it can): the ATen
// ops _amp_foreach_non_finite_check_and_unscale_ / _amp_update_scale_ need a
// kernel for the device (CPU kernels exist from torch 2.3).
std::string LossScalingUnavailable(const std::string& device);

// A model and its forward function (torch::nn::AnyModule cannot hold a
// Sequential, whose forward is a template).
struct Model {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;

  template <typename Holder>
  static Model Of(Holder holder) {
    return {holder.ptr(), [m = holder.ptr()](const torch::Tensor& x) { return m->forward(x); }};
  }
};

// One model definition: how to build it and what a sample looks like.
struct ModelDef {
  std::string name;         // "mlp"
  std::string description;  // for `perfbench list`
  // Builds the model for a `size` ("quick" | "full"), on the CPU, in fp32.
  std::function<Model(const std::string& size)> make;
  // Shape of one input sample, e.g. {1024} or {3, 64, 64}.
  std::function<std::vector<int64_t>(const std::string& size)> sample_shape;
  std::function<int64_t(const std::string& size)> batch;
  int64_t classes = 10;
  // Token models: a sample is sample_shape ({seq}) token ids in [0, vocab(size)).
  // Empty: float samples.
  std::function<int64_t(const std::string& size)> vocab;
  // A causal language model: forward gives [batch x seq, vocab] logits and
  // the labels are the next tokens; else one label per sample.
  bool causal_lm = false;
  // What throughput counts: "samples", "images" or "tokens" (seq per sample).
  std::string items = "samples";
  // Training FLOP of one optimizer step on a batch (analytic, documented
  // where defined); empty: not known.
  std::function<double(const std::string& size)> flops_per_step;
  // SGD learning rate (momentum 0.9) that keeps the first steps stable, so
  // that the loss of a reduced precision can be compared with fp32's.
  double lr = 0.05;
  // Items (see `items`) in one batch.
  int64_t ItemsPerBatch(const std::string& size) const;
  // flops_per_step(size), computed once per process (the counts build the
  // model); 0 when not known.
  double FlopsPerStep(const std::string& size) const;
};

struct Batch {
  torch::Tensor x, y;
};

// `batch` split along its first dimension into `parts` equal micro-batches
// (views); throws std::invalid_argument when it does not divide.
std::vector<Batch> MicroBatches(const Batch& batch, int64_t parts);

// Channels-last (NHWC) memory format for the 4-d weights of `model` and the
// 4-d inputs of `batches`, as `model.to(memory_format=torch.channels_last)`.
void ToChannelsLast(Model& model, std::vector<Batch>& batches);

// `count` batches of a learnable synthetic task: x ~ N(0, 1), labels from a
// fixed random linear teacher. Deterministic in `seed`.
std::vector<Batch> MakeBatches(const ModelDef& def, const std::string& size, int count, uint64_t seed,
                               torch::Device device);

// Forward, backward and SGD step of one model in one precision.
class Trainer {
 public:
  Trainer(Model model, Precision precision, torch::Device device, double lr = 0.05);
  // Forward under autocast and backward (loss scaled for fp16). Returns the
  // unscaled fp32 loss; gradients are left in the parameters.
  torch::Tensor ForwardBackward(const Batch& batch);
  // Unscales (fp16), skips the step on inf/nan gradients, updates the scale.
  void OptimizerStep();
  torch::Tensor Step(const Batch& batch) {
    auto loss = ForwardBackward(batch);
    OptimizerStep();
    return loss;
  }
  // Gradient accumulation: forward and backward of each micro-batch with its
  // loss divided by their number (gradients summed), then one optimizer
  // step. Equal micro-batches give the gradient of the whole batch; returns
  // the mean of their losses (the whole batch's).
  torch::Tensor Step(const std::vector<Batch>& micro_batches);
  std::vector<torch::Tensor> Parameters() { return params_; }
  // Copies of the parameters and optimizer state, and putting them back: a
  // step can be measured and then undone (ddp's step without gradient sync).
  struct State {
    std::vector<torch::Tensor> params, momentum;
  };
  State Save() const;
  void Restore(const State& state);
  double LossScale() const;
  // fp16: halves the loss scale from GradScaler's 2^16 until every gradient
  // of each of `batches` is finite, with no update made (so that timed steps
  // are not a fresh scaler's skipped first steps, and the loss trajectory
  // stays paired step by step with fp32's). Returns the scale; 1 for other
  // precisions.
  double CalibrateLossScale(const std::vector<Batch>& batches);

 private:
  // Forward and backward of `batch` with its loss times `weight`, adding to
  // the gradients; returns the unscaled loss.
  torch::Tensor Accumulate(const Batch& batch, double weight);
  // fp16: unscales the gradients in place; returns found_inf (1 when any is
  // not finite), as GradScaler's unscale_ does.
  torch::Tensor UnscaleGradients();

  Model model_;
  Precision precision_;
  torch::Device device_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  torch::Tensor scale_, growth_tracker_;  // fp16 dynamic loss scaling state
};

}  // namespace perfbench::common
