// What arrives from other machines, fuzzed: imported run files, pushed runs,
// baseline exports and policy files. A seeded mutation harness (no libFuzzer
// build needed): inputs grow from real files (the corpus) by byte-level and
// JSON-aware mutations, and go through the same code the commands use
// (ParseRunDocument, the store's inserts, PushRuns, Policy::Load). A worker
// process runs them; the parent keeps the current input in shared memory, so
// a crash (a signal) or a hang (no progress for --hang seconds) is saved as a
// crasher and the worker restarts. Every rejection must be one line, and a
// rejected input must leave the store as it was.
//
//   fuzz_inputs --target import|push|baseline|policy --corpus DIR [--seconds 60] [--seed 1]
//               [--crashers DIR] [--plant]        (--plant: a planted bug the run must find)
//   fuzz_inputs --target T --replay DIR...        (each file once: the regression tests)
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <dirent.h>

#include "common.h"
#include "compare/policy.h"
#include "push.h"
#include "report/run_report.h"
#include "sources.h"
#include "store/store.h"

namespace {

using namespace perfbench;

constexpr size_t kMaxInput = 1 << 20;

struct Shared {
  volatile uint64_t executions = 0, rejected = 0, accepted = 0;
  volatile uint32_t size = 0;
  volatile int stop = 0;
  char data[kMaxInput];
};

struct Options {
  std::string target, corpus, crashers;
  std::vector<std::string> replay;
  int seconds = 60, hang_s = 10;
  uint64_t seed = 1;
  bool plant = false;
};

// A finding: the harness aborts, so the parent saves the input.
[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_inputs: finding: %s\n", what.c_str());
  std::abort();
}

void CheckOneLine(const std::string& message) {
  if (message.empty() || message.find('\n') != std::string::npos) Finding("a rejection not on one line: " + message);
}

size_t RunCount(Store& s) { return s.ListRuns().size(); }

// The planted bug (--plant): a negative sample accepted.
void Plant(const std::vector<Store::RunWithResults>& runs, bool plant) {
  if (!plant) return;
  for (const auto& r : runs)
    for (const auto& res : r.results)
      for (const double v : res.samples)
        if (v < 0) std::abort();
}

// import: a run document of any kind, as `perfbench import` takes it.
void TargetImport(const std::string& text, Store& store, bool plant) {
  cli::RunDocument doc = cli::ParseRunDocument(nlohmann::ordered_json::parse(text), "input");
  Plant(doc.runs, plant);
  for (auto& r : doc.runs)
    if (r.run.status != RunStatus::kComplete) r.run.status = RunStatus::kImported;
  for (const auto& row : store.InsertRunsReporting(doc.runs)) {
    RunToJson(store.GetRun(row.id), store.GetResults(row.id));
  }
}

// push: a run as pushed, from one store to another, twice (once).
void TargetPush(const std::string& text, Store& store, bool plant) {
  RunRecord run;
  std::vector<ResultRecord> results;
  RunFromJson(nlohmann::ordered_json::parse(text), &run, &results);
  Plant({{run, results}}, plant);
  if (run.status == RunStatus::kAborted) run.status = RunStatus::kImported;
  auto target = Store::Open(":memory:", Store::Mode::kCreate);
  const int64_t id = store.InsertRun(run, results);
  const auto first = PushRuns(store, *target, {id}, nullptr);
  const auto second = PushRuns(store, *target, {id}, nullptr);
  if (first.pushed + first.running != 1 || second.pushed != 0) Finding("a push landed twice or not at all");
  if (first.pushed &&
      target->GetResults(*target->FindRunByUuid(store.GetRun(id).uuid)).size() != store.GetResults(id).size())
    Finding("a pushed run lost results");
}

// baseline: a baseline export, as `baseline import` takes it.
void TargetBaseline(const std::string& text, Store& store, bool plant) {
  cli::RunDocument doc = cli::ParseRunDocument(nlohmann::ordered_json::parse(text), "input");
  if (doc.kind != "baseline") throw std::invalid_argument("not a baseline export");
  Plant(doc.runs, plant);
  for (auto& r : doc.runs)
    if (r.run.status != RunStatus::kComplete) r.run.status = RunStatus::kImported;
  store.InsertBaselineRuns(doc.baseline_name, doc.baseline_created_at, doc.runs);
  if (!store.GetBaseline(doc.baseline_name)) Finding("a baseline imported without its name");
}

// policy: a policy file, as compare and gate load it.
void TargetPolicy(const std::string& text, const std::string& path, bool plant) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  const Policy p = Policy::Load(path);
  if (plant && p.min_samples > 50) std::abort();
  ResultRecord r;
  r.suite = "amp";
  r.workload = "mlp";
  r.metric = "throughput";
  p.For(r);
}

