// DeviceBackend: the only door between the harness core and a tensor library.
//
// The core is built without torch headers. The torch adapter
// (suites/torch_backend) installs a backend that synchronises devices, times
// steps with CUDA events, counts tensor memory and adds library versions to
// the fingerprint. Without it, a host-only backend is used (tests, self-test).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace perfbench {

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
  // Adds library and device facts (torch, CUDA, cuDNN, NCCL, GPUs).
  virtual void AddFingerprint(nlohmann::json& fingerprint) const { (void)fingerprint; }
};

// The installed backend (a host-only one unless another was installed).
DeviceBackend& GetDeviceBackend();
// Installs `backend`; returns true. Called from the adapter's static initialiser.
bool InstallDeviceBackend(std::unique_ptr<DeviceBackend> backend);

}  // namespace perfbench
