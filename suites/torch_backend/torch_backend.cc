// The torch adapter: the one place where the harness meets LibTorch.
//
// Installs a DeviceBackend that synchronises CUDA before clock reads, times
// steps with CUDA events on a GPU, counts tensor bytes (a counting CPU
// allocator on the host, the caching allocator's statistics on a GPU) and adds
// library versions to the fingerprint. CUDA code is compiled in with
// PERFBENCH_WITH_CUDA and chosen at run time.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/torch.h>
#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>
#include <torch/cuda.h>
#include <torch/version.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <ATen/record_function.h>

#include <map>
#include <set>
#include <string_view>

#ifdef PERFBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#endif

#include "perfbench/backend.h"

namespace perfbench {
namespace {

// Wraps the default CPU allocator and keeps current and peak tensor bytes.
//
// Some kernels call raw_allocate(), which requires the DataPtr's context to
// be the data pointer itself, so the size lives in a header in front of the
// data (see kSmallHeader and kPageHeader below). Allocations made
// before installation are freed through their own deleter and never counted,
// so `current` cannot go negative.
class CountingCpuAllocator final : public c10::Allocator {
 public:
  // The header holds the block's size and the header's own length. Small
  // blocks get 64 bytes (the inner allocator's alignment); blocks of 64 KiB
  // and more a whole page, so that their data keeps the page offset the
  // inner allocator gave it: a 64-byte shift moved a 16 MiB all-reduce
  // buffer from page offset 64 to 128 and cost Gloo 15-20% of its bandwidth
  // here (4K aliasing with its scratch buffer, most likely), a harness
  // changing what it measures.
  static constexpr size_t kSmallHeader = 64, kPageHeader = 4096, kLargeBlock = 64 << 10;

  explicit CountingCpuAllocator(c10::Allocator* inner) : inner_(inner) { instance_ = this; }

