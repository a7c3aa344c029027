#include "kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#ifdef PERFBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace perfbench::micro {

torch::Device DeviceFor(const std::string& device) {
  return device == "cuda" ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
}

torch::ScalarType ParseDtype(const std::string& name) {
  if (name == "fp32") return torch::kFloat32;
  if (name == "bf16") return torch::kBFloat16;
  if (name == "fp16") return torch::kFloat16;
  if (name == "int8") return torch::kInt8;
  if (name == "fp8") return torch::kFloat8_e4m3fn;
  throw std::invalid_argument("dtype '" + name + "': expected fp32, bf16, fp16, int8 or fp8");
}

Layout ParseLayout(const std::string& name) {
  if (name == "TN") return Layout::kTN;
  if (name == "NN") return Layout::kNN;
  throw std::invalid_argument("layout '" + name + "': expected TN or NN");
}

namespace {

// A random operand made on `device` itself (a host randn and copy took
// seconds for the largest peak shapes), from a clone of that device's
// default generator seeded by the shape: the same values run after run, and
// the process's generators untouched.
torch::Tensor Operand(torch::ScalarType dtype, int64_t rows, int64_t cols, const torch::Device& device) {
  at::Generator gen = at::globalContext().defaultGenerator(device).clone();
  gen.set_current_seed(static_cast<uint64_t>(rows * 7919 + cols));
  const auto on = torch::TensorOptions().device(device);
  if (dtype == torch::kInt8) return torch::randint(-8, 8, {rows, cols}, gen, on.dtype(torch::kInt8));
  return torch::randn({rows, cols}, gen, on.dtype(torch::kFloat32)).to(dtype);
}

// Largest |C - C_ref| / max |C_ref| a dtype may show (fp32 accumulation;
// fp8's bf16 output).
double Tolerance(torch::ScalarType dtype) {
  if (dtype == torch::kInt8) return 0;
  if (dtype == torch::kFloat32) return 1e-4;
  return 2e-2;
}

// The first and last kEdge entries of `t` along `dim` (all of it when that
// is no more than 2 kEdge).
torch::Tensor Edges(const torch::Tensor& t, int64_t dim) {
  constexpr int64_t kEdge = 8;
  const int64_t size = t.size(dim);
  if (size <= 2 * kEdge) return t;
  return torch::cat({t.narrow(dim, 0, kEdge), t.narrow(dim, size - kEdge, kEdge)}, dim);
}

// Compares the edge rows and columns of `got` = a b with an fp64 product of
// just those rows of a and columns of b on the host: enough to catch a
// wrong kernel (tiles at either end), cheap for the largest sweep shapes.
void CheckSlice(const torch::Tensor& got, const torch::Tensor& a, const torch::Tensor& b, torch::ScalarType dtype) {
  const auto host = [](const torch::Tensor& t) { return t.to(torch::kCPU, torch::kFloat64); };
  const auto ref = torch::matmul(host(Edges(a, 0)), host(Edges(b, 1)));
  const double scale = ref.abs().max().item<double>();
  const double err = (host(Edges(Edges(got, 0), 1)) - ref).abs().max().item<double>() / (scale > 0 ? scale : 1);
  if (err > Tolerance(dtype))
    throw std::runtime_error(fmt::format("GEMM check: relative error {:.3g} above {:.3g}", err, Tolerance(dtype)));
}

}  // namespace

