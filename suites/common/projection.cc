#include "common/projection.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>

#include "common/training.h"

namespace perfbench::common {

double GemmProbeFlops(const torch::Device& device, torch::ScalarType dtype) {
  static std::mutex mu;
  static std::map<std::string, double> known;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = device.str() + "/" + c10::toString(dtype);
  if (auto it = known.find(key); it != known.end()) return it->second;
  const int64_t n = device.is_cuda() ? 4096 : 512;
  torch::NoGradGuard no_grad;
  auto a = torch::randn({n, n}, torch::TensorOptions().device(device).dtype(dtype)), b = a.clone();
  double best = 1e30;
  for (int i = 0; i < 4; ++i) {
    SynchronizeDevice(device);
    const auto t0 = std::chrono::steady_clock::now();
    auto c = torch::mm(a, b);
    SynchronizeDevice(device);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) best = std::min(best, s);
  }
  return known[key] = 2.0 * static_cast<double>(n * n * n) / std::max(best, 1e-9);
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
  const double rate = GemmProbeFlops(device, dtype), seconds = flop / rate;
  if (seconds <= budget_s) return "";
  return fmt::format("projected {:.0f} s for {} ({:.3g} TFLOP at the {:.3g} GFLOP/s a {} GEMM probe reached) "
                     "exceeds the {:g} s budget per variant",
                     seconds, what, flop / 1e12, rate / 1e9, c10::toString(dtype), budget_s);
}

}  // namespace perfbench::common
