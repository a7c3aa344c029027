#include "perfbench/backend.h"

namespace perfbench {

std::string MathMode::Text() const {
  return "fp32=" + fp32_precision + " cudnn_benchmark=" + (cudnn_benchmark ? "on" : "off") +
         " cudnn_deterministic=" + (cudnn_deterministic ? "on" : "off");
}

namespace {

class HostBackend final : public DeviceBackend {
 public:
  std::string Name() const override { return "host"; }
};

std::unique_ptr<DeviceBackend>& Slot() {
  static std::unique_ptr<DeviceBackend> slot = std::make_unique<HostBackend>();
  return slot;
}

}  // namespace

DeviceBackend& GetDeviceBackend() { return *Slot(); }

bool InstallDeviceBackend(std::unique_ptr<DeviceBackend> backend) {
  Slot() = std::move(backend);
  return true;
}

}  // namespace perfbench
