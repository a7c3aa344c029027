// A stand-in for libnvidia-ml with one GPU, for the NVML paths of the
// energy meter and the GPU monitor on machines without a GPU. Every call is
// deterministic: energy grows 1500 mJ per read; utilisation samples after
// the asked timestamp read 80% and 40% (one older sample, 100%, must be
// ignored); power and thermal violation time grow 250 ms per read each; the
// clocks report idle and a software thermal slowdown; GPM SM utilisation
// reads 55%.
#include <cstring>

namespace {
unsigned long long energy_mj = 0, violation_ns[2] = {0, 0};
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
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
  if (device != kDevice) return 2;
  *mj = (energy_mj += 1500);
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