Kernel Gemm(torch::ScalarType dtype, int64_t m, int64_t n, int64_t k, const torch::Device& device, Layout layout) {
  torch::NoGradGuard no_grad;
  auto a = Operand(dtype, m, k, device);
  auto b = layout == Layout::kTN ? Operand(dtype, n, k, device).t() : Operand(dtype, k, n, device);
  const bool int8 = dtype == torch::kInt8, fp8 = dtype == torch::kFloat8_e4m3fn;
  const auto one = torch::ones({}, torch::TensorOptions().device(device));
  auto product = [int8, fp8, one](const torch::Tensor& x, const torch::Tensor& y) {
    if (fp8) return at::_scaled_mm(x, y, one, one, std::nullopt, std::nullopt, torch::kBFloat16);
    return int8 ? at::_int_mm(x, y) : torch::matmul(x, y);
  };
  // The first rows only: timed for the estimate of a full call (an emulated
  // n = 4096 product takes minutes on a CPU) and checked.
  const auto rows = a.narrow(0, 0, std::min<int64_t>(64, m));
  product(rows, b);
  Kernel kernel;
  torch::Tensor part;
  const double rows_s = TimeOneCall(Kernel{[&] { part = product(rows, b); }}, device);
  CheckSlice(part, rows, b, dtype);
  kernel.estimate_s = rows_s * static_cast<double>(m) / static_cast<double>(rows.size(0));
  auto c = torch::empty({m, n}, a.options().dtype(int8 ? torch::kInt32 : fp8 ? torch::kBFloat16 : dtype));
  kernel.flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  kernel.run = [a, b, c, int8, fp8, one]() mutable {
    if (fp8) {
      at::_scaled_mm_out(c, a, b, one, one, std::nullopt, std::nullopt, torch::kBFloat16);
    } else if (int8) {
      at::_int_mm_out(c, a, b);
    } else {
      at::matmul_out(c, a, b);
    }
  };
  kernel.check = [a, b, c, dtype] { CheckSlice(c, a, b, dtype); };
  return kernel;
}

std::string GemmUnsupported(torch::ScalarType dtype, const torch::Device& device, Layout layout) {
  try {
    Gemm(dtype, 32, 32, 32, device, layout);
    return "";
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    return std::string(c10::toString(dtype)) + (layout == Layout::kTN ? " TN" : " NN") + " GEMM does not run on " +
           device.str() + ": " +
           what.substr(0, what.find('\n'));
  }
}

Kernel Conv2d(torch::ScalarType dtype, int64_t batch, int64_t channels, int64_t hw, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  auto gen = torch::make_generator<at::CPUGeneratorImpl>(17);
  auto x = torch::randn({batch, channels, hw, hw}, gen).to(device, dtype);
  auto w = (torch::randn({channels, channels, 3, 3}, gen) * 0.05).to(device, dtype);
  Kernel kernel;
  kernel.flop = 2.0 * static_cast<double>(batch * channels * hw * hw) * static_cast<double>(channels * 9);
  kernel.run = [x, w]() {
    torch::NoGradGuard guard;
    auto y = torch::conv2d(x, w, {}, 1, 1);
  };
  return kernel;
}

Kernel Copy(int64_t bytes, const torch::Device& device) {
  auto src = torch::ones({bytes / 4}, torch::dtype(torch::kFloat32).device(device));
  auto dst = torch::empty_like(src);
  return Kernel{[src, dst]() mutable { dst.copy_(src); }, 0, 2.0 * static_cast<double>(src.numel() * 4)};
}

Kernel Add(int64_t bytes, const torch::Device& device) {
  auto a = torch::ones({bytes / 4}, torch::dtype(torch::kFloat32).device(device));
  auto b = torch::ones_like(a), c = torch::empty_like(a);
  return Kernel{[a, b, c]() mutable { at::add_out(c, a, b); }, 0, 3.0 * static_cast<double>(a.numel() * 4)};
}

Kernel Transfer(bool to_device, bool pinned, int64_t bytes, const torch::Device& device) {
  auto host = torch::ones({bytes / 4}, torch::dtype(torch::kFloat32).pinned_memory(pinned));
  auto dev = torch::empty({bytes / 4}, torch::dtype(torch::kFloat32).device(device));
  const double moved = static_cast<double>(host.numel() * 4);
  if (to_device) return Kernel{[host, dev]() mutable { dev.copy_(host, /*non_blocking=*/true); }, 0, moved};
  return Kernel{[host, dev]() mutable { host.copy_(dev, /*non_blocking=*/true); }, 0, moved};
}