  c10::DataPtr allocate(size_t n) override {
    const size_t header = n >= kLargeBlock ? kPageHeader : kSmallHeader;
    char* data = static_cast<char*>(inner_->raw_allocate(n + header)) + header;
    reinterpret_cast<size_t*>(data)[-2] = n;
    reinterpret_cast<size_t*>(data)[-1] = header;
    Add(static_cast<int64_t>(n));
    return {data, data, &Delete, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &Delete; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  int64_t current() const { return current_.load(); }
  int64_t peak() const { return peak_.load(); }
  void ResetPeak() { peak_.store(current_.load()); }

 private:
  static void Delete(void* data) {
    if (data == nullptr) return;
    const size_t* meta = static_cast<const size_t*>(data);
    instance_->Add(-static_cast<int64_t>(meta[-2]));
    instance_->inner_->raw_deallocate(static_cast<char*>(data) - meta[-1]);
  }
  void Add(int64_t delta) {
    const int64_t now = current_.fetch_add(delta) + delta;
    int64_t seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
  }
  static inline CountingCpuAllocator* instance_ = nullptr;  // one per process, never freed
  c10::Allocator* inner_;
  std::atomic<int64_t> current_{0};
  std::atomic<int64_t> peak_{0};
};

// The float32 precision of every backend and op LibTorch distinguishes,
// and the cuDNN flags, as read from at::globalContext().
std::map<std::string, std::string> ReadMathMode() {
  auto& ctx = at::globalContext();
  std::map<std::string, std::string> out;
  const std::pair<const char*, at::Float32Backend> backends[] = {{"cuda", at::Float32Backend::CUDA},
                                                                 {"mkldnn", at::Float32Backend::MKLDNN}};
  const std::pair<const char*, at::Float32Op> ops[] = {
      {"matmul", at::Float32Op::MATMUL}, {"conv", at::Float32Op::CONV}, {"rnn", at::Float32Op::RNN}};
  for (const auto& [bname, backend] : backends)
    for (const auto& [oname, op] : ops)
      out[std::string("fp32_precision.") + bname + "." + oname] = at::precision2str(ctx.float32Precision(backend, op));
  out["cudnn_benchmark"] = ctx.benchmarkCuDNN() ? "on" : "off";
  out["cudnn_deterministic"] = ctx.deterministicCuDNN() ? "on" : "off";
  return out;
}

std::string Joined(const std::map<std::string, std::string>& m) {
  std::string out;
  for (const auto& [k, v] : m) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

class TorchBackend final : public DeviceBackend {
 public:
  std::string Name() const override { return "torch"; }

  // Every op of both backends set, none left to LibTorch's defaults (cuDNN
  // convolutions default to TF32). The GPU's TF32 needs Ampere or newer;
  // elsewhere "tf32" is accepted by LibTorch and runs as IEEE.
  bool SetMathMode(const MathMode& mode) override {
    Defaults();  // read before the first change
    auto& ctx = at::globalContext();
    // The legacy switches first (other LibTorch code still reads them and
    // checks that they agree with the per-op settings), then every op.
    const bool tf32 = mode.fp32_precision == "tf32";
    ctx.setAllowTF32CuBLAS(tf32);
    ctx.setAllowTF32CuDNN(tf32);
    const at::Float32Precision p = at::str2precision(mode.fp32_precision);
    for (auto backend : {at::Float32Backend::CUDA, at::Float32Backend::MKLDNN})
      for (auto op : {at::Float32Op::MATMUL, at::Float32Op::CONV, at::Float32Op::RNN})
        ctx.setFloat32Precision(backend, op, p);
    ctx.setBenchmarkCuDNN(mode.cudnn_benchmark);
    ctx.setDeterministicCuDNN(mode.cudnn_deterministic);
    return true;
  }
  std::map<std::string, std::string> MathModeInEffect() const override { return ReadMathMode(); }

  std::string PciBusId(const std::string& device) const override {
#ifdef PERFBENCH_WITH_CUDA
    if (device == "cuda" && torch::cuda::is_available()) {
      char id[64] = {0};
      if (cudaDeviceGetPCIBusId(id, sizeof id, c10::cuda::current_device()) == cudaSuccess) return id;
    }
#else
    (void)device;
#endif
    return "";
  }

  bool CudaAvailable() const override {
#ifdef PERFBENCH_WITH_CUDA
    return torch::cuda::is_available();
#else
    return false;
#endif
  }

  void SetThreads(int threads) override {
    if (threads > 0) at::set_num_threads(threads);
  }
  int Threads() const override { return at::get_num_threads(); }

  void SelectDevice(const std::string& device, int index) override {
#ifdef PERFBENCH_WITH_CUDA
    if (device == "cuda" && index >= 0 && index < static_cast<int>(torch::cuda::device_count()))
      c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
#else
    (void)device, (void)index;
#endif
  }

  void Synchronize(const std::string& device) override {
    if (device == "cuda") torch::cuda::synchronize();
  }

  // Pinned: fp32 at IEEE precision whatever the variant's math mode (restored
  // after), the same inputs every time, the host clock between two
  // synchronisations.
  double ControlBlock(const std::string& device) override {
    const torch::Device dev(device == "cuda" ? torch::kCUDA : torch::kCPU);
    auto& [a, b] = control_inputs_[device];
    if (!a.defined()) {
      auto g = at::make_generator<at::CPUGeneratorImpl>(42);
      a = torch::randn({256, 256}, g, torch::kFloat32).to(dev);
      b = torch::randn({256, 256}, g, torch::kFloat32).to(dev);
    }
    auto& ctx = at::globalContext();
    const auto backend = device == "cuda" ? at::Float32Backend::CUDA : at::Float32Backend::MKLDNN;
    const at::Float32Precision before = ctx.float32Precision(backend, at::Float32Op::MATMUL);
    ctx.setFloat32Precision(backend, at::Float32Op::MATMUL, at::Float32Precision::IEEE);
    torch::NoGradGuard no_grad;
    // One untimed call first: what the step left in the caches is the
    // code's, and must not move the control.
    torch::mm(a, b);
    Synchronize(device);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kControlBlockCalls; ++i) torch::mm(a, b);
    Synchronize(device);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ctx.setFloat32Precision(backend, at::Float32Op::MATMUL, before);
    return seconds;
  }

  void BeginStep(const std::string& device) override {
#ifdef PERFBENCH_WITH_CUDA
    if (device == "cuda") {
      start_.emplace(cudaEventDefault);  // default flags disable timing
      stop_.emplace(cudaEventDefault);
      start_->record();
    }
#else
    (void)device;
#endif
  }

  double EndStep(const std::string& device) override {
#ifdef PERFBENCH_WITH_CUDA
    if (device == "cuda" && start_ && stop_) {
      stop_->record();
      stop_->synchronize();
      const double ms = start_->elapsed_time(*stop_);
      start_.reset();
      stop_.reset();
      return ms / 1e3;
    }
#else
    (void)device;
#endif
    return -1;
  }

  // The caching allocator's statistics assert "Invalid device argument 0:
  // did you call init?" until CUDA's lazy initialisation has run, and the
  // runner asks before any workload has touched the device.
  bool Memory(const std::string& device, int64_t* current, int64_t* peak) override {
#ifdef PERFBENCH_WITH_CUDA
    if (device == "cuda") {
      at::globalContext().lazyInitDevice(c10::kCUDA);
      const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
      *current = stats.allocated_bytes[0].current;  // index 0: aggregate pool
      *peak = stats.allocated_bytes[0].peak;
      return true;
    }
#endif
    if (device != "cpu") return false;
    CountingCpuAllocator& a = Counting();
    *current = a.current();
    *peak = a.peak();
    return true;
  }

  void ResetPeakMemory(const std::string& device) override {
#ifdef PERFBENCH_WITH_CUDA
    if (device == "cuda") {
      at::globalContext().lazyInitDevice(c10::kCUDA);
      c10::cuda::CUDACachingAllocator::resetPeakStats(c10::cuda::current_device());
      return;
    }
#endif
    if (device == "cpu") Counting().ResetPeak();
  }

  // Kineto through LibTorch's C++ profiler API (profiler_kineto.h), as
  // torch.profiler does: CPU activity, and CUDA activity on a GPU; FLOP
  // counts and input shapes recorded for the ops that have them.
  bool StartProfile(const std::string& device) override {
    namespace impl = torch::profiler::impl;
    std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
    if (device == "cuda") activities.insert(impl::ActivityType::CUDA);
    const impl::ProfilerConfig config(impl::ProfilerState::KINETO, /*report_input_shapes=*/true,
                                      /*profile_memory=*/false, /*with_stack=*/false, /*with_flops=*/true);
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
    return true;
  }
  void ProfileStepBegin(int step) override {
    step_name_ = "ProfilerStep#" + std::to_string(step);
    step_scope_ = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
    step_scope_->before(std::string_view(step_name_), c10::ArrayRef<const c10::IValue>{});
  }
  void ProfileStepEnd() override { step_scope_.reset(); }
  bool StopProfile(const std::string& path, std::string* error) override {
    step_scope_.reset();
    auto result = torch::autograd::profiler::disableProfiler();
    if (!result) {
      *error = "the profiler returned no result";
      return false;
    }
    result->save(path);
    return true;
  }

  void AddFingerprint(nlohmann::json& fp) const override {
    fp["torch_version"] = TORCH_VERSION;
    // What a variant would inherit if perfbench did not set it (each sets its own; see MathMode).
    fp["math_mode_defaults"] = Defaults();
    fp["intra_op_threads"] = at::get_num_threads();
    fp["torch_parallel_info"] = FirstLines(at::get_parallel_info(), 6);
    fp["cuda_compiled"] = false;
#ifdef PERFBENCH_WITH_CUDA
    fp["cuda_compiled"] = true;
    int runtime = 0, driver = 0;
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) fp["cuda_runtime"] = VersionString(runtime);
    // The CUDA API level the driver supports; its build is nvidia_driver (the core's fingerprint).
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) fp["cuda_driver"] = VersionString(driver);
    if (torch::cuda::is_available()) {
      // The cuDNN loaded at run time (the wheel's nvidia/cudnn), and the one LibTorch was built with.
      fp["cudnn_version"] = at::detail::getCUDAHooks().versionRuntimeCuDNN();
      fp["cudnn_compiled"] = at::detail::getCUDAHooks().versionCuDNN();
      const int n = static_cast<int>(torch::cuda::device_count());
      fp["gpu_count"] = n;
      nlohmann::json names = nlohmann::json::array(), mem = nlohmann::json::array();
      for (int i = 0; i < n; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
          names.push_back(prop.name);
          mem.push_back(static_cast<int64_t>(prop.totalGlobalMem));
        }
      }
      fp["gpu_names"] = names;
      fp["gpu_memory_bytes"] = mem;
    }
#endif
    // NCCL is loaded by libtorch_cuda when present; ask it without linking it.
    using NcclGetVersion = int (*)(int*);
    if (auto fn = reinterpret_cast<NcclGetVersion>(dlsym(RTLD_DEFAULT, "ncclGetVersion"))) {
      int v = 0;
      if (fn(&v) == 0) fp["nccl_version"] = NcclVersionString(v);
    }
  }

