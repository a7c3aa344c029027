#include "energy.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "nvml.h"

namespace perfbench {
namespace {

struct Zone {
  std::string energy_path;
  double range_uj = 0;  // the counter wraps to 0 here
  double last_uj = 0;
};

std::optional<double> Failed(const std::string& why, std::string* error) {
  if (error) *error = why;
  return std::nullopt;
}

bool ReadNumber(const std::string& path, double* out) {
  std::ifstream in(path);
  long double v = 0;
  if (!(in >> v)) return false;
  *out = static_cast<double>(v);
  return true;
}

class RaplMeter final : public EnergyMeter {
 public:
  explicit RaplMeter(const std::string& root) { Open(root); }
  std::string Unavailable() const override { return why_; }
  std::optional<double> Read(std::string* error) override {
    if (!why_.empty()) return Failed(why_, error);
    for (auto& z : zones_) {
      double now = 0;
      if (!ReadNumber(z.energy_path, &now)) return Failed(z.energy_path + " could not be read", error);
      const double delta = now >= z.last_uj ? now - z.last_uj : now + z.range_uj - z.last_uj;  // wrapped once
      total_uj_ += delta;
      z.last_uj = now;
    }
    return total_uj_ / 1e6;
  }

 private:
  // Package zones only ("intel-rapl:0", not its sub-zones "intel-rapl:0:0"),
  // so nothing is counted twice.
  void Open(const std::string& root) {
    DIR* dir = opendir(root.c_str());
    if (dir == nullptr) {
      why_ = "no RAPL counters: " + root + " is absent (" + std::strerror(errno) + ")";
      return;
    }
    std::vector<std::string> names;
    while (dirent* e = readdir(dir)) {
      const std::string n = e->d_name;
      if (n.rfind("intel-rapl:", 0) == 0 && n.find(':', 11) == std::string::npos) names.push_back(n);
    }
    closedir(dir);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) AddZone(root + "/" + n);
    if (zones_.empty() && why_.empty()) why_ = "no RAPL package zones under " + root;
  }
  void AddZone(const std::string& zone) {
    Zone z{zone + "/energy_uj", 0, 0};
    if (!ReadNumber(z.energy_path, &z.last_uj)) {
      why_ = z.energy_path + " is not readable (root-only since Linux 5.10)";
      return;
    }
    if (!ReadNumber(zone + "/max_energy_range_uj", &z.range_uj)) z.range_uj = 0;
    zones_.push_back(z);
  }

  std::vector<Zone> zones_;
  double total_uj_ = 0;
  std::string why_;
};

// NVML's energy counter (since Volta), in millijoules since the driver loaded.
class NvmlMeter final : public EnergyMeter {
 public:
  NvmlMeter(int index, const std::string& library, const std::string& pci_bus_id)
      : nvml_(index, library, pci_bus_id) {
    why_ = nvml_.Unavailable();
    if (!why_.empty()) return;
    energy_ = nvml_.Symbol<Energy>("nvmlDeviceGetTotalEnergyConsumption");
    if (!energy_)
      why_ = "NVML unavailable: " + library + " lacks the energy counter API";
    else if (energy_(nvml_.handle(), &first_mj_) != 0)
      why_ = "NVML: GPU " + std::to_string(index) + " has no energy counter (before Volta)";
  }
  std::string Unavailable() const override { return why_; }
  std::optional<double> Read(std::string* error) override {
    if (!why_.empty()) return Failed(why_, error);
    unsigned long long mj = 0;
    if (const int rc = energy_(nvml_.handle(), &mj); rc != 0)
      return Failed("nvmlDeviceGetTotalEnergyConsumption returned " + std::to_string(rc), error);
    return static_cast<double>(mj - first_mj_) / 1e3;
  }

 private:
  using Energy = int (*)(void*, unsigned long long*);
  NvmlDevice nvml_;
  Energy energy_ = nullptr;
  unsigned long long first_mj_ = 0;
  std::string why_;
};

}  // namespace

std::unique_ptr<EnergyMeter> MakeRaplMeter(const std::string& root) { return std::make_unique<RaplMeter>(root); }
std::unique_ptr<EnergyMeter> MakeNvmlMeter(int index, const std::string& library, const std::string& pci_bus_id) {
  return std::make_unique<NvmlMeter>(index, library, pci_bus_id);
}
std::unique_ptr<EnergyMeter> MakeEnergyMeter(const std::string& device, const std::string& pci_bus_id) {
  return device == "cuda" ? MakeNvmlMeter(0, "libnvidia-ml.so.1", pci_bus_id) : MakeRaplMeter();
}

}  // namespace perfbench
