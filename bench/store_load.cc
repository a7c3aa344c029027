// Concurrent writers into one store: W processes each record N runs the way
// `perfbench run` does (BeginRun, one transaction per variant's results,
// FinishRun), into an SQLite file or a PostgreSQL server. Then every run,
// result and sample is counted: nothing lost, nothing half-written, no
// update lost (every run finished). Prints the runs per second the store
// sustained. CI runs 8 x 10 (tests); bench runs 8 x 100.
//
//   store_load --db PATH|URL --template RUN.json [--writers 8] [--runs 100]
//              [--label L] [--timeout SECONDS]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "report/run_report.h"
#include "store/store.h"

namespace {

using perfbench::ResultRecord;
using perfbench::RunRecord;
using perfbench::Store;

struct Options {
  std::string db, template_path, label = "store-load";
  int writers = 8, runs = 100, timeout_s = 600;
};

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--db") o.db = value();
    else if (a == "--template") o.template_path = value();
    else if (a == "--label") o.label = value();
    else if (a == "--writers") o.writers = std::stoi(value());
    else if (a == "--runs") o.runs = std::stoi(value());
    else if (a == "--timeout") o.timeout_s = std::stoi(value());
    else throw std::invalid_argument("unknown argument " + a);
  }
  if (o.db.empty() || o.template_path.empty()) throw std::invalid_argument("--db and --template are required");
  if (o.writers < 1 || o.runs < 1) throw std::invalid_argument("--writers and --runs must be positive");
  return o;
}

void LoadTemplate(const std::string& path, RunRecord* run, std::vector<ResultRecord>* results) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  perfbench::RunFromJson(nlohmann::ordered_json::parse(ss.str()), run, results);
}

// One writer: `runs` runs, as `perfbench run` records them.
int Writer(const Options& o, int k, RunRecord run, const std::vector<ResultRecord>& results) {
  try {
    auto store = Store::Open(o.db, Store::Mode::kExisting);
    for (int i = 0; i < o.runs; ++i) {
      run.uuid.clear();
      run.pid = 0;
      run.label = o.label;
      run.machine = "writer-" + std::to_string(k);
      const int64_t id = store->BeginRun(run);
      for (const auto& r : results) store->AppendResults(id, {r});
      store->FinishRun(id, perfbench::RunStatus::kComplete);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "store_load: writer " << k << ": " << e.what() << "\n";
    return 1;
  }
}

struct Counts {
  size_t runs = 0, finished = 0, results = 0, samples = 0;
};

Counts Count(const Options& o) {
  auto store = Store::Open(o.db, Store::Mode::kReadOnly);
  Counts c;
  for (const int64_t id : store->RunsWithLabel(o.label)) {
    ++c.runs;
    c.finished += store->GetRun(id).status == perfbench::RunStatus::kComplete;
    for (const auto& r : store->GetResults(id)) {
      ++c.results;
      c.samples += r.samples.size();
    }
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  RunRecord run;
  std::vector<ResultRecord> results;
  try {
    o = ParseArgs(argc, argv);
    LoadTemplate(o.template_path, &run, &results);
    Store::Open(o.db, Store::Mode::kCreate).reset();  // the schema, before the writers race
  } catch (const std::exception& e) {
    std::cerr << "store_load: " << e.what() << "\n";
    return 2;
  }
  const Counts before = Count(o);
  size_t samples_per_run = 0;
  for (const auto& r : results) samples_per_run += r.samples.size();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  for (int k = 0; k < o.writers; ++k) {
    const pid_t pid = fork();
    if (pid == 0) _exit(Writer(o, k, run, results));
    pids.push_back(pid);
  }
  int failed = 0;
  for (const pid_t pid : pids) {
    int status = 0;
    for (;;) {  // a deadlock shows as no end within the timeout
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(o.timeout_s)) {
        for (const pid_t p : pids) kill(p, SIGKILL);
        std::cerr << "store_load: writers still running after " << o.timeout_s << " s (deadlock?)\n";
        return 1;
      }
      usleep(20000);
    }
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Counts after = Count(o);
  const size_t want = static_cast<size_t>(o.writers) * static_cast<size_t>(o.runs);
  const Counts got{after.runs - before.runs, after.finished - before.finished, after.results - before.results,
                   after.samples - before.samples};
  const bool ok = failed == 0 && got.runs == want && got.finished == want && got.results == want * results.size() &&
                  got.samples == want * samples_per_run;
  std::printf("store_load: %s %d writers x %d runs: runs %zu/%zu, finished %zu/%zu, results %zu/%zu, samples %zu/%zu, "
              "%.2f s, %.1f runs/s%s\n",
              Store::Open(o.db, Store::Mode::kReadOnly)->IsServer() ? "postgresql" : "sqlite", o.writers, o.runs,
              got.runs, want, got.finished, want, got.results, want * results.size(), got.samples,
              want * samples_per_run, secs, static_cast<double>(want) / secs, ok ? "" : "  MISMATCH");
  return ok ? 0 : 1;
}
