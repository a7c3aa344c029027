#include "nvml.h"

#include <dlfcn.h>

namespace perfbench {

NvmlDevice::NvmlDevice(int index, const std::string& library) {
  lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) {
    why_ = "NVML unavailable: " + library + " not found";
    return;
  }
  using Init = int (*)();
  using Handle = int (*)(unsigned int, void**);
  auto init = Symbol<Init>("nvmlInit_v2");
  auto handle = Symbol<Handle>("nvmlDeviceGetHandleByIndex_v2");
  if (!init || !handle) {
    why_ = "NVML unavailable: " + library + " lacks nvmlInit_v2";
  } else if (init() != 0 || handle(static_cast<unsigned>(index), &device_) != 0) {
    why_ = "NVML unavailable: no GPU " + std::to_string(index);
    device_ = nullptr;
  }
}

void* NvmlDevice::Lookup(const char* name) const { return lib_ ? dlsym(lib_, name) : nullptr; }

}  // namespace perfbench
