#include "gpu_monitor.h"

#include <fmt/format.h>
#include <time.h>

#include <cstring>

#include "nvml.h"

namespace perfbench {

std::map<std::string, std::string> GpuActivity::Attributes() const {
  if (!unavailable.empty()) return {{"gpu_utilization", "unavailable: " + unavailable}};
  std::map<std::string, std::string> a;
  a["gpu_utilization"] = utilization >= 0 ? fmt::format("{:.3f}", utilization)
                                          : "unavailable: no NVML utilisation samples in the timed interval";
  a["sm_activity"] = sm_activity >= 0 ? fmt::format("{:.3f}", sm_activity) : "unavailable: no GPM on this GPU";
  if (throttled_s >= 0) a["throttled_s"] = fmt::format("{:.3g}", throttled_s);
  if (!clock_events.empty()) a["clock_events"] = clock_events;
  return a;
}

std::string ClockEventNames(uint64_t reasons) {
  // nvmlClocksEventReason* bits that slow the clocks down.
  static const std::pair<uint64_t, const char*> kSlowdowns[] = {{0x4, "sw power cap"},
                                                               {0x8, "hw slowdown"},
                                                               {0x20, "sw thermal slowdown"},
                                                               {0x40, "hw thermal slowdown"},
                                                               {0x80, "hw power brake slowdown"}};
  std::string out;
  for (const auto& [bit, name] : kSlowdowns)
    if (reasons & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

double MeanPercentShare(const std::vector<NvmlSample>& samples, int type) {
  if (samples.empty()) return -1;
  double sum = 0;
  for (const auto& s : samples) {
    double v = 0;
    switch (type) {  // nvmlValueType_t
      case 0: std::memcpy(&v, &s.raw, sizeof v); break;
      case 1: v = static_cast<double>(static_cast<uint32_t>(s.raw)); break;
      case 4: v = static_cast<double>(static_cast<int64_t>(s.raw)); break;
      case 5: v = static_cast<double>(static_cast<int32_t>(s.raw)); break;
      case 6: v = static_cast<double>(static_cast<uint16_t>(s.raw)); break;
      default: v = static_cast<double>(s.raw); break;  // 2, 3: unsigned long (long)
    }
    sum += v;
  }
  return sum / static_cast<double>(samples.size()) / 100.0;
}

namespace {

// NVML's structures, as nvml.h declares them.
struct RawSample {  // nvmlSample_t
  unsigned long long timestamp_us;
  unsigned long long value;  // nvmlValue_t, a union of 8 bytes
};
struct ViolationTime {  // nvmlViolationTime_t, nanoseconds
  unsigned long long reference, violation;
};
struct GpmSupport {  // nvmlGpmSupport_t
  unsigned int version, supported;
};
struct GpmMetric {  // nvmlGpmMetric_t
  unsigned int id;
  int result;
  double value;
  const char* info[3];
};
// nvmlGpmMetricsGet_t; the array is sized beyond any NVML_GPM_METRIC_MAX yet
// (477 in 13.x): the library reads num_metrics entries.
struct GpmMetricsGet {
  unsigned int version, num_metrics;
  void *sample1, *sample2;
  GpmMetric metrics[512];
};
constexpr unsigned kUtilizationSamples = 1;  // NVML_GPU_UTILIZATION_SAMPLES
constexpr unsigned kGpmSmUtil = 2;           // NVML_GPM_METRIC_SM_UTIL, percent
constexpr int kPolicyPower = 0, kPolicyThermal = 1;

uint64_t NowUs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);  // NVML stamps samples with the wall clock, in us
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

class NvmlMonitor final : public GpuMonitor {
 public:
  NvmlMonitor(int index, const std::string& library, const std::string& pci_bus_id)
      : nvml_(index, library, pci_bus_id) {
    if (!nvml_.Unavailable().empty()) return;
    samples_ = nvml_.Symbol<GetSamples>("nvmlDeviceGetSamples");
    violation_ = nvml_.Symbol<Violation>("nvmlDeviceGetViolationStatus");
    reasons_ = nvml_.Symbol<Reasons>("nvmlDeviceGetCurrentClocksEventReasons");
    if (!reasons_) reasons_ = nvml_.Symbol<Reasons>("nvmlDeviceGetCurrentClocksThrottleReasons");  // before 12.2
    OpenGpm();
  }
  ~NvmlMonitor() override {
    auto free_sample = nvml_.Symbol<int (*)(void*)>("nvmlGpmSampleFree");
    for (void* s : {gpm_begin_, gpm_end_})
      if (s && free_sample) free_sample(s);
  }

  void Begin() override {
    begin_us_ = NowUs();
    violation_ns_ = ViolationNs();
    gpm_ok_ = gpm_begin_ && gpm_sample_(nvml_.handle(), gpm_begin_) == 0;
  }

  GpuActivity End() override {
    GpuActivity a;
    a.unavailable = nvml_.Unavailable();
    if (!a.unavailable.empty()) return a;
    a.utilization = Utilization();
    a.sm_activity = SmActivity();
    if (const double now = ViolationNs(); violation_ns_ >= 0 && now >= 0) a.throttled_s = (now - violation_ns_) / 1e9;
    unsigned long long reasons = 0;
    if (reasons_ && reasons_(nvml_.handle(), &reasons) == 0) a.clock_events = ClockEventNames(reasons);
    return a;
  }

 private:
  using GetSamples = int (*)(void*, unsigned, unsigned long long, int*, unsigned*, RawSample*);
  using Violation = int (*)(void*, int, ViolationTime*);
  using Reasons = int (*)(void*, unsigned long long*);
  using GpmQuery = int (*)(void*, GpmSupport*);
  using GpmAlloc = int (*)(void**);
  using GpmSample = int (*)(void*, void*);
  using GpmGet = int (*)(GpmMetricsGet*);

  void OpenGpm() {
    auto query = nvml_.Symbol<GpmQuery>("nvmlGpmQueryDeviceSupport");
    auto alloc = nvml_.Symbol<GpmAlloc>("nvmlGpmSampleAlloc");
    gpm_sample_ = nvml_.Symbol<GpmSample>("nvmlGpmSampleGet");
    gpm_get_ = nvml_.Symbol<GpmGet>("nvmlGpmMetricsGet");
    GpmSupport support{1, 0};  // NVML_GPM_SUPPORT_VERSION
    if (!query || !alloc || !gpm_sample_ || !gpm_get_ || query(nvml_.handle(), &support) != 0 || !support.supported)
      return;
    if (alloc(&gpm_begin_) != 0 || alloc(&gpm_end_) != 0) gpm_begin_ = gpm_end_ = nullptr;
  }

  // Power plus thermal violation time so far, ns; negative when unknown.
  double ViolationNs() const {
    if (!violation_) return -1;
    double total = 0;
    for (int policy : {kPolicyPower, kPolicyThermal}) {
      ViolationTime t{};
      if (violation_(nvml_.handle(), policy, &t) != 0) return -1;
      total += static_cast<double>(t.violation);
    }
    return total;
  }

  double Utilization() const {
    int type = 0;
    unsigned count = 0;
    if (!samples_ || samples_(nvml_.handle(), kUtilizationSamples, begin_us_, &type, &count, nullptr) != 0 || !count)
      return -1;
    std::vector<RawSample> raw(count);
    if (samples_(nvml_.handle(), kUtilizationSamples, begin_us_, &type, &count, raw.data()) != 0) return -1;
    std::vector<NvmlSample> in;
    for (unsigned i = 0; i < count && i < raw.size(); ++i)
      if (raw[i].timestamp_us >= begin_us_) in.push_back({raw[i].timestamp_us, raw[i].value});
    return MeanPercentShare(in, type);
  }

  double SmActivity() {
    if (!gpm_ok_ || gpm_sample_(nvml_.handle(), gpm_end_) != 0) return -1;
    auto get = std::make_unique<GpmMetricsGet>();
    get->version = 1;  // NVML_GPM_METRICS_GET_VERSION
    get->num_metrics = 1;
    get->sample1 = gpm_begin_;
    get->sample2 = gpm_end_;
    get->metrics[0].id = kGpmSmUtil;
    if (gpm_get_(get.get()) != 0 || get->metrics[0].result != 0) return -1;
    return get->metrics[0].value / 100.0;
  }

  NvmlDevice nvml_;
  GetSamples samples_ = nullptr;
  Violation violation_ = nullptr;
  Reasons reasons_ = nullptr;
  GpmSample gpm_sample_ = nullptr;
  GpmGet gpm_get_ = nullptr;
  void *gpm_begin_ = nullptr, *gpm_end_ = nullptr;
  bool gpm_ok_ = false;
  unsigned long long begin_us_ = 0;
  double violation_ns_ = -1;
};

}  // namespace

std::unique_ptr<GpuMonitor> MakeGpuMonitor(int index, const std::string& library, const std::string& pci_bus_id) {
  return std::make_unique<NvmlMonitor>(index, library, pci_bus_id);
}

}  // namespace perfbench
