// A stand-in for libnvidia-ml with one GPU (PCI bus id 00000000:01:00.0),
// for the NVML paths of the energy meter and the GPU monitor on machines
// without a GPU. Every call is deterministic. The energy counter behaves as
// a real driver's: it advances only every 100 ms of its clock, by 100 ms at
// 300 W (30 J), however often it is read; the clock is CLOCK_MONOTONIC
// unless a test drives it (fake_nvml_set_clock_ms), and a test can make
// the counter's reads fail (fake_nvml_fail_energy). Utilisation samples after
// the asked timestamp read 80% and 40% (one older sample, 100%, must be
// ignored); power and thermal violation time grow 250 ms per read each; the
// clocks report idle and a software thermal slowdown; GPM SM utilisation
// reads 55%.
#include <cstring>
#include <ctime>

namespace {
unsigned long long violation_ns[2] = {0, 0};
double clock_ms = -1;  // < 0: CLOCK_MONOTONIC
bool fail_energy = false;
constexpr double kUpdateMs = 100, kWatts = 300;
double NowMs() {
  if (clock_ms >= 0) return clock_ms;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
int gpm_storage[2];
struct Sample {
  unsigned long long ts, value;
};
struct Violation {
  unsigned long long reference, violation;
};
struct GpmSupport {
  unsigned int version, supported;
};
struct GpmMetric {
  unsigned int id;
  int result;
  double value;
  const char* info[3];
};
struct GpmMetricsGet {
  unsigned int version, num;
  void *s1, *s2;
  GpmMetric metrics[1];
};
void* const kDevice = &gpm_storage[0];
}  // namespace

extern "C" {
int nvmlInit_v2() { return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index != 0) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = kDevice;
  return 0;
}
// Test controls (not NVML's): drive the counter's clock, make reads fail.
void fake_nvml_set_clock_ms(double ms) { clock_ms = ms; }
void fake_nvml_fail_energy(int fail) { fail_energy = fail != 0; }

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  // NVML takes "domain:bus:device.function" with a 4- or 8-digit domain.
  if (std::strcmp(bus_id, "00000000:01:00.0") != 0 && std::strcmp(bus_id, "0000:01:00.0") != 0) return 6;  // NOT_FOUND
  *device = kDevice;
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
  if (device != kDevice) return 2;
  if (fail_energy) return 15;  // NVML_ERROR_GPU_IS_LOST
  const double updates = static_cast<double>(static_cast<unsigned long long>(NowMs() / kUpdateMs));
  *mj = static_cast<unsigned long long>(updates * kUpdateMs * kWatts);  // ms x W = mJ
  return 0;
}
int nvmlDeviceGetSamples(void* device, unsigned type, unsigned long long last, int* value_type, unsigned* count,
                         Sample* samples) {
  if (device != kDevice || type != 1) return 2;
  *value_type = 1;  // NVML_VALUE_TYPE_UNSIGNED_INT
  if (samples == nullptr) {
    *count = 3;
    return 0;
  }
  const Sample all[3] = {{last - 5, 100}, {last + 10, 80}, {last + 20, 40}};
  *count = *count < 3 ? *count : 3;
  std::memcpy(samples, all, sizeof(Sample) * *count);
  return 0;
}
int nvmlDeviceGetViolationStatus(void* device, int policy, Violation* t) {
  if (device != kDevice || policy < 0 || policy > 1) return 2;
  t->reference = 0;
  t->violation = (violation_ns[policy] += 250000000ull);
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  if (device != kDevice) return 2;
  *reasons = 0x1 | 0x20;  // idle, software thermal slowdown
  return 0;
}
int nvmlGpmQueryDeviceSupport(void* device, GpmSupport* s) {
  if (device != kDevice || s->version != 1) return 2;
  s->supported = 1;
  return 0;
}
int nvmlGpmSampleAlloc(void** sample) {
  static int next = 0;
  *sample = &gpm_storage[next++ % 2];
  return 0;
}
int nvmlGpmSampleFree(void*) { return 0; }
int nvmlGpmSampleGet(void* device, void* sample) { return device == kDevice && sample ? 0 : 2; }
int nvmlGpmMetricsGet(GpmMetricsGet* m) {
  if (m->version != 1 || m->num != 1 || m->metrics[0].id != 2 || !m->s1 || !m->s2) return 2;
  m->metrics[0].result = 0;
  m->metrics[0].value = 55.0;
  return 0;
}
}
