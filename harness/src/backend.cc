#include "perfbench/backend.h"

namespace perfbench {
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
