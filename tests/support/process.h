// Test support: run a command in a directory and collect its exit code,
// stdout and stderr apart (cli_test, ddp_test).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace perfbench::testing {

struct ProcessResult {
  int code = -1;  // exit status; -1 when killed by a signal
  std::string out, err;
};

// Runs `command` through /bin/sh with `dir` as the working directory.
inline ProcessResult RunIn(const std::filesystem::path& dir, const std::string& command) {
  const std::string err_file = (dir / ".stderr.txt").string();
  const std::string cmd = "cd '" + dir.string() + "' && " + command + " 2>'" + err_file + "'";
  ProcessResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_file);
  return r;
}

// Lines in `s` (newlines counted).
inline int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace perfbench::testing
