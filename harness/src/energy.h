// Energy counters for the `energy` and `energy_per_sample` metrics: Linux
// RAPL on a CPU (/sys/class/powercap/intel-rapl:<package>/energy_uj, the
// packages summed, wrap-around at max_energy_range_uj handled), NVML's total
// energy on a GPU (libnvidia-ml loaded at run time, never linked). Where a
// counter cannot be read (no RAPL zones, energy_uj root-only since Linux
// 5.10, no NVML library, a GPU without the counter) the meter says why and
// the results carry that reason instead of samples.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace perfbench {

class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  // Empty when available; else why not ("no RAPL zones under /sys/class/powercap").
  virtual std::string Unavailable() const = 0;
  // Joules since the meter was made, monotonic; call often enough that a
  // counter wraps at most once between calls (RAPL: minutes at full power).
  // A failed read is no number: nullopt, with why in *error.
  virtual std::optional<double> Read(std::string* error) = 0;
};

// RAPL package zones under `root` (a directory like /sys/class/powercap).
std::unique_ptr<EnergyMeter> MakeRaplMeter(const std::string& root = "/sys/class/powercap");
// NVML's counter of GPU `index` (or of the GPU at `pci_bus_id` when not
// empty), from `library`.
std::unique_ptr<EnergyMeter> MakeNvmlMeter(int index = 0, const std::string& library = "libnvidia-ml.so.1",
                                           const std::string& pci_bus_id = "");
// RAPL for "cpu", NVML for "cuda" (the GPU at `pci_bus_id`; GPU 0 when empty).
std::unique_ptr<EnergyMeter> MakeEnergyMeter(const std::string& device, const std::string& pci_bus_id = "");

}  // namespace perfbench
