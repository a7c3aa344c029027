// Models for the quant suite, trained at start on learnable synthetic tasks,
// and their int8 versions through LibTorch's quantized:: CPU kernels.
//
//   mlp  x ~ N(0, 1) in 64 (quick) / 256 dims, labels from a fixed random
//        two-layer teacher; student 3 Linear layers with ReLU (256 / 1024 wide).
//   cnn  the dataloader suite's synthetic images (stripes and colours per
//        class), 3x16x16 / 3x32x32; conv-relu-pool x2, Linear.
// int8_dynamic: Linear weights int8 (per-tensor symmetric), activations
//   quantized on the fly (quantized::linear_dynamic); convolutions stay fp32
//   (as PyTorch's dynamic quantization does).
// int8_static: weights int8, activations quint8 with scales and zero points
//   from a calibration pass over held-out data: every layer's input and
//   (post-ReLU) output range observed by min/max, or by the 0.01/99.99th
//   percentiles (robust to outliers). quantized::linear(_relu),
//   quantized::conv2d(_relu).new, quantized max-pooling; logits dequantized.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace perfbench::quant {

struct TaskData {
  torch::Tensor train_x, train_y, calib_x, test_x, test_y;
};

// Quantization parameters of one activation tensor.
struct QParams {
  double scale = 1;
  int64_t zero_point = 0;
};

enum class Observer { kMinMax, kPercentile };

class QuantModel {
 public:
  // Builds and trains (seeded, deterministic) `name` ("mlp" | "cnn") at `size`.
  QuantModel(const std::string& name, const std::string& size, uint64_t seed);

  const TaskData& data() const { return data_; }
  const std::string& name() const { return name_; }
  torch::Tensor Fp32(const torch::Tensor& x) const;
  torch::Tensor Int8Dynamic(const torch::Tensor& x) const;
  torch::Tensor Int8Static(const torch::Tensor& x) const;
  // int8 dynamic through at::_int_mm (int8 x int8 -> int32 GEMM; CUDA since
  // 2.1, CPU since 2.4): activations per row, weights per output channel,
  // symmetric; rows padded to 17 and columns to a multiple of 8 for the CUDA
  // kernel's constraints. The GPU's int8 path; testable on the CPU.
  torch::Tensor Int8IntMm(const torch::Tensor& x) const;
  void PrepareIntMm();
  // Moves the fp32 weights and the _int_mm weights to `device`.
  void To(const torch::Device& device);
  torch::Device device() const { return device_; }

  // Prepares the int8 versions. `miscalibrate` multiplies every activation
  // scale (tests: 100 is a deliberately broken calibration).
  void PrepareDynamic();
  void Calibrate(Observer observer, double miscalibrate = 1.0);
  // Activation qparams by name, after Calibrate ("fc1.in", "fc1.out", ...).
  const std::map<std::string, QParams>& activation_qparams() const { return act_; }

  // On the test set; precision "int8_intmm" selects the _int_mm path.
  double Accuracy(const std::string& precision) const;
  int64_t ModelBytes(const std::string& precision) const;
  int64_t input_features() const;  // per sample, flattened

 private:
  struct Layer {  // one Linear or Conv2d
    std::string name;
    bool conv = false;
    bool relu_after = false;
    bool pool_after = false;  // 2x2 max pool after the ReLU
    torch::Tensor weight, bias;
    c10::IValue packed;  // prepacked int8 weights
    torch::Tensor wq_t, w_scale;  // _int_mm: int8 [K, N padded], fp32 [N padded]
  };
  torch::Tensor Run(const torch::Tensor& x, int mode) const;  // 0 fp32, 1 dynamic, 2 static
  void Train(uint64_t seed);
  void InitLayers(int64_t in, int64_t hidden, int64_t image);
  void Fit(int64_t steps, int64_t batch, int64_t train);
  std::map<std::string, torch::Tensor> Observe(const torch::Tensor& x) const;

  std::string name_, size_;
  std::vector<Layer> layers_;
  TaskData data_;
  std::map<std::string, QParams> act_;
  bool reduce_range_ = false;
  int64_t image_ = 0;
  torch::Device device_{torch::kCPU};
};

// Picks the quantized engine: X86, else FBGEMM, else oneDNN, else QNNPACK,
// from at::globalContext().supportedQEngines(); returns its name ("x86").
std::string SelectQEngine();

// Activation qparams (quint8, asymmetric) for the range [lo, hi], which is
// widened to include 0; quant_max 127 when `reduce_range` (FBGEMM/X86 need it).
QParams ActivationQParams(double lo, double hi, bool reduce_range);

}  // namespace perfbench::quant
