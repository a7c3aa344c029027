#include "nvml.h"

#include <dlfcn.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace perfbench {

NvmlDevice::NvmlDevice(int index, const std::string& library, const std::string& pci_bus_id) {
  lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) {
    why_ = "NVML unavailable: " + library + " not found";
    return;
  }
  using Init = int (*)();
  using Handle = int (*)(unsigned int, void**);
  using ByBusId = int (*)(const char*, void**);
  auto init = Symbol<Init>("nvmlInit_v2");
  auto handle = Symbol<Handle>("nvmlDeviceGetHandleByIndex_v2");
  auto by_bus = Symbol<ByBusId>("nvmlDeviceGetHandleByPciBusId_v2");
  if (!init || !handle || (!pci_bus_id.empty() && !by_bus)) {
    why_ = "NVML unavailable: " + library + " lacks nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2 or ByPciBusId_v2";
  } else if (init() != 0) {
    why_ = "NVML unavailable: nvmlInit_v2 failed";
  } else if (pci_bus_id.empty() ? handle(static_cast<unsigned>(index), &device_) != 0
                                : by_bus(pci_bus_id.c_str(), &device_) != 0) {
    why_ = "NVML unavailable: no GPU " + (pci_bus_id.empty() ? std::to_string(index) : "at PCI bus id " + pci_bus_id);
    device_ = nullptr;
  }
}

void* NvmlDevice::Lookup(const char* name) const { return lib_ ? dlsym(lib_, name) : nullptr; }

std::string ParseProcDriverVersion(const std::string& text) {
  static const std::regex kernel_module(R"(Kernel Module\s+(?:for \S+\s+)?([0-9]+(?:\.[0-9]+)+))");
  std::smatch m;
  return std::regex_search(text, m, kernel_module) ? m[1].str() : "";
}

std::string NvidiaDriverVersion() {
  const NvmlDevice nvml(0, "libnvidia-ml.so.1");
  using Version = int (*)(char*, unsigned int);
  if (nvml.Unavailable().empty()) {
    if (auto get = nvml.Symbol<Version>("nvmlSystemGetDriverVersion")) {
      char buf[96] = {};
      if (get(buf, sizeof buf) == 0 && buf[0] != '\0') return buf;
    }
  }
  std::ifstream in("/proc/driver/nvidia/version");
  std::stringstream text;
  text << in.rdbuf();
  return ParseProcDriverVersion(text.str());
}

}  // namespace perfbench
