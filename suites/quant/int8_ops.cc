#include "int8_ops.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace perfbench::quant {

std::string SelectQEngine() {
  const auto& engines = at::globalContext().supportedQEngines();
  for (auto want : {at::QEngine::X86, at::QEngine::FBGEMM, at::QEngine::ONEDNN, at::QEngine::QNNPACK}) {
    if (std::find(engines.begin(), engines.end(), want) != engines.end()) {
      at::globalContext().setQEngine(want);
      return c10::toString(want);
    }
  }
  throw std::runtime_error("this LibTorch has no quantized engine");
}

bool EngineWantsReducedRange() {
  const auto engine = at::globalContext().qEngine();
  return engine == at::QEngine::FBGEMM || engine == at::QEngine::X86;
}

c10::IValue CallOp(const char* name, const char* overload, std::vector<c10::IValue> args) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  torch::jit::Stack stack(std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  op.callBoxed(&stack);
  return std::move(stack[0]);
}

torch::Tensor QuantizeWeight(const torch::Tensor& w) {
  const double scale = std::max(w.abs().max().item<double>(), 1e-8) / 127.0;
  return at::quantize_per_tensor(w, scale, 0, at::kQInt8);
}

torch::Tensor QuantizeWeightPerChannel(const torch::Tensor& w) {
  const auto scales = w.abs().reshape({w.size(0), -1}).amax(1).clamp_min(1e-8).to(torch::kFloat64) / 127.0;
  return at::quantize_per_channel(w, scales, torch::zeros({w.size(0)}, torch::kInt64), 0, at::kQInt8);
}

QParams ActivationQParams(double lo, double hi, bool reduce_range) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  const double qmax = reduce_range ? 127 : 255;
  QParams q;
  q.scale = std::max((hi - lo) / qmax, 1e-8);
  q.zero_point = std::clamp<int64_t>(static_cast<int64_t>(std::lround(-lo / q.scale)), 0, static_cast<int64_t>(qmax));
  return q;
}

void ActivationObserver::Record(const std::string& name, const torch::Tensor& t) {
  constexpr int64_t kKeep = int64_t{1} << 20;
  auto flat = t.detach().to(torch::kCPU, torch::kFloat32).reshape(-1);
  const double lo = flat.min().item<double>(), hi = flat.max().item<double>();
  auto [it, fresh] = ranges_.try_emplace(name);
  Range& r = it->second;
  r.lo = fresh ? lo : std::min(r.lo, lo);
  r.hi = fresh ? hi : std::max(r.hi, hi);
  const int64_t n = flat.size(0);
  r.sample.push_back(n <= kKeep ? flat.clone() : flat.slice(0, 0, n, (n + kKeep - 1) / kKeep).clone());
}

std::map<std::string, QParams> ActivationObserver::Finish(Observer observer, bool reduce_range,
                                                          double miscalibrate) const {
  std::map<std::string, QParams> out;
  for (const auto& [name, r] : ranges_) {
    double lo = r.lo, hi = r.hi;
    if (observer == Observer::kPercentile) {
      auto sorted = std::get<0>(torch::cat(r.sample).sort());
      const int64_t n = sorted.size(0);
      lo = sorted[std::clamp<int64_t>(static_cast<int64_t>(std::floor(0.0001 * (n - 1))), 0, n - 1)].item<double>();
      hi = sorted[std::clamp<int64_t>(static_cast<int64_t>(std::ceil(0.9999 * (n - 1))), 0, n - 1)].item<double>();
    }
    QParams q = ActivationQParams(lo, hi, reduce_range);
    q.scale *= miscalibrate;
    out[name] = q;
  }
  return out;
}

}  // namespace perfbench::quant
