// The quant suite's low-precision Linear layers, the GPU's quantized paths:
// int8 through at::_int_mm and fp8 (e4m3) through at::_scaled_mm, weights
// per output channel, activations quantized per row on every call
// (dynamic); the shape rules those kernels need, stated once; and the
// once-per-process probes that turn a precision a device cannot run into a
// skip reason instead of a failure in warm-up.
//
// Layout: the weight is kept [N, K] contiguous and handed to the GEMM as its
// transposed view (the TN layout cuBLASLt's int8 and fp8 kernels run; the
// row-major [K, N] copy, NN, is 5x slower for int8 on an H200 and refused
// outright by CUDA 13's cuBLASLt for some shapes).
//
// ATen ops per call (the top-level ops a profiler shows, views excluded;
// tests/quant_test.cc counts them on the CPU with a RecordFunction
// callback):
//   int8  linalg_vector_norm, add (scale), quantize_per_channel, _int_mm,
//         mul (row x channel scales), addcmul (dequantize + bias): 6 on the
//         CPU; on CUDA div, round_ and to replace quantize_per_channel
//         (which syncs with the host there): 8
//   fp8   linalg_vector_norm, add (scale), div, to (e4m3), _scaled_mm
//         (scales and bias in its epilogue): 5; with bf16 activations (fp8
//         on CUDA) a sixth, the [rows] scale to fp32
// The previous int8 form took 14 (abs, amax, clamp_min, two div, round,
// clamp, to, constant_pad_nd, _int_mm, to, two mul, add). On CUDA a shape
// that needs padding adds a pad of the activations.
#pragma once

#include <string>

#include <torch/torch.h>

namespace perfbench::quant {

enum class LowpFormat { kInt8, kFp8RowWise, kFp8TensorWise };

// "int8" | "fp8 row-wise" | "fp8 tensor-wise".
std::string FormatName(LowpFormat format);

struct GemmShape {
  int64_t m = 0, k = 0, n = 0;
  bool operator==(const GemmShape& o) const { return m == o.m && k == o.k && n == o.n; }
};

// The shape an [m, k] x [k, n] GEMM runs at for `format` on CUDA (`cuda`) or
// the CPU: on CUDA int8 needs more than 16 rows (m <= 16 becomes 17) and k,
// n multiples of 8; fp8 needs k, n multiples of 16; a size that fits is
// kept. The CPU pads nothing but an int8 inner size of 1 (to 2: LibTorch
// 2.11's CPU _int_mm is wrong there). Padding is zeros: it adds nothing to the
// products, and the extra rows and columns are sliced off.
GemmShape PaddedShape(LowpFormat format, bool cuda, GemmShape shape);

// What a LowpLinear is made as: its format, the dtype of the activations it
// sees (fp8's bias is kept in it: _scaled_mm adds the bias in the output's
// dtype), and the layout of its weight: TN, or NN (the weight stored
// row-major [K, N], the previous layout, kept to measure against).
struct LowpSpec {
  LowpFormat format = LowpFormat::kInt8;
  torch::ScalarType activations = torch::kFloat32;
  bool nn_layout = false;
};

// A Linear layer in `format`. x: [..., in] in fp32 (or bf16 for fp8 on
// CUDA) on the weights' device; returns [..., out] in x's dtype.
class LowpLinear {
 public:
  LowpLinear() = default;
  // Quantizes `weight` [out, in] (per output channel, symmetric) on its
  // device, padded for that device.
  static LowpLinear Prepare(const torch::Tensor& weight, const torch::Tensor& bias, const LowpSpec& spec);

  torch::Tensor operator()(const torch::Tensor& x) const;
  bool defined() const { return weight_.defined(); }
  LowpFormat format() const { return format_; }
  // The GEMM's second operand: the [N, K] weight's transposed view (TN), or
  // the row-major [K, N] weight (NN).
  torch::Tensor GemmWeight() const { return nn_layout_ ? weight_ : weight_.t(); }
  // Weight bytes: one byte per weight, an fp32 scale per channel, the bias.
  int64_t Bytes() const;

 private:
  torch::Tensor Int8(const torch::Tensor& x) const;
  torch::Tensor Fp8(const torch::Tensor& x) const;

  LowpFormat format_ = LowpFormat::kInt8;
  torch::Tensor weight_;       // int8 or e4m3 [N padded, K padded] contiguous (NN: [K, N])
  torch::Tensor w_scale_;      // fp32 [1, N padded] per channel, or [] for tensor-wise
  torch::Tensor bias_;         // fp32 [N padded] (fp8: in the activations' dtype)
  torch::Tensor eps_;          // fp32 [] on the device: keeps an all-zero row's scale positive
  mutable torch::Tensor zero_points_;  // int64 zeros, grown to the largest row count seen (int8 on the CPU)
  int64_t in_ = 0, out_ = 0;
  bool cuda_ = false, nn_layout_ = false;
};

// "" when `format` runs on `device` (a small GEMM through the real kernel,
// tried once per process); else the reason, naming the kernel's complaint.
std::string ProbeLowp(LowpFormat format, const torch::Device& device);
// "" when `dtype` (bf16 or fp16) inference runs natively on `device`: on the
// CPU, where oneDNN reports native support (AVX512-BF16, AMX or AVX512-FP16:
// without it LibTorch emulates them and they run many times slower than
// fp32); on CUDA, where a small matmul runs.
std::string ProbeHalf(torch::ScalarType dtype, const torch::Device& device);

}  // namespace perfbench::quant
