// The micro suite: the kernels under the training steps, timed by Google
// Benchmark (see micro_workload.h), stored like every other suite.
//
// micro/gemm       params dtype (fp32 | bf16 | fp16 | int8 through
//                  at::_int_mm | fp8 e4m3 through at::_scaled_mm, bf16
//                  out), n (square m = n = k), layout (TN: B kept [n, k]
//                  and passed transposed, as nn.Linear's weight and the
//                  layout cuBLASLt's int8/fp8 kernels run; NN on request);
//                  flops = 2 n^3 / time. A dtype the device does not run
//                  (fp8 below compute capability 8.9) is skipped with the
//                  kernel's reason.
//                  Quick n = 256; full n = 1024, 4096 (on a CPU without
//                  native bf16/fp16 those are skipped at 4096 by the budget).
//                  The product is checked against fp64 at set-up.
// micro/conv2d     params dtype (fp32 | bf16), layer: a ResNet 3x3 layer,
//                  stride 1: quick conv3 (batch 1, 128 channels, 28x28),
//                  full conv2 (batch 32, 64 channels, 56x56); flops = 2 N C^2
//                  9 H W / time.
// micro/bandwidth  params op (copy | add), bytes of one fp32 operand (quick
//                  32 MiB, full 256 MiB: beyond the caches); bandwidth =
//                  bytes read + written / time (STREAM's counting).
// micro/h2d, d2h   params memory (pageable | pinned), bytes (64 MiB):
//                  needs cuda (skipped with the reason on the CPU).
// All variants of a workload run in one Google Benchmark run, their
// repetitions interleaved at random. time = seconds per kernel call.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels.h"
#include "micro_workload.h"

