// Directory helpers on plain POSIX calls. The perfbench binary links
// LibTorch, whose libtorch.so exports std::filesystem symbols of its own that
// the dynamic linker may bind our calls to (a remove_all crashed that way):
// code linked into the binary uses these instead of std::filesystem.
#pragma once

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace perfbench::posix {

// mkdir -p; returns "" or the error text.
inline std::string MakeDirs(const std::string& path) {
  if (path.empty()) return "empty path";
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return std::strerror(errno);
    }
    if (i < path.size()) cur += path[i];
  }
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  return "";
}

// This executable (/proc/self/exe), for starting more processes of it;
// std::runtime_error when it cannot be found.
inline std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot find the perfbench executable (/proc/self/exe)");
  buf[n] = 0;
  return buf;
}

inline bool Exists(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0;
}

// `path` made absolute: resolved (realpath) where it exists, else joined to
// the working directory as given.
inline std::string Absolute(const std::string& path) {
  if (char* real = realpath(path.c_str(), nullptr)) {
    std::string out = real;
    std::free(real);
    return out;
  }
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

// rm -rf (no error when absent).
inline void RemoveTree(const std::string& path) {
  if (!Exists(path)) return;
  nftw(
      path.c_str(),
      [](const char* p, const struct stat*, int, struct FTW*) { return std::remove(p) == 0 ? 0 : 0; }, 16,
      FTW_DEPTH | FTW_PHYS);
}

}  // namespace perfbench::posix
