#include "weight_store.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ATen/Version.h>
#include <torch/version.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <utility>
#include <vector>

#include "perfbench/posix_fs.h"

namespace perfbench::quant {
namespace {

std::mutex& Mu() {
  static std::mutex mu;
  return mu;
}

std::string& Dir() {
  static std::string dir;
  return dir;
}

// FNV-1a over the running executable's bytes, once per process; 0 when it
// cannot be read (the store then stays off).
uint64_t ExecutableHash() {
  static const uint64_t hash = [] {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    if (!in) return uint64_t{0};
    uint64_t h = 1469598103934665603ull;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      for (std::streamsize i = 0; i < in.gcount(); ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
    }
    return h;
  }();
  return hash;
}

// At most two entries per caller key, this one and the newest other (`ab`
// alternates two builds): older ones, of other builds, torch versions or
// CPU capabilities, are removed (a developer rebuilds often; resnet50's
// entry is 2 MB at quick size, more at full size).
void RemoveOlderEntries(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = path.substr(0, slash), name = path.substr(slash + 1);
  const size_t key_end = name.find("-torch");
  if (key_end == std::string::npos) return;  // not a name WeightStorePath made
  const std::string prefix = name.substr(0, key_end + 1);
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::pair<int64_t, std::string>> others;  // (mtime, path), newest first below
  while (const dirent* e = readdir(d)) {
    const std::string other = e->d_name;
    struct stat st {};
    if (other != name && other.rfind(prefix, 0) == 0 && other.ends_with(".pt") &&
        stat((dir + "/" + other).c_str(), &st) == 0)
      others.emplace_back(static_cast<int64_t>(st.st_mtime), dir + "/" + other);
  }
  closedir(d);
  std::sort(others.rbegin(), others.rend());
  for (size_t i = 1; i < others.size(); ++i) std::remove(others[i].second.c_str());
}

at::Generator CpuGenerator() { return at::globalContext().defaultGenerator(c10::DeviceType::CPU); }

}  // namespace

void SetWeightStoreDir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(Mu());
  Dir() = dir;
}

std::string TrainedWeightsKey(const std::string& model, const std::string& size, uint64_t seed) {
  return fmt::format("{}-{}-seed{}", model, size, seed);
}

std::string WeightStorePath(const std::string& key, const torch::Device& device) {
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(Mu());
    dir = Dir();
  }
  if (dir.empty() || !device.is_cpu() || ExecutableHash() == 0) return "";
  std::string name = fmt::format("{}-torch{}-{}-{:016x}.pt", key, TORCH_VERSION, at::get_cpu_capability(),
                                 ExecutableHash());
  for (char& c : name)
    if (c == '/' || c == ' ') c = '_';
  return dir + "/" + name;
}

bool LoadTrainedWeights(const std::string& path, const std::vector<torch::Tensor>& tensors) {
  if (path.empty() || !posix::Exists(path)) return false;
  std::vector<torch::Tensor> stored;
  try {
    torch::load(stored, path);
  } catch (const std::exception&) {
    return false;  // unreadable: trained again and replaced
  }
  if (stored.size() != tensors.size() + 1) return false;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (!stored[i].sizes().equals(tensors[i].sizes()) || stored[i].scalar_type() != tensors[i].scalar_type())
      return false;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i].copy_(stored[i]);
  at::Generator gen = CpuGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(stored.back());
  return true;
}

void SaveTrainedWeights(const std::string& path, const std::vector<torch::Tensor>& tensors) {
  if (path.empty()) return;
  const std::string dir = path.substr(0, path.rfind('/'));
  if (!posix::MakeDirs(dir).empty()) return;
  std::vector<torch::Tensor> out;
  out.reserve(tensors.size() + 1);
  for (const auto& t : tensors) out.push_back(t.detach().cpu());
  {
    at::Generator gen = CpuGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    out.push_back(gen.get_state());
  }
  const std::string tmp = fmt::format("{}.{}.tmp", path, getpid());
  try {
    torch::save(out, tmp);
  } catch (const std::exception&) {
    std::remove(tmp.c_str());
    return;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return;
  }
  RemoveOlderEntries(path);
}

}  // namespace perfbench::quant
