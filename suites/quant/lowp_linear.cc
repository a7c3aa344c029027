#include "lowp_linear.h"

#include <limits>
#include <map>
#include <mutex>

#include "int8_ops.h"

namespace perfbench::quant {
namespace {

constexpr double kInt8Max = 127, kFp8Max = 448;  // e4m3's largest finite value
constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t RoundUp(int64_t v, int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

bool IsFp8(LowpFormat f) { return f != LowpFormat::kInt8; }

// The first line of a LibTorch error, without "please report a bug" noise.
std::string Complaint(const c10::Error& e) {
  std::string what = e.what_without_backtrace();
  if (const auto cut = what.find("please report a bug to PyTorch. "); cut != std::string::npos)
    what = what.substr(cut + 32);
  if (const auto nl = what.find('\n'); nl != std::string::npos) what = what.substr(0, nl);
  return what.size() > 240 ? what.substr(0, 240) + "..." : what;
}

// Once per process and key: `probe` runs at the first call, its answer is kept.
std::string Once(const std::string& key, const std::function<std::string()>& probe) {
  static std::mutex mu;
  static std::map<std::string, std::string> answers;
  std::lock_guard<std::mutex> lock(mu);
  auto it = answers.find(key);
  if (it == answers.end()) it = answers.emplace(key, probe()).first;
  return it->second;
}

}  // namespace

std::string FormatName(LowpFormat format) {
  switch (format) {
    case LowpFormat::kInt8: return "int8";
    case LowpFormat::kFp8RowWise: return "fp8 row-wise";
    case LowpFormat::kFp8TensorWise: return "fp8 tensor-wise";
  }
  return "?";
}

GemmShape PaddedShape(LowpFormat format, bool cuda, GemmShape s) {
  // LibTorch 2.11's CPU _int_mm returns garbage at an inner size of 1 (every
  // other size checked against an int32 matmul up to 39 is exact).
  if (!cuda) return {s.m, format == LowpFormat::kInt8 && s.k == 1 ? 2 : s.k, s.n};
  if (IsFp8(format)) return {s.m, RoundUp(s.k, 16), RoundUp(s.n, 16)};
  return {s.m <= 16 ? 17 : s.m, RoundUp(s.k, 8), RoundUp(s.n, 8)};
}

LowpLinear LowpLinear::Prepare(const torch::Tensor& weight, const torch::Tensor& bias, const LowpSpec& spec) {
  torch::NoGradGuard no_grad;
  const LowpFormat format = spec.format;
  LowpLinear l;
  l.format_ = format;
  l.nn_layout_ = spec.nn_layout;
  l.cuda_ = weight.is_cuda();
  const auto w = weight.detach().to(torch::kFloat32);
  l.out_ = w.size(0);
  l.in_ = w.size(1);
  const GemmShape p = PaddedShape(format, l.cuda_, {1, l.in_, l.out_});
  const double qmax = IsFp8(format) ? kFp8Max : kInt8Max;
  const bool tensor_wise = format == LowpFormat::kFp8TensorWise;
  const auto scale = (tensor_wise ? w.abs().max() : w.abs().amax(1)).clamp_min(1e-12) / qmax;
  auto q = (tensor_wise ? w / scale : w / scale.unsqueeze(1)).clamp(-qmax, qmax);
  q = torch::constant_pad_nd(IsFp8(format) ? q : q.round(), {0, p.k - l.in_, 0, p.n - l.out_});
  q = q.to(IsFp8(format) ? torch::kFloat8_e4m3fn : torch::kInt8);
  l.weight_ = (spec.nn_layout ? q.t() : q).contiguous();
  l.w_scale_ = tensor_wise ? scale : torch::constant_pad_nd(scale, {0, p.n - l.out_}, 1.0).unsqueeze(0);
  l.bias_ = torch::constant_pad_nd(bias.detach().to(torch::kFloat32), {0, p.n - l.out_})
                .to(IsFp8(format) ? spec.activations : torch::kFloat32);
  l.eps_ = torch::full({}, 1e-12, w.options());
  return l;
}

torch::Tensor LowpLinear::operator()(const torch::Tensor& input) const {
  const auto x = input.reshape({-1, in_});
  auto y = IsFp8(format_) ? Fp8(x) : Int8(x);
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() = out_;
  return y.reshape(shape);
}

// Per-row symmetric int8, the int32 products dequantized with the bias in
// one addcmul. On the CPU the rows are quantized in one quantize_per_channel
// kernel whose int8 storage is read in place (no int_repr copy); on CUDA
// that op checks its zero points on the host (two syncs a call, and no
// graph capture), so there the rows are divided, rounded and cast (the
// scale bounds |x / scale| by 127: no clamp).
torch::Tensor LowpLinear::Int8(const torch::Tensor& x) const {
  const int64_t m = x.size(0);
  const GemmShape p = PaddedShape(format_, cuda_, {m, in_, out_});
  const auto scale = at::add(eps_, at::linalg_vector_norm(x, kInf, {1}), 1 / kInt8Max);  // [m]
  torch::Tensor xq;
  if (cuda_) {
    xq = at::div(x, scale.unsqueeze(1)).round_().to(torch::kInt8);
  } else {
    if (!zero_points_.defined() || zero_points_.size(0) < m)
      zero_points_ = torch::zeros({std::max<int64_t>(m, 256)}, x.options().dtype(torch::kInt64));
    const auto q = at::quantize_per_channel(x, scale, zero_points_.slice(0, 0, m), 0, at::kQInt8);
    xq = at::from_blob(q.data_ptr(), q.sizes(), q.strides(), [q](void*) {}, x.options().dtype(torch::kInt8));
  }
  if (p.m != m || p.k != in_) xq = torch::constant_pad_nd(xq, {0, p.k - in_, 0, p.m - m});
  const auto acc = at::_int_mm(xq, GemmWeight()).slice(0, 0, m).slice(1, 0, out_);
  const auto scales = at::mul(scale.unsqueeze(1), w_scale_.slice(1, 0, out_));
  return at::addcmul(bias_.slice(0, 0, out_), acc, scales);
}

// e4m3 activations scaled per row (or per tensor) so that each row's largest
// magnitude lands on 448; the scales and the bias applied in _scaled_mm's
// epilogue. The scale is computed in the activations' dtype (a bf16 row is
// divided in bf16, never copied to fp32) and handed to _scaled_mm in fp32,
// the same value.
torch::Tensor LowpLinear::Fp8(const torch::Tensor& input) const {
  const GemmShape p = PaddedShape(format_, cuda_, {input.size(0), in_, out_});
  const auto x = p.k == in_ ? input : torch::constant_pad_nd(input, {0, p.k - in_});
  const bool row_wise = format_ == LowpFormat::kFp8RowWise;
  const auto amax = row_wise ? at::linalg_vector_norm(x, kInf, {1}, true) : at::linalg_vector_norm(x, kInf);
  const auto scale = at::add(eps_, amax, 1 / kFp8Max);
  const auto xq = at::div(x, scale).to(torch::kFloat8_e4m3fn);
  const auto scale32 = scale.scalar_type() == torch::kFloat32 ? scale : scale.to(torch::kFloat32);
  auto y = at::_scaled_mm(xq, GemmWeight(), scale32, w_scale_, bias_, std::nullopt, x.scalar_type());
  return p.n == out_ ? y : y.slice(1, 0, out_);
}

int64_t LowpLinear::Bytes() const {
  const int64_t scales = format_ == LowpFormat::kFp8TensorWise ? 1 : out_;
  return out_ * in_ + 4 * scales + static_cast<int64_t>(bias_.element_size()) * out_;
}

std::string ProbeLowp(LowpFormat format, const torch::Device& device) {
  return Once(FormatName(format) + "@" + device.str(), [&]() -> std::string {
    try {
      torch::NoGradGuard no_grad;
      const auto options = torch::TensorOptions().device(device);
      // fp8 on CUDA runs with bf16 activations (row-wise scaling wants a bf16 output).
      const auto act = IsFp8(format) && device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
      const auto l = LowpLinear::Prepare(torch::randn({32, 64}, options), torch::randn({32}, options), {format, act});
      auto y = l(torch::randn({17, 64}, options.dtype(act))).to(torch::kCPU, torch::kFloat32);
      if (!y.isfinite().all().item<bool>()) return FormatName(format) + " gave non-finite outputs on " + device.str();
      return "";
    } catch (const c10::Error& e) {
      const char* kernel = IsFp8(format) ? "at::_scaled_mm" : "at::_int_mm";
      return FormatName(format) + " does not run on " + device.str() + ": " + kernel + " says \"" + Complaint(e) + "\"";
    }
  });
}

std::string ProbeHalf(torch::ScalarType dtype, const torch::Device& device) {
  const std::string name = dtype == torch::kBFloat16 ? "bf16" : "fp16";
  return Once(name + "@" + device.str(), [&]() -> std::string {
    if (device.is_cpu()) {
      const char* op = dtype == torch::kBFloat16 ? "mkldnn::_is_mkldnn_bf16_supported" : "mkldnn::_is_mkldnn_fp16_supported";
      bool native = false;
      try {
        native = CallOp(op, "", {}).toBool();
      } catch (const c10::Error&) {  // a LibTorch without oneDNN
      }
      if (native) return "";
      return name + " has no native support on this CPU (oneDNN reports none: it needs " +
             (dtype == torch::kBFloat16 ? "AVX512-BF16 or AMX" : "AVX512-FP16 or AMX-FP16") +
             "); LibTorch would emulate it, many times slower than fp32";
    }
    try {
      const auto a = torch::randn({32, 32}, torch::TensorOptions().device(device).dtype(dtype));
      a.mm(a).to(torch::kCPU);
      return "";
    } catch (const c10::Error& e) {
      return name + " does not run on " + device.str() + ": " + Complaint(e);
    }
  });
}

}  // namespace perfbench::quant
