// DeviceBackend: the only door between the harness core and a tensor library.
//
// The core is built without torch headers. The torch adapter
// (suites/torch_backend) installs a backend that synchronises devices, times
// steps with CUDA events, counts tensor memory and adds library versions to
// the fingerprint. Without it, a host-only backend is used (tests, self-test).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace perfbench {

// The math a variant runs under, set explicitly before each of its calls
// (never inherited from a library default: LibTorch runs "fp32" cuDNN
// convolutions as TF32 unless told otherwise).
struct MathMode {
  // float32 matmul, convolution and RNN on every backend (cuBLAS/cuDNN,
  // oneDNN): "ieee" (strict) or "tf32" (TensorFloat-32 on GPUs that have it).
  std::string fp32_precision = "ieee";
  bool cudnn_benchmark = false;      // autotune convolution algorithms per shape
  bool cudnn_deterministic = false;  // only deterministic convolution algorithms
  // "fp32=ieee cudnn_benchmark=off cudnn_deterministic=off"
  std::string Text() const;
  bool operator==(const MathMode&) const = default;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual std::string Name() const = 0;
  virtual bool CudaAvailable() const { return false; }
  // Intra-op threads; 0 leaves the library default.
  virtual void SetThreads(int threads) { (void)threads; }
  virtual int Threads() const { return 0; }
  // Makes device `index` of kind `device` ("cuda") this process's current
  // one, before anything touches a device: a launched rank uses its
  // LOCAL_RANK's GPU, not cuda:0. Out-of-range indices are left alone.
  virtual void SelectDevice(const std::string& device, int index) { (void)device, (void)index; }
  // Blocks until all queued work on `device` is done.
  virtual void Synchronize(const std::string& device) { (void)device; }
  // Bracket one step; EndStep returns the device-measured seconds (CUDA
  // events), or a negative number where the host clock is the right one.
  virtual void BeginStep(const std::string& device) { (void)device; }
  virtual double EndStep(const std::string& device) {
    (void)device;
    return -1;
  }
  // Tensor bytes allocated on `device` now, and the peak since ResetPeakMemory.
  // Returns false where the backend cannot count.
  virtual bool Memory(const std::string& device, int64_t* current, int64_t* peak) {
    (void)device, (void)current, (void)peak;
    return false;
  }
  virtual void ResetPeakMemory(const std::string& device) { (void)device; }
  // Profiling (`perfbench profile`; never while a step is timed). Start
  // returns false where this backend cannot profile. Each profiled step is
  // bracketed by ProfileStepBegin/End ("ProfilerStep#<step>", as Holistic
  // Trace Analysis expects). Stop writes a Chrome trace to `path`; false
  // with *error set when it could not.
  virtual bool StartProfile(const std::string& device) {
    (void)device;
    return false;
  }
  virtual void ProfileStepBegin(int step) { (void)step; }
  virtual void ProfileStepEnd() {}
  virtual bool StopProfile(const std::string& path, std::string* error) {
    (void)path;
    *error = "this build has no profiler";
    return false;
  }
  // Sets `mode` for what runs next in this process; false where this
  // backend has no such settings (a host-only one).
  virtual bool SetMathMode(const MathMode& mode) {
    (void)mode;
    return false;
  }
  // The math settings the library holds now, read back from it (not what
  // was asked): "fp32_precision.cuda.matmul" -> "ieee", "cudnn_benchmark" ->
  // "on", ...; empty where there are none.
  virtual std::map<std::string, std::string> MathModeInEffect() const { return {}; }
  // The PCI bus id of the GPU this process uses ("0000:3b:00.0"), for NVML
  // to read that GPU's counters; "" where unknown.
  virtual std::string PciBusId(const std::string& device) const {
    (void)device;
    return "";
  }
  // The control block measured after each timed step (kThroughputPerControl):
  // a pinned fp32 GEMM, n = 256, kControlBlockCalls calls on `device` after
  // an untimed one, synchronised; returns its seconds, or a negative number
  // where this backend has none. 16 calls (about 2 ms on the 2-core Xeon):
  // with 8, a block shorter than the scheduler's slices read the CPU share of
  // two busy neighbours erratically (0.9x-1.7x of its step's slowdown).
  static constexpr int kControlBlockCalls = 16;
  virtual double ControlBlock(const std::string& device) {
    (void)device;
    return -1;
  }
  // Adds library and device facts (torch, CUDA, cuDNN, NCCL, GPUs).
  virtual void AddFingerprint(nlohmann::json& fingerprint) const { (void)fingerprint; }
};

// The installed backend (a host-only one unless another was installed).
DeviceBackend& GetDeviceBackend();
// Installs `backend`; returns true. Called from the adapter's static initialiser.
bool InstallDeviceBackend(std::unique_ptr<DeviceBackend> backend);

}  // namespace perfbench
