// The quant suite's small layer stacks:
//   mlp  x ~ N(0, 1) in 64 (quick) / 256 dims, labels from a fixed random
//        two-layer teacher; 3 Linear layers with ReLU (256 / 1024 wide).
//   cnn  the dataloader suite's synthetic images (stripes and colours per
//        class) under heavy pixel noise, 3x16x16 / 3x32x32;
//        conv-relu-pool x2, Linear.
// Every Mode: dynamic and the int8 / fp8 GEMMs quantize the Linear layers
// (convolutions stay in floating point, as PyTorch's dynamic quantization
// and torchao's float8 recipe leave them); static observes every layer's
// input and (post-ReLU) output; quantized::linear(_relu),
// quantized::conv2d(_relu).new, quantized max pooling, logits dequantized.
// Weights per tensor, symmetric.
#pragma once

#include "quant_net.h"

namespace perfbench::quant {

class LayerNet : public QuantNet {
 public:
  LayerNet(const std::string& name, const std::string& size, uint64_t seed);
  std::unique_ptr<QuantNet> Clone() const override { return std::make_unique<LayerNet>(*this); }
  std::string Unsupported(Mode) const override { return ""; }
  void PrepareHalf(torch::ScalarType dtype) override;
  void PrepareLowp(const LowpSpec& spec) override;
  void PrepareDynamic() override;
  void Calibrate(Observer observer, double miscalibrate = 1.0) override;
  torch::Tensor Forward(const torch::Tensor& x, Mode mode) const override;
  int64_t ModelBytes(Mode mode) const override;
  void To(const torch::Device& device) override;

 private:
  struct Layer {  // one Linear or Conv2d
    std::string name;
    bool conv = false;
    bool relu_after = false;
    bool pool_after = false;  // 2x2 max pool after the ReLU
    torch::Tensor weight, bias;
    c10::IValue packed;  // prepacked int8 weights
    LowpLinear lowp;
  };
  void InitLayers(int64_t in, int64_t hidden, int64_t image);
  torch::Tensor Static(torch::Tensor x) const;
  torch::Tensor Float(torch::Tensor x, Mode mode, ActivationObserver* observer) const;

  std::string name_;
  std::vector<Layer> layers_;
  bool reduce_range_ = false;
};

}  // namespace perfbench::quant
