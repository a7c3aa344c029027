#include "common/projection.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>

#include "common/training.h"

namespace perfbench::common {
namespace {

// `probe`'s rate, measured once per process and (device, dtype) in `known`.
template <typename Probe>
double Once(std::map<std::string, double>& known, const torch::Device& device, torch::ScalarType dtype, Probe probe) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = device.str() + "/" + c10::toString(dtype);
  if (auto it = known.find(key); it != known.end()) return it->second;
  return known[key] = probe();
}

// Seconds of `fn`, the device synchronised before and after.
template <typename Fn>
double SyncedSeconds(const torch::Device& device, Fn&& fn) {
  SynchronizeDevice(device);
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  SynchronizeDevice(device);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ConvProbeFlops' measurement (projection.h).
double ConvRate(const torch::Device& device, torch::ScalarType dtype) {
  // channels_last, as amp runs its convolutional models (oneDNN picks its kernels per layout).
  const auto opts = torch::TensorOptions().device(device).dtype(dtype);
  const int64_t c = 64, hw = 16;
  torch::AutoGradMode grad_mode(true);
  auto w = torch::randn({c, c, 3, 3}, opts).contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
  const auto pass = [&](const torch::Tensor& x) {
    auto y = torch::conv2d(x, w, {}, 1, 1);
    torch::autograd::grad({y}, {x, w}, {torch::ones_like(y)});  // both backward products, no .grad kept
  };
  double rate = 0;
  for (int64_t batch = 1;; batch *= 4) {
    auto x = torch::randn({batch, c, hw, hw}, opts).contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
    pass(x);  // untimed: picks kernels (loads cuDNN on a GPU) and allocates
    double best = 1e30;
    for (int i = 0; i < 2; ++i) {
      best = std::min(best, SyncedSeconds(device, [&] { pass(x); }));
      if (best > 0.2) break;  // a reference kernel: one timed pass says enough
    }
    const double flop = 3.0 * 2.0 * static_cast<double>(batch * c * c * 9 * hw * hw);  // forward and two backward products
    rate = flop / std::max(best, 1e-9);
    if (best > 0.02 || batch >= 16) break;
  }
  return rate;
}

}  // namespace

double GemmProbeFlops(const torch::Device& device, torch::ScalarType dtype) {
  static std::map<std::string, double> known;
  return Once(known, device, dtype, [&] {
    const int64_t n = device.is_cuda() ? 4096 : 512;
    torch::NoGradGuard no_grad;
    auto a = torch::randn({n, n}, torch::TensorOptions().device(device).dtype(dtype)), b = a.clone();
    double best = 1e30;
    for (int i = 0; i < 4; ++i) {
      const double s = SyncedSeconds(device, [&] { torch::mm(a, b); });
      if (i > 0) best = std::min(best, s);
    }
    return 2.0 * static_cast<double>(n * n * n) / std::max(best, 1e-9);
  });
}

double ConvProbeFlops(const torch::Device& device, torch::ScalarType dtype) {
  static std::map<std::string, double> known;
  return Once(known, device, dtype, [&] { return ConvRate(device, dtype); });
}

double MemAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    double kib = 0;
    in >> kib;
    if (key == "MemAvailable:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

std::string TimeProjection(const std::string& what, double flop, const torch::Device& device, torch::ScalarType dtype,
                           double budget_s) {
  if (flop <= 0) return "";
  return TimeProjectionAt(what, flop, GemmProbeFlops(device, dtype), fmt::format("a {} GEMM probe", c10::toString(dtype)),
                          budget_s);
}

std::string TimeProjectionAt(const std::string& what, double flop, double rate, const std::string& probe,
                             double budget_s) {
  if (flop <= 0 || !(rate > 0)) return "";
  const double seconds = flop / rate;
  if (seconds <= budget_s) return "";
  return fmt::format("projected {:.0f} s for {} ({:.3g} TFLOP at the {:.3g} GFLOP/s {} reached) "
                     "exceeds the {:g} s budget per variant",
                     seconds, what, flop / 1e12, rate / 1e9, probe, budget_s);
}

}  // namespace perfbench::common
