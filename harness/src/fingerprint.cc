#include "fingerprint.h"

#include "nvml.h"

#include <fmt/format.h>

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "perfbench_version.h"

namespace perfbench {
namespace {

std::string Trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\"");
  const auto e = s.find_last_not_of(" \t\"\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void AddCpu(nlohmann::json& fp) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  std::string phys;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, colon));
    const std::string value = Trim(line.substr(colon + 1));
    if (key == "model name" && model.empty()) model = value;
    if (key == "flags" && flags.empty()) flags = value;
    if (key == "physical id") phys = value;
    if (key == "core id") cores.insert({phys, value});
  }
  fp["cpu_model"] = model.empty() ? "unknown" : model;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  fp["cpu_threads"] = online > 0 ? online : static_cast<long>(std::thread::hardware_concurrency());
  fp["cpu_cores"] = cores.empty() ? fp["cpu_threads"].get<long>() : static_cast<long>(cores.size());
  // The ISA extensions that change which kernels the libraries pick.
  std::vector<std::string> isa;
  std::istringstream words(flags);
  for (std::string f; words >> f;) {
    if (f == "avx2" || f == "fma" || f.rfind("avx512", 0) == 0 || f.rfind("amx", 0) == 0 ||
        f == "avx_vnni")
      isa.push_back(f);
  }
  fp["cpu_isa"] = isa;
}

void AddMemoryAndOs(nlohmann::json& fp) {
  std::ifstream mem("/proc/meminfo");
  std::string key;
  long long kib = 0;
  while (mem >> key >> kib) {
    if (key == "MemTotal:") {
      fp["memory_bytes"] = kib * 1024;
      break;
    }
    mem.ignore(256, '\n');
  }
  std::ifstream os("/etc/os-release");
  std::string line;
  while (std::getline(os, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) fp["os"] = Trim(line.substr(12));
  utsname u{};
  if (uname(&u) == 0) {
    fp["kernel"] = std::string(u.sysname) + " " + u.release;
    fp["arch"] = u.machine;
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  fp["hostname"] = host;
}

}  // namespace

const std::vector<std::string>& HardwareFields() {
  static const std::vector<std::string> fields = {"cpu_model", "cpu_cores", "cpu_threads",
                                                  "memory_gib", "arch", "gpu_count", "gpu_names",
                                                  "gpu_memory_bytes"};
  return fields;
}

nlohmann::json CaptureFingerprint(const DeviceBackend& backend) {
  nlohmann::json fp = nlohmann::json::object();
  AddCpu(fp);
  AddMemoryAndOs(fp);
  // MemTotal moves by a few MiB between boots; the hardware key uses GiB.
  if (fp.contains("memory_bytes"))
    fp["memory_gib"] = (fp["memory_bytes"].get<long long>() + (1LL << 29)) >> 30;
  fp["compiler"] = PERFBENCH_COMPILER;
  fp["build_type"] = PERFBENCH_BUILD_TYPE;
  fp["perfbench_version"] = PERFBENCH_VERSION;
  fp["git_sha"] = PERFBENCH_GIT_SHA;
  fp["backend"] = backend.Name();
  fp["gpu_count"] = 0;
  fp["gpu_names"] = nlohmann::json::array();
  fp["gpu_memory_bytes"] = nlohmann::json::array();
  backend.AddFingerprint(fp);
  if (const std::string driver = NvidiaDriverVersion(); !driver.empty()) fp["nvidia_driver"] = driver;
  return fp;
}

std::string ProfileKey(const nlohmann::json& fingerprint) {
  nlohmann::json hw = nlohmann::json::object();
  for (const auto& f : HardwareFields())
    hw[f] = fingerprint.contains(f) ? fingerprint[f] : nlohmann::json();
  const std::string canonical = hw.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // keys sorted: stable
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : canonical) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace perfbench
