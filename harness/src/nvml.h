// libnvidia-ml loaded at run time, never linked (perfbench runs where no
// driver is installed), and one device's handle: the shared opening of the
// energy counter (energy.h) and the activity monitor (gpu_monitor.h). Entry
// points are resolved by name; the C ABI of those used is stable across
// drivers. An absent library or device is a reason, not an error.
#pragma once

#include <string>

namespace perfbench {

class NvmlDevice {
 public:
  // GPU `index`; with a non-empty `pci_bus_id` ("0000:3b:00.0", as CUDA's
  // cudaDeviceGetPCIBusId writes it) that GPU instead: the one a process
  // actually uses, whatever CUDA_VISIBLE_DEVICES renumbered.
  NvmlDevice(int index, const std::string& library, const std::string& pci_bus_id = "");
  NvmlDevice(const NvmlDevice&) = delete;
  NvmlDevice& operator=(const NvmlDevice&) = delete;
  // Empty when the device is open; else why not ("NVML unavailable: libnvidia-ml.so.1 not found").
  const std::string& Unavailable() const { return why_; }
  void* handle() const { return device_; }
  // The entry point `name` as a function pointer of type Fn, or nullptr
  // (older drivers lack newer calls).
  template <typename Fn>
  Fn Symbol(const char* name) const {
    return reinterpret_cast<Fn>(Lookup(name));
  }

 private:
  void* Lookup(const char* name) const;
  void* lib_ = nullptr;
  void* device_ = nullptr;
  std::string why_;
};

// The NVIDIA driver's own version ("580.159.03"): NVML's
// nvmlSystemGetDriverVersion, else /proc/driver/nvidia/version; "" where
// there is no driver. (cudaDriverGetVersion gives the CUDA API level the
// driver supports, 13000, not its build.)
std::string NvidiaDriverVersion();
// The version in the text of /proc/driver/nvidia/version ("NVRM version:
// NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu ..."), or "".
std::string ParseProcDriverVersion(const std::string& text);

}  // namespace perfbench
