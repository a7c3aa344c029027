// The training step shared by the amp suite (and, through it, by suites
// that train the same models): autocast, fp16 loss scaling, SGD.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "perfbench/params.h"

namespace perfbench::common {

// kFp32 is strict IEEE float32; kTf32 float32 with TensorFloat-32 matmuls and
// convolutions (a GPU math mode, set through the backend's MathMode); kBf16
// and kFp16 autocast (fp16 with dynamic loss scaling).
enum class Precision { kFp32, kTf32, kBf16, kFp16 };
// "fp32" | "tf32" | "bf16" | "fp16"; throws std::invalid_argument otherwise.
Precision ParsePrecision(const std::string& name);

// The optimiser a model's reference training uses.
struct OptimizerSpec {
  enum class Kind { kSgd, kAdamW };
  Kind kind = Kind::kSgd;
  double lr = 0.05;            // after warm-up
  double momentum = 0.9;       // SGD
  double weight_decay = 0;     // decoupled for AdamW
  int64_t warmup_steps = 0;    // learning rate rises linearly over these steps
  double clip_norm = 0;        // global gradient-norm clipping; 0: none
  // "adamw lr=1e-4 wd=0.01 warmup=10 clip=1"
  std::string Text() const;
};

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

struct Batch;

// A model and its forward function (torch::nn::AnyModule cannot hold a
// Sequential, whose forward is a template).
struct Model {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  // Optional: a model that computes its own loss (the model suite's
  // TorchScript modules whose forward returns it): the Trainer calls this
  // instead of cross_entropy(forward(x), y).
  std::function<torch::Tensor(const Batch&)> loss;
  // The parameters to train when `module` is null (a TorchScript module's),
  // already on the device.
  std::vector<torch::Tensor> parameters;

  template <typename Holder>
  static Model Of(Holder holder) {
    return {holder.ptr(), [m = holder.ptr()](const torch::Tensor& x) { return m->forward(x); }, {}, {}};
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
  // The optimiser for a size and batch (the reference's: AdamW with warm-up
  // for the transformers, SGD with momentum for the convolutional ones);
  // empty: SGD at 0.05 with momentum 0.9.
  std::function<OptimizerSpec(const std::string& size, int64_t batch)> optimizer;
  // Batch per device for the full size ("cpu" | "cuda"): what the
  // references run on a GPU, what fits a 2-core, 24 GiB machine on a CPU;
  // empty: batch(size) everywhere.
  std::function<int64_t(const std::string& device)> full_batch;
  // Bytes of activations a training step of `batch` samples keeps for
  // backward in fp32 (an estimate, for the memory projection before set-up);
  // empty: not known (only parameters and optimiser state are projected).
  std::function<double(const std::string& size, int64_t batch)> activation_bytes;
  // Items (see `items`) in one batch of `batch` samples (batch(size) when 0).
  int64_t ItemsPerBatch(const std::string& size, int64_t batch = 0) const;
  // flops_per_step(size), computed once per process (the counts build the
  // model), scaled to `batch` samples (batch(size) when 0); 0 when not known.
  double FlopsPerStep(const std::string& size, int64_t batch = 0) const;
  OptimizerSpec Optimizer(const std::string& size, int64_t batch) const {
    return optimizer ? optimizer(size, batch) : OptimizerSpec{};
  }
};

// BERT's and GPT's initialisation: every Linear and Embedding weight from
// N(0, std), Linear biases 0 (norms keep their ones and zeros). torch's
// defaults (N(0, 1) embeddings) make a deep transformer's first steps
// diverge.
void InitTransformerWeights(torch::nn::Module& module, double std = 0.02);

struct Batch {
  torch::Tensor x, y;
};

// `batch` split along its first dimension into `parts` equal micro-batches
// (views); throws std::invalid_argument when it does not divide.
std::vector<Batch> MicroBatches(const Batch& batch, int64_t parts);

// Channels-last (NHWC) memory format for the 4-d weights of `model` and the
// 4-d inputs of `batches`, as `model.to(memory_format=torch.channels_last)`.
void ToChannelsLast(Model& model, std::vector<Batch>& batches);

// `count` batches of `batch` samples (def.batch(size) when 0) of a learnable
// synthetic task: images or features x ~ N(0, 1) with labels from a fixed
// random linear teacher; for token classifiers the topic task (TopicTokens);
// for causal language models random tokens. Deterministic in `seed`.
std::vector<Batch> MakeBatches(const ModelDef& def, const std::string& size, int count, uint64_t seed,
                               torch::Device device, int64_t batch = 0);

// The topic task (ten topics, each with its own band of token ids 1..199; a
// sequence of topic y draws each token from y's band with probability 0.3,
// else uniformly from 1..199; token 0 is [CLS] at position 0): `n`
// sequences of `seq` tokens and their topics, from `gen`.
std::pair<torch::Tensor, torch::Tensor> TopicTokens(int64_t n, int64_t seq, at::Generator& gen);

// Forward, backward and optimiser step of one model in one precision.
class Trainer {
 public:
  Trainer(Model model, Precision precision, torch::Device device, OptimizerSpec optimizer = {});
  // The loss of `batch` under this precision's autocast, no gradients, no
  // update: before the first step, every precision's is that of the same
  // weights and batch.
  double Loss(const Batch& batch);
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
  // SGD only (throws std::logic_error for AdamW).
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
  // precisions. With `max_seconds` (--quick bounds a slow fp16 step's set-up
  // by time) it stops after the batch that passes it, at least one;
  // `calibrated` (if given) gets how many of `batches` it calibrated on.
  double CalibrateLossScale(const std::vector<Batch>& batches,
                            double max_seconds = std::numeric_limits<double>::infinity(),
                            size_t* calibrated = nullptr);

 private:
  // The fp32 loss of `batch` under this precision's autocast.
  torch::Tensor LossOf(const Batch& batch);
  // Forward and backward of `batch` with its loss times `weight`, adding to
  // the gradients; returns the unscaled loss.
  torch::Tensor Accumulate(const Batch& batch, double weight);
  // fp16: unscales the gradients in place; returns found_inf (1 when any is
  // not finite), as GradScaler's unscale_ does.
  torch::Tensor UnscaleGradients();

  // Warm-up's learning rate for the next step, then clipping, then the update.
  void Update();

  Model model_;
  Precision precision_;
  torch::Device device_;
  OptimizerSpec spec_;
  int64_t updates_ = 0;  // optimiser steps taken (skipped fp16 steps included, as LR schedulers count)
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  torch::Tensor scale_, growth_tracker_;  // fp16 dynamic loss scaling state
};

}  // namespace perfbench::common
