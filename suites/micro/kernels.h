// The micro suite's kernels: what runs, how much work one call does, and
// the Google Benchmark case that times it (torch).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>

#include "gbench_engine.h"
#include "micro_workload.h"

namespace perfbench::micro {

// One kernel call and its work: 2mnk FLOP for a GEMM (integer ops for
// int8), bytes read + written for memory kernels (STREAM's counting).
struct Kernel {
  std::function<void()> run;
  double flop = 0;
  double bytes = 0;
  double estimate_s = -1;  // a full call's seconds when known without one (GEMM: from its first rows)
  // Optional: checks what the last `run` produced (GEMM: a slice of the
  // product against fp64); throws std::runtime_error naming the error.
  std::function<void()> check;
};

// "cuda" -> the first GPU, anything else -> the CPU.
torch::Device DeviceFor(const std::string& device);

// "fp32" | "bf16" | "fp16" | "int8" | "fp8" (e4m3); throws
// std::invalid_argument otherwise.
torch::ScalarType ParseDtype(const std::string& name);

// How B is stored: NN, row-major [k, n]; TN, [n, k] contiguous and handed
// to the GEMM as its transposed view (nn.Linear's weight; the layout
// cuBLASLt's int8 and fp8 kernels run). "NN" | "TN"; throws
// std::invalid_argument otherwise.
enum class Layout { kNN, kTN };
Layout ParseLayout(const std::string& name);

// C = A B with A m x k, B k x n in `layout` (int8: at::_int_mm into int32;
// fp8: at::_scaled_mm with unit tensor-wise scales into bf16), operands
// made on `device` (seeded by their shape). At set-up the product of A's
// first 64 rows is timed (the estimate) and a slice of it checked; `check`
// checks the same slice of the timed product C: its first and last 8 rows
// and columns against an fp64 product of just those rows of A and columns
// of B on the host (a wrong kernel is not a fast one, and the check costs
// 16 x 16 x k, not m x n x k). Throws std::runtime_error naming the error
// when it is off.
Kernel Gemm(torch::ScalarType dtype, int64_t m, int64_t n, int64_t k, const torch::Device& device,
            Layout layout = Layout::kTN);
// "" when a small GEMM of `dtype` runs on `device`; else why not, in the
// kernel's words (fp8 needs compute capability 8.9 on CUDA).
std::string GemmUnsupported(torch::ScalarType dtype, const torch::Device& device, Layout layout = Layout::kTN);
// A ResNet-like 3x3 convolution, stride 1, padding 1: batch x channels x hw x hw.
Kernel Conv2d(torch::ScalarType dtype, int64_t batch, int64_t channels, int64_t hw, const torch::Device& device);
// dst.copy_(src) (2 bytes moved per byte) or c = a + b (3 per byte), fp32.
Kernel Copy(int64_t bytes, const torch::Device& device);
Kernel Add(int64_t bytes, const torch::Device& device);
// Host <-> device copies of `bytes` from pageable or pinned host memory.
Kernel Transfer(bool to_device, bool pinned, int64_t bytes, const torch::Device& device);

// Seconds one call of `kernel` takes (synchronised), and the estimate the
// kernel brings, else one timed call: for budgets.
double TimeOneCall(const Kernel& kernel, const torch::Device& device);
double EstimateCall(const Kernel& kernel, const torch::Device& device);

// The case that times `kernel`: real time on the CPU (the calls are
// synchronous); on a GPU CUDA events around each call give manual time.
// Counters: flops and/or bandwidth (per second of that time); on a GPU an
// iteration holds ~1 ms of calls (kCallsCounter says how many).
BenchCase CaseFor(const std::string& name, Kernel kernel, const torch::Device& device);

// A micro workload measured by one kernel, made at set-up. Like the
// runner's budget (--timeout per variant), a variant whose repetitions (and
// warm-up) cannot fit is skipped before it is timed, naming its call time:
// an emulated bf16 GEMM of n = 4096 on a CPU does not hold a run for half an
// hour.
class KernelWorkload : public MicroWorkload {
 public:
  Status SetUp(const RunContext& ctx) override;
  std::vector<BenchCase> Cases() override { return {CaseFor(name_, kernel_, *device_)}; }
  // The kernel's check (Kernel::check) of what its last timed call produced.
  Status Verify(const VerifyContext& ctx) override;
  void TearDown() override { kernel_ = {}; }

 protected:
  virtual Kernel Make(const Params& p, const torch::Device& device) = 0;
  // "" when the device runs this variant's kernel, else why not (skipped).
  virtual std::string Unsupported(const Params&, const torch::Device&) { return ""; }
  // The control's pinned kernels: measured whatever the run's budget (only --timeout skips them).
  virtual bool Pinned() const { return false; }

 private:
  std::unique_ptr<torch::Device> device_;
  std::string name_;
  Kernel kernel_;
};

}  // namespace perfbench::micro