namespace perfbench::micro {
namespace {

const MetricSpec kTime{"time", "s", Better::kLower};
const MetricSpec kFlops{"flops", "FLOP/s", Better::kHigher};
const MetricSpec kBandwidth{"bandwidth", "B/s", Better::kHigher};

// A param's value when it is one of `allowed`; throws std::invalid_argument
// naming it otherwise (--param op=triad must not measure a copy).
std::string OneOf(const Params& p, const std::string& key, const std::vector<std::string>& allowed) {
  std::string v = p.Get(key);
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw std::invalid_argument("param " + key + "='" + v + "': expected one of " + list);
}

// A positive integer param; throws std::invalid_argument naming it otherwise.
int64_t Positive(const Params& p, const std::string& key) {
  const std::string v = p.Get(key);
  size_t used = 0;
  int64_t n = 0;
  try {
    n = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty() || n <= 0) throw std::invalid_argument("param " + key + "='" + v + "': expected a positive integer");
  return n;
}

class GemmKernel final : public KernelWorkload {
  Kernel Make(const Params& p, const torch::Device& device) override {
    const int64_t n = Positive(p, "n");
    return Gemm(ParseDtype(p.Get("dtype")), n, n, n, device, ParseLayout(p.Get("layout", "TN")));
  }
  std::string Unsupported(const Params& p, const torch::Device& device) override {
    const auto dtype = ParseDtype(p.Get("dtype"));
    const Layout layout = ParseLayout(p.Get("layout", "TN"));
    return dtype == torch::kInt8 || dtype == torch::kFloat8_e4m3fn ? GemmUnsupported(dtype, device, layout) : "";
  }
};

class ConvKernel final : public KernelWorkload {
  Kernel Make(const Params& p, const torch::Device& device) override {
    const bool conv2 = OneOf(p, "layer", {"conv2", "conv3"}) == "conv2";
    return Conv2d(ParseDtype(p.Get("dtype")), conv2 ? 32 : 1, conv2 ? 64 : 128, conv2 ? 56 : 28, device);
  }
};

class BandwidthKernel final : public KernelWorkload {
  Kernel Make(const Params& p, const torch::Device& device) override {
    const int64_t bytes = Positive(p, "bytes");
    return OneOf(p, "op", {"copy", "add"}) == "add" ? Add(bytes, device) : Copy(bytes, device);
  }
};

template <bool kToDevice>
class TransferKernel final : public KernelWorkload {
  Kernel Make(const Params& p, const torch::Device& device) override {
    const bool pinned = OneOf(p, "memory", {"pageable", "pinned"}) == "pinned";
    return Transfer(kToDevice, pinned, Positive(p, "bytes"), device);
  }
};
using H2dKernel = TransferKernel<true>;
using D2hKernel = TransferKernel<false>;

// One variant per value of `key`, each with `other` = `other_value`.
std::vector<Params> Cross(const std::string& key, const std::vector<std::string>& values, const std::string& other,
                          const std::string& other_value) {
  std::vector<Params> out;
  for (const auto& v : values) {
    Params p;
    p.Set(other, other_value);
    p.Set(key, v);
    out.push_back(p);
  }
  return out;
}

// Variants differing only in `interleaved` share one Google Benchmark run.
WorkloadInfo Base(const std::string& name, const std::string& description, const MetricSpec& rate,
                  const std::string& interleaved) {
  WorkloadInfo info;
  info.compare_param = interleaved;
  info.suite = "micro";
  info.name = name;
  info.description = description;
  info.metrics = {kTime, rate};
  info.engine = MicroEngine();
  return info;
}

const std::vector<std::string> kGemmDtypes = {"fp32", "bf16", "fp16", "int8", "fp8"};

// Every dtype at `n`, all in the TN layout (so that they share one run).
std::vector<Params> GemmVariants(const std::string& n) {
  auto v = Cross("dtype", kGemmDtypes, "n", n);
  for (auto& p : v) p.Set("layout", "TN");
  return v;
}

WorkloadInfo GemmInfo() {
  WorkloadInfo info = Base("gemm", "matrix multiply, square n, B transposed (TN): FLOP/s (int8: integer ops/s)", kFlops,
                           "dtype");
  for (const char* n : {"1024", "4096"}) {
    auto v = GemmVariants(n);
    info.variants.insert(info.variants.end(), v.begin(), v.end());
  }
  info.quick_variants = GemmVariants("256");
  return info;
}

WorkloadInfo ConvInfo() {
  WorkloadInfo info = Base("conv2d", "ResNet 3x3 convolution layer, forward: FLOP/s", kFlops, "dtype");
  info.variants = Cross("dtype", {"fp32", "bf16"}, "layer", "conv2");
  info.quick_variants = Cross("dtype", {"fp32", "bf16"}, "layer", "conv3");
  return info;
}

WorkloadInfo BandwidthInfo() {
  WorkloadInfo info = Base("bandwidth", "fp32 copy and add over large arrays: bytes read + written per s", kBandwidth, "op");
  info.variants = Cross("op", {"copy", "add"}, "bytes", std::to_string(256LL << 20));
  info.quick_variants = Cross("op", {"copy", "add"}, "bytes", std::to_string(32LL << 20));
  return info;
}

WorkloadInfo TransferInfo(const std::string& name, const std::string& description) {
  WorkloadInfo info = Base(name, description, kBandwidth, "memory");
  info.needs = {"cuda"};
  info.variants = Cross("memory", {"pageable", "pinned"}, "bytes", std::to_string(64LL << 20));
  return info;
}

}  // namespace

PERFBENCH_REGISTER_WORKLOAD(GemmKernel, GemmInfo());
PERFBENCH_REGISTER_WORKLOAD(ConvKernel, ConvInfo());
PERFBENCH_REGISTER_WORKLOAD(BandwidthKernel, BandwidthInfo());
PERFBENCH_REGISTER_WORKLOAD(H2dKernel, TransferInfo("h2d", "host to device copy: bytes/s"));
PERFBENCH_REGISTER_WORKLOAD(D2hKernel, TransferInfo("d2h", "device to host copy: bytes/s"));

}  // namespace perfbench::micro