 private:
  static std::string VersionString(int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  }
  static std::string NcclVersionString(int v) {
    // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9.
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
  }
  static std::string FirstLines(const std::string& s, int n) {
    size_t pos = 0;
    for (int i = 0; i < n && pos != std::string::npos; ++i) pos = s.find('\n', pos + 1);
    return s.substr(0, pos);
  }
  // LibTorch's math settings before perfbench changed any, read once.
  static const std::string& Defaults() {
    static const std::string defaults = Joined(ReadMathMode());
    return defaults;
  }
  // Installed on first use, before any workload's set-up allocates.
  static CountingCpuAllocator& Counting() {
    static CountingCpuAllocator* counting = [] {
      auto* a = new CountingCpuAllocator(c10::GetDefaultCPUAllocator());
      c10::SetCPUAllocator(a, /*priority=*/100);
      return a;
    }();
    return *counting;
  }

#ifdef PERFBENCH_WITH_CUDA
  std::optional<at::cuda::CUDAEvent> start_, stop_;
#endif
  std::string step_name_;
  std::unique_ptr<at::RecordFunction> step_scope_;
  std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> control_inputs_;  // ControlBlock's, by device
};

[[maybe_unused]] const bool installed = InstallDeviceBackend(std::make_unique<TorchBackend>());

}  // namespace
}  // namespace perfbench
