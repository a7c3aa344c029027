#include "processes.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "common.h"
#include "perfbench/backend.h"
#include "perfbench/posix_fs.h"
#include "perfbench/statistics.h"
#include "perfbench/workload.h"
#include "registry.h"
#include "run_support.h"
#include "store/store.h"
#include "two_level.h"

namespace perfbench::cli {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "stopped";
}

// The environment of the child, built before fork (setenv is not
// async-signal-safe).
std::vector<std::string> ChildEnvironment(const std::vector<std::pair<std::string, std::string>>& add) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const auto name = kv.substr(0, kv.find('='));
    if (std::none_of(add.begin(), add.end(), [&](const auto& a) { return a.first == name; })) out.push_back(kv);
  }
  for (const auto& [k, v] : add) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string SpawnAndWait(const std::vector<std::string>& argv_in,
                         const std::vector<std::pair<std::string, std::string>>& env, int* exit_code) {
  std::vector<std::string> args = argv_in, envs = ChildEnvironment(env);
  std::vector<char*> argv = Pointers(args), envp = Pointers(envs);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot start a process: fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphans if perfbench is killed
    if (getppid() != parent) _exit(1);
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : Describe(status);
}

uint64_t ProcessSeed(uint64_t seed, int64_t run_id, int index) {
  // splitmix64 over the three: distinct per run and process, reproducible.
  uint64_t x = seed ^ (static_cast<uint64_t>(run_id) * 0x9E3779B97F4A7C15ULL) ^ (static_cast<uint64_t>(index) << 32);
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

namespace {

// A temporary file removed when it goes out of scope.
struct TempFile {
  std::string path;
  TempFile() {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/perfbench-process-XXXXXX";
    const int fd = mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + pattern);
    close(fd);
    path = pattern;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

StoredProcess RunStoredProcess(Store& store, const std::vector<std::string>& argv,
                               const std::vector<std::pair<std::string, std::string>>& env, const std::string& label) {
  const auto before = store.RunsWithLabel(label);
  StoredProcess out;
  out.failure = SpawnAndWait(argv, env, &out.exit_code);
  const auto after = store.RunsWithLabel(label);
  if (!after.empty() && (before.empty() || after.front() != before.front())) {
    out.run_id = after.front();
    out.complete = store.GetRun(out.run_id).status == RunStatus::kComplete;
  }
  return out;
}

ProcessOutcome RunProcess(const ProcessJob& job, int index, double budget_s) {
  const std::string exe = posix::SelfExe();
  const TempFile report;
  const nlohmann::json doc = {{"db", job.db},         {"run_id", job.run_id},   {"process", index},
                              {"settings", job.settings.ToJson()}, {"variants", job.variants}, {"report", report.path},
                              {"budget_s", budget_s}};
  ProcessOutcome out;
  out.index = index;
  const double t0 = Now();
  const std::string how = SpawnAndWait({exe, "__process", doc.dump()}, {}, &out.exit_code);
  out.wall_s = Now() - t0;
  std::ifstream in(report.path);
  nlohmann::json r = nlohmann::json::parse(in, nullptr, false);
  if (out.exit_code != kExitOk && out.exit_code != kExitRuntime) out.failure = "process " + std::to_string(index) + " " + how;
  if (r.is_object()) {
    out.timed_s = r.value("timed_s", 0.0);
    out.failed_variants = r.value("failed", size_t{0});
  } else if (out.failure.empty()) {
    out.failure = "process " + std::to_string(index) + " left no report";
  }
  return out;
}

std::vector<ProcessOutcome> RunProcesses(const ProcessJob& job, int first, int count, int total) {
  std::vector<ProcessOutcome> out;
  const double t0 = Now();
  for (int i = first; i < first + count; ++i) {
    const double left_s = std::max(1e-3, job.budget_s - (Now() - t0)) / static_cast<double>(first + count - i);
    out.push_back(RunProcess(job, i, job.budget_s > 0 ? left_s : 0));
    const auto& p = out.back();
    std::cerr << "process " << i + 1 << "/" << total << ": " << fmt::format("{:.1f} s", p.wall_s);
    if (!p.failure.empty()) std::cerr << ", " << p.failure;
    if (p.failed_variants) std::cerr << ", " << p.failed_variants << " variant(s) failed";
    std::cerr << "\n";
  }
  return out;
}

namespace {

// The child: `perfbench __process DOC`.
int ProcessMain(const std::vector<std::string>& args) {
  if (args.size() != 1) throw std::invalid_argument("__process takes one JSON argument");
  const auto doc = nlohmann::json::parse(args.front());
  const RunSettings settings = RunSettings::FromJson(doc.at("settings"));
  const std::set<std::string> wanted(doc.at("variants").begin(), doc.at("variants").end());
  std::vector<VariantRef> variants;
  for (const auto& v : SelectVariants(settings))
    if (wanted.empty() || wanted.count(VariantKey(v.workload->info.suite, v.workload->info.name, v.params)))
      variants.push_back(v);
  auto store = Store::Open(doc.at("db").get<std::string>(), Store::Mode::kExisting);
  const int64_t run_id = doc.at("run_id").get<int64_t>();
  const int index = doc.at("process").get<int>();
  DeviceBackend& backend = GetDeviceBackend();
  backend.SetThreads(settings.threads);
  Execution done;
  done.results = store->GetResults(run_id);  // earlier processes' samples
  ExecuteGroups(store.get(), run_id, settings, backend, GroupVariants(variants), &done,
                {index, ProcessSeed(settings.seed, run_id, index), doc.value("budget_s", 0.0)});
  std::ofstream(doc.at("report").get<std::string>())
      << nlohmann::json{{"timed_s", done.timed_s}, {"failed", done.failed}}.dump();
  return done.failed ? kExitRuntime : kExitOk;
}

const bool kRegistered = RegisterInternalCommand("__process", ProcessMain);

}  // namespace

std::optional<Allocation> KaliberaJones(const std::vector<ResultRecord>& results,
                                        const std::vector<ProcessOutcome>& done, int reps) {
  if (done.size() < 2 || reps < 1) return std::nullopt;
  std::vector<double> rep_cost, process_cost;
  for (const auto& p : done) {
    rep_cost.push_back(p.timed_s / reps);
    process_cost.push_back(std::max(0.0, p.wall_s - p.timed_s));
  }
  const double c_rep = stats::Median(rep_cost), c_proc = stats::Median(process_cost);
  std::vector<double> optimal;
  for (const auto& r : results) {
    const auto c = stats::EstimateComponents(stats::Groups(r.samples, r.process));
    if (c.processes >= 2 && c.has_within && c.between > 0)
      optimal.push_back(stats::OptimalRepetitions(c, c_proc, c_rep, 2, 100));
  }
  if (optimal.empty() || !(c_rep > 0)) return std::nullopt;
  Allocation a;
  a.repetitions = static_cast<int>(std::lround(stats::Median(optimal)));
  const double total = static_cast<double>(done.size()) * (c_proc + reps * c_rep);
  a.processes = std::max(2, static_cast<int>(std::lround(total / (c_proc + a.repetitions * c_rep))));
  return a;
}

}  // namespace perfbench::cli