// One input through the target: accepted, or rejected in one line with the
// store unchanged.
void Execute(const Options& o, const std::string& text, Store& store, Shared* sh) {
  const size_t before = RunCount(store);
  try {
    if (o.target == "import") TargetImport(text, store, o.plant);
    else if (o.target == "push") TargetPush(text, store, o.plant);
    else if (o.target == "baseline") TargetBaseline(text, store, o.plant);
    else TargetPolicy(text, "/tmp/fuzz_inputs_policy_" + std::to_string(getpid()) + ".json", o.plant);
    ++sh->accepted;
    return;
  } catch (const StoreError& e) {
    Finding(std::string("the store refused what the parser accepted: ") + e.what());
  } catch (const std::exception& e) {  // UsageError, invalid_argument, json errors, StoreInputError
    CheckOneLine(e.what());
  }
  ++sh->rejected;
  if (RunCount(store) != before) Finding("a rejected input wrote to the store");
}

// --- mutations -------------------------------------------------------------

std::vector<std::string> ReadDir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(dir + "/" + e->d_name, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      out.push_back(ss.str());
    }
    closedir(d);
  }
  return out;
}

const std::vector<std::string>& Tokens() {
  static const std::vector<std::string> t = {
      "{", "}", "[", "]", "\"", ",", ":", "-", "0", "1", "-1", "1e308", "1e309", "-0", "NaN", "null", "true",
      "false", "\"\"", "[]", "{}", "9223372036854775807", "18446744073709551616", "0.0000001", "\\u0000",
      "\\ud800", "\"schema_version\"", "\"run\"", "\"results\"", "\"runs\"", "\"samples\"", "\"process\"",
      "\"uuid\"", "\"kind\"", "\"perfbench-baseline\"", "\"status\"", "\"params\"", "\"attributes\"", "2", "5"};
  return t;
}

nlohmann::ordered_json RandomValue(std::mt19937_64& rng) {
  static const std::vector<nlohmann::ordered_json> v = {
      nullptr, true, 0, -1, 2, 1e308, -1e-308, 1.5, -3.25, INT64_MAX, INT64_MIN, UINT64_MAX, "", "x", "complete",
      "ok", "failed", "imported", "aborted", "0123456789abcdef0123456789abcdef", "g\u00e9\n", nlohmann::ordered_json::array(),
      nlohmann::ordered_json::object(), nlohmann::ordered_json::array({1, 2, 3}), nlohmann::ordered_json::array({-1.0, 0.0})};
  return v[rng() % v.size()];
}

void CollectNodes(nlohmann::ordered_json& j, std::vector<nlohmann::ordered_json*>& out) {
  out.push_back(&j);
  if (j.is_structured())
    for (auto& child : j) CollectNodes(child, out);
}

// JSON-aware: replace a node, drop an object key, or grow an array.
bool MutateJson(std::string& text, std::mt19937_64& rng) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded()) return false;
  std::vector<nlohmann::ordered_json*> nodes;
  CollectNodes(doc, nodes);
  nlohmann::ordered_json* n = nodes[rng() % nodes.size()];
  const int op = static_cast<int>(rng() % 4);
  if (op == 0 && n->is_object() && !n->empty()) {
    auto it = n->begin();
    std::advance(it, static_cast<long>(rng() % n->size()));
    n->erase(it.key());
  } else if (op == 1 && n->is_array() && !n->empty()) {
    n->push_back((*n)[rng() % n->size()]);
  } else if (op == 2 && n->is_number()) {
    *n = n->get<double>() * (rng() % 2 ? -1.0 : 1e6);
  } else {
    *n = RandomValue(rng);
  }
  text = doc.dump();
  return true;
}

void MutateBytes(std::string& s, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  const auto pos = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  switch (rng() % 5) {
    case 0:
      if (!s.empty()) s[pos(s.size())] ^= static_cast<char>(1 << (rng() % 8));
      break;
    case 1:
      if (!s.empty()) s.erase(pos(s.size()), 1 + rng() % 16);
      break;
    case 2:
      s.insert(pos(s.size() + 1), Tokens()[rng() % Tokens().size()]);
      break;
    case 3:
      if (!s.empty()) {
        const size_t a = pos(s.size());
        s.insert(pos(s.size() + 1), s.substr(a, 1 + rng() % 64));
      }
      break;
    default: {
      const std::string& other = corpus[rng() % corpus.size()];
      if (!other.empty()) s.insert(pos(s.size() + 1), other.substr(pos(other.size()), 1 + rng() % 64));
    }
  }
}

std::string NextInput(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  std::string s = corpus[rng() % corpus.size()];
  const int rounds = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < rounds; ++i)
    if (rng() % 3 != 0 && MutateJson(s, rng)) continue;
    else MutateBytes(s, corpus, rng);
  if (s.size() > kMaxInput) s.resize(kMaxInput);
  return s;
}

// --- processes ---------------------------------------------------------------

