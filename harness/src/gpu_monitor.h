// What the GPU did while perfbench timed a group's steps, from NVML
// (libnvidia-ml loaded at run time; see nvml.h):
//   utilization   mean of the driver's utilisation samples in the interval
//                 (nvmlDeviceGetSamples, NVML_GPU_UTILIZATION_SAMPLES): the
//                 share of time at least one kernel ran, 0..1. It says
//                 nothing of how many SMs were busy: a single small kernel
//                 reads 100%.
//   sm_activity   GPM SM utilisation over the interval (NVML_GPM_METRIC_SM_UTIL,
//                 Hopper and newer): the share of SMs busy, 0..1.
//   throttled_s   power and thermal violation time in the interval
//                 (nvmlDeviceGetViolationStatus), seconds.
//   clock_events  the clock event reasons active at the end that slow the
//                 GPU down (power cap, thermal or power-brake slowdown); a
//                 throttled or slowed interval makes the timings suspect.
// Each is unknown (negative, empty) where the driver or device lacks it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace perfbench {

struct GpuActivity {
  std::string unavailable;  // why nothing was read; empty when NVML answered
  double utilization = -1, sm_activity = -1, throttled_s = -1;
  std::string clock_events;
  // Result attributes: gpu_utilization, sm_activity, throttled_s, clock_events
  // (those known), or {"gpu_utilization": "unavailable: <why>"}.
  std::map<std::string, std::string> Attributes() const;
  // Thermal or power throttling seen: the timings are suspect.
  bool Throttled() const { return throttled_s > 0 || !clock_events.empty(); }
};

// The slow-down reasons among NVML clock event reason bits ("sw power cap,
// hw thermal slowdown"); idle, application clocks, sync boost and display
// clocks are not slow-downs and are left out.
std::string ClockEventNames(uint64_t reasons);
// The mean of NVML samples of value type `type` (nvmlValueType_t) as a share:
// utilisation samples are percentages.
struct NvmlSample {
  uint64_t timestamp_us = 0;
  uint64_t raw = 0;  // the nvmlValue_t union's 8 bytes
};
double MeanPercentShare(const std::vector<NvmlSample>& samples, int type);

class GpuMonitor {
 public:
  virtual ~GpuMonitor() = default;
  // Marks the start of an interval.
  virtual void Begin() = 0;
  // What happened since Begin.
  virtual GpuActivity End() = 0;
};

// GPU `index`, or the GPU at `pci_bus_id` when not empty (see NvmlDevice).
std::unique_ptr<GpuMonitor> MakeGpuMonitor(int index = 0, const std::string& library = "libnvidia-ml.so.1",
                                           const std::string& pci_bus_id = "");

}  // namespace perfbench
