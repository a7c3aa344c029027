// The int8 building blocks the quant suite's models share: the quantized
// engine, weight quantization, activation quantization parameters and their
// observers, and boxed calls into LibTorch's quantized:: CPU kernels (the
// GPU's int8 and fp8 GEMMs are in lowp_linear.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace perfbench::quant {

// Picks the quantized engine: X86, else FBGEMM, else oneDNN, else QNNPACK,
// from at::globalContext().supportedQEngines(); returns its name ("x86").
std::string SelectQEngine();
// FBGEMM and X86 want activations in 7 bits (reduce_range).
bool EngineWantsReducedRange();

// Calls the quantized:: operator `name`.`overload` boxed (robust to the exact
// C++ signature the kernels register) and returns its first output.
c10::IValue CallOp(const char* name, const char* overload, std::vector<c10::IValue> args);

// Weights as qint8, symmetric: one scale per tensor, or per output channel
// (axis 0; what PyTorch's x86 configuration uses for convolutions).
torch::Tensor QuantizeWeight(const torch::Tensor& w);
torch::Tensor QuantizeWeightPerChannel(const torch::Tensor& w);

// Quantization parameters of one activation tensor.
struct QParams {
  double scale = 1;
  int64_t zero_point = 0;
};

// Activation qparams (quint8, asymmetric) for the range [lo, hi], which is
// widened to include 0; quant_max 127 when `reduce_range` (FBGEMM/X86 need it).
QParams ActivationQParams(double lo, double hi, bool reduce_range);

enum class Observer { kMinMax, kPercentile };

// Collects the ranges of named activations over calibration batches: the
// minimum and maximum, and a sample of the values for percentiles (every
// value of tensors up to 2^20 elements, an evenly strided 2^20 of larger
// ones).
class ActivationObserver {
 public:
  void Record(const std::string& name, const torch::Tensor& t);
  // qparams per name: min/max, or the 0.01th and 99.99th percentiles (one
  // stray value cannot stretch the scale); every scale times `miscalibrate`
  // (tests: 100 is a deliberately broken calibration).
  std::map<std::string, QParams> Finish(Observer observer, bool reduce_range, double miscalibrate) const;

 private:
  struct Range {
    double lo = 0, hi = 0;
    std::vector<torch::Tensor> sample;
  };
  std::map<std::string, Range> ranges_;
};

}  // namespace perfbench::quant