std::unique_ptr<Store> FreshStore() { return Store::Open(":memory:", Store::Mode::kCreate); }

[[noreturn]] void Worker(const Options& o, const std::vector<std::string>& corpus, uint64_t seed, Shared* sh) {
  std::mt19937_64 rng(seed);
  auto store = FreshStore();
  for (uint64_t i = 0; !sh->stop; ++i) {
    const std::string input = NextInput(corpus, rng);
    std::memcpy(sh->data, input.data(), input.size());
    sh->size = static_cast<uint32_t>(input.size());
    Execute(o, input, *store, sh);
    ++sh->executions;
    if (i % 500 == 499) store = FreshStore();  // a bounded database
  }
  _exit(0);
}

void Save(const Options& o, const Shared* sh, const std::string& kind, int n) {
  const std::string path = o.crashers + "/" + o.target + "-" + kind + "-" + std::to_string(n);
  std::ofstream(path, std::ios::binary).write(sh->data, sh->size);
  std::printf("fuzz_inputs: %s: %s saved as %s\n", o.target.c_str(), kind.c_str(), path.c_str());
}

int Fuzz(const Options& o) {
  const std::vector<std::string> corpus = ReadDir(o.corpus);
  if (corpus.empty()) {
    std::fprintf(stderr, "fuzz_inputs: no corpus files in %s\n", o.corpus.c_str());
    return 2;
  }
  auto* sh = static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (sh) Shared();
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + std::chrono::seconds(o.seconds);
  int crashes = 0, hangs = 0, restarts = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t pid = fork();
    if (pid == 0) Worker(o, corpus, o.seed * 1000003 + static_cast<uint64_t>(restarts), sh);
    ++restarts;
    uint64_t seen = sh->executions;
    auto last_progress = std::chrono::steady_clock::now();
    int status = 0;
    for (;;) {
      usleep(50000);
      if (waitpid(pid, &status, WNOHANG) == pid) {
        if (WIFSIGNALED(status)) Save(o, sh, "crash", ++crashes);
        break;
      }
      const auto now = std::chrono::steady_clock::now();
      if (sh->executions != seen) seen = sh->executions, last_progress = now;
      if (now - last_progress > std::chrono::seconds(o.hang_s)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        Save(o, sh, "hang", ++hangs);
        break;
      }
      if (now >= deadline) {
        sh->stop = 1;
        waitpid(pid, &status, 0);
        break;
      }
    }
    if (o.plant && crashes > 0) break;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fuzz_inputs: %s: %llu executions in %.0f s (%.0f/s), %llu accepted, %llu rejected in one line, "
              "%d crashes, %d hangs\n",
              o.target.c_str(), static_cast<unsigned long long>(sh->executions), secs, sh->executions / secs,
              static_cast<unsigned long long>(sh->accepted), static_cast<unsigned long long>(sh->rejected), crashes,
              hangs);
  if (o.plant) return crashes > 0 ? 0 : 1;  // the planted bug must be found
  return crashes + hangs == 0 ? 0 : 1;
}

// Each file once, in a child each (a crash names its file).
int Replay(const Options& o) {
  int failed = 0, files = 0;
  for (const auto& dir : o.replay) {
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const std::string path = dir + "/" + e->d_name;
      std::ifstream in(path, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      ++files;
      const pid_t pid = fork();
      if (pid == 0) {
        Shared sh;
        auto store = FreshStore();
        Execute(o, ss.str(), *store, &sh);
        _exit(0);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::printf("fuzz_inputs: %s: %s crashes\n", o.target.c_str(), path.c_str());
        ++failed;
      }
    }
    closedir(d);
  }
  std::printf("fuzz_inputs: %s: replayed %d file(s), %d crashed\n", o.target.c_str(), files, failed);
  return failed == 0 && files > 0 ? 0 : 1;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--target") o.target = value();
    else if (a == "--corpus") o.corpus = value();
    else if (a == "--crashers") o.crashers = value();
    else if (a == "--seconds") o.seconds = std::stoi(value());
    else if (a == "--hang") o.hang_s = std::stoi(value());
    else if (a == "--seed") o.seed = std::stoull(value());
    else if (a == "--plant") o.plant = true;
    else if (a == "--replay") while (i + 1 < argc && argv[i + 1][0] != '-') o.replay.push_back(argv[++i]);
    else throw std::invalid_argument("unknown argument " + a);
  }
  if (o.target != "import" && o.target != "push" && o.target != "baseline" && o.target != "policy")
    throw std::invalid_argument("--target: import, push, baseline or policy");
  if (o.replay.empty() && o.corpus.empty()) throw std::invalid_argument("--corpus DIR or --replay DIR... is required");
  if (o.crashers.empty()) o.crashers = ".";
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = Parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_inputs: %s\n", e.what());
    return 2;
  }
  return o.replay.empty() ? Fuzz(o) : Replay(o);
}
