// The micro suite: the kernels under the training steps, timed by Google
// Benchmark (see micro_workload.h), stored like every other suite.
//
// micro/gemm       params dtype (fp32 | bf16 | fp16 | int8 through
//                  at::_int_mm), n (square m = n = k); flops = 2 n^3 / time.
//                  Quick n = 256; full n = 512, 2048. The product is checked
//                  against fp64 at set-up.
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

#include "kernels.h"
#include "micro_workload.h"

namespace perfbench::micro {
namespace {

const MetricSpec kTime{"time", "s", Better::kLower};
const MetricSpec kFlops{"flops", "FLOP/s", Better::kHigher};
const MetricSpec kBandwidth{"bandwidth", "B/s", Better::kHigher};

// A variant measured by one kernel: its cases are that kernel's case.
class OneKernel : public MicroWorkload {
 public:
  Status SetUp(const RunContext& ctx) override {
    device_ = std::make_unique<torch::Device>(DeviceFor(ctx.settings.device));
    name_ = ctx.params.Encode();
    kernel_ = Make(ctx.params, *device_);
    return Status::Ok();
  }
  std::vector<BenchCase> Cases() override { return {CaseFor(name_, kernel_, *device_)}; }
  void TearDown() override { kernel_ = {}; }

 protected:
  virtual Kernel Make(const Params& p, const torch::Device& device) = 0;

 private:
  std::unique_ptr<torch::Device> device_;
  std::string name_;
  Kernel kernel_;
};

class GemmKernel final : public OneKernel {
  Kernel Make(const Params& p, const torch::Device& device) override {
    const int64_t n = std::stoll(p.Get("n"));
    return Gemm(ParseDtype(p.Get("dtype")), n, n, n, device);
  }
};

class ConvKernel final : public OneKernel {
  Kernel Make(const Params& p, const torch::Device& device) override {
    const bool conv2 = p.Get("layer") == "conv2";
    return Conv2d(ParseDtype(p.Get("dtype")), conv2 ? 32 : 1, conv2 ? 64 : 128, conv2 ? 56 : 28, device);
  }
};

class BandwidthKernel final : public OneKernel {
  Kernel Make(const Params& p, const torch::Device& device) override {
    const int64_t bytes = std::stoll(p.Get("bytes"));
    return p.Get("op") == "add" ? Add(bytes, device) : Copy(bytes, device);
  }
};

template <bool kToDevice>
class TransferKernel final : public OneKernel {
  Kernel Make(const Params& p, const torch::Device& device) override {
    return Transfer(kToDevice, p.Get("memory") == "pinned", std::stoll(p.Get("bytes")), device);
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

const std::vector<std::string> kGemmDtypes = {"fp32", "bf16", "fp16", "int8"};

WorkloadInfo GemmInfo() {
  WorkloadInfo info = Base("gemm", "matrix multiply, square n: FLOP/s (int8: integer ops/s)", kFlops, "dtype");
  for (const char* n : {"512", "2048"}) {
    auto v = Cross("dtype", kGemmDtypes, "n", n);
    info.variants.insert(info.variants.end(), v.begin(), v.end());
  }
  info.quick_variants = Cross("dtype", kGemmDtypes, "n", "256");
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
