// quant/resnet50: the shared ResNet-50 v1.5 (common/resnet50.cc) with 10
// classes, trained on the synthetic images, then with every batch norm folded
// into its convolution (inference form) and run in int8 static: weights per
// output channel, activations quint8 from calibration (the input, every
// convolution's output after its fused ReLU, every residual sum),
// quantized::conv2d(_relu).new, quantized::add_relu for the residuals,
// quantized max and average pooling, quantized::linear; logits dequantized.
//   quick: widths 16/32/64/128, one bottleneck per stage, 3x32x32 images
//     with pixel noise sd 4 (accuracy ~0.77: room to drop); 4096 training images, 250 Adam steps of 64
//   full:  ResNet-50 at 3x224x224, the same noise; 512 training images, 64 steps of 8 (a
//     short schedule: expensive on a CPU)
#pragma once

#include <optional>

#include "quant_net.h"

namespace perfbench::quant {

class ResNetNet : public QuantNet {
 public:
  ResNetNet(const std::string& size, uint64_t seed, const torch::Device& device = torch::kCPU);
  // FLOP of the training the constructor runs at `size` (3 x forward x
  // images per step x steps).
  static double TrainingFlop(const std::string& size);
  std::unique_ptr<QuantNet> Clone() const override { return std::make_unique<ResNetNet>(*this); }
  std::string Unsupported(Mode mode) const override;
  // bf16 / fp16; on CUDA the convolutions' weights and the input go
  // channels-last (NHWC, what cuDNN's tensor-core kernels run).
  void PrepareHalf(torch::ScalarType dtype) override;
  void PrepareLowp(const LowpSpec& spec) override;
  void PrepareDynamic() override;
  void Calibrate(Observer observer, double miscalibrate = 1.0) override;
  torch::Tensor Forward(const torch::Tensor& x, Mode mode) const override;
  int64_t ModelBytes(Mode mode) const override;
  void To(const torch::Device& device) override;
  // The trained module's own forward in eval mode (tests compare it with Forward).
  torch::Tensor ModuleForward(const torch::Tensor& x) const;

 private:
  struct Conv {  // a convolution with its batch norm folded in
    std::string name;
    torch::Tensor weight, bias;
    int64_t stride = 1, padding = 0;
    bool relu = false;
    c10::IValue packed;
  };
  struct Block {
    std::string name;
    Conv c1, c2, c3;
    std::optional<Conv> down;
  };
  void Fold(const torch::nn::Module& net);
  torch::Tensor Float(torch::Tensor x, ActivationObserver* observer) const;
  torch::Tensor Static(torch::Tensor x) const;
  torch::Tensor QConv(const Conv& c, const torch::Tensor& x) const;
  void Pack(Conv& c) const;
  // Applies `f` to every weight and bias.
  void ForEachTensor(const std::function<torch::Tensor(const torch::Tensor&)>& f);

  std::shared_ptr<torch::nn::Module> module_;
  std::function<torch::Tensor(const torch::Tensor&)> module_forward_;
  Conv stem_;
  int64_t pool_kernel_ = 3, pool_stride_ = 2, pool_padding_ = 1;
  std::vector<Block> blocks_;
  torch::Tensor fc_weight_, fc_bias_;
  c10::IValue fc_packed_;
  bool channels_last_ = false;
};

}  // namespace perfbench::quant