double EstimateCall(const Kernel& kernel, const torch::Device& device) {
  return kernel.estimate_s >= 0 ? kernel.estimate_s : TimeOneCall(kernel, device);
}

double TimeOneCall(const Kernel& kernel, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  const auto t0 = std::chrono::steady_clock::now();
  kernel.run();
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {

// Rates per second of the iteration's time; `calls` kernel calls per iteration.
void SetCounters(benchmark::State& state, const Kernel& kernel, int64_t calls) {
  using benchmark::Counter;
  const double n = static_cast<double>(calls);
  if (kernel.flop > 0) state.counters["flops"] = Counter(kernel.flop * n, Counter::kIsIterationInvariantRate);
  if (kernel.bytes > 0) state.counters["bandwidth"] = Counter(kernel.bytes * n, Counter::kIsIterationInvariantRate);
  if (calls > 1) state.counters[kCallsCounter] = Counter(n);
}

#ifdef PERFBENCH_WITH_CUDA
// `calls` back-to-back calls between two events on the current stream, as
// many as take about 1 ms (at most 1000): a launch costs 5-15 us of host
// time, which a lone 10 us kernel would otherwise be timed with. The host
// waits for the second event, so iterations never overlap. Returns calls.
int64_t TimeWithEvents(benchmark::State& state, const Kernel& kernel) {
  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
  auto timed = [&](int64_t calls) {
    start.record();
    for (int64_t i = 0; i < calls; ++i) kernel.run();
    stop.record();
    stop.synchronize();
    return static_cast<double>(start.elapsed_time(stop)) / 1e3;
  };
  const double one = timed(1);
  const auto calls = static_cast<int64_t>(std::clamp(std::ceil(1e-3 / std::max(one, 1e-7)), 1.0, 1000.0));
  for (auto _ : state) state.SetIterationTime(timed(calls));
  return calls;
}
#endif

}  // namespace

BenchCase CaseFor(const std::string& name, Kernel kernel, const torch::Device& device) {
  BenchCase c;
  c.name = name;
  c.manual_time = device.is_cuda();
  c.body = [kernel = std::move(kernel), cuda = device.is_cuda()](benchmark::State& state) {
    torch::NoGradGuard no_grad;
    int64_t calls = 1;
    if (cuda) {
#ifdef PERFBENCH_WITH_CUDA
      calls = TimeWithEvents(state, kernel);
#else
      state.SkipWithError("this build has no CUDA paths");
      return;
#endif
    } else {
      for (auto _ : state) kernel.run();
    }
    SetCounters(state, kernel, calls);
  };
  return c;
}

Status KernelWorkload::SetUp(const RunContext& ctx) {
  device_ = std::make_unique<torch::Device>(DeviceFor(ctx.settings.device));
  name_ = ctx.params.Encode();
  if (std::string why = Unsupported(ctx.params, *device_); !why.empty()) return Status::Skipped(why);
  kernel_ = Make(ctx.params, *device_);
  const double call_s = EstimateCall(kernel_, *device_);  // untimed
  const int calls = ctx.settings.repetitions + 2;
  if (call_s * calls > ctx.settings.timeout_s)
    return Status::Skipped(fmt::format("{} call {:.3g} s: {} repetitions do not fit in the {:g} s budget per variant",
                                       name_, call_s, ctx.settings.repetitions, ctx.settings.timeout_s));
  // Google Benchmark runs every repetition in full: under a run's budget a
  // call too slow for a quarter of the process's share (an emulated fp8 GEMM) is skipped.
  if (!Pinned() && ctx.Hopeless(call_s * calls))
    return Status::Skipped(fmt::format("{} call {:.3g} s: {} repetitions do not fit in a quarter of this process's "
                                       "{:.3g} s share of the run's budget (--run-budget)",
                                       name_, call_s, ctx.settings.repetitions, ctx.process_budget_s));
  return Status::Ok();
}

Status KernelWorkload::Verify(const VerifyContext&) {
  if (kernel_.check) kernel_.check();
  return Status::Ok();
}

}  // namespace perfbench::micro
