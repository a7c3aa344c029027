#include "run_support.h"

#include "store/location.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "fingerprint.h"
#include "perfbench/posix_fs.h"
#include "report/run_report.h"
#include "run_cost.h"

namespace perfbench::cli {
namespace {

// Where the run is, on stderr. On a terminal: one line, rewritten at a
// group's start and at most twice a second within it. Elsewhere (a CI log, a
// file): a plain line once every `log_every_s` seconds at most ($PERFBENCH_
// PROGRESS_EVERY, default kLogEveryS), so that a long run shows it is moving
// and a short one prints nothing.
class Progress {
 public:
  enum class Mode { kOff, kTerminal, kLog };
  static constexpr double kLogEveryS = 15;
  Progress(Mode mode, double log_every_s) : mode_(mode), log_every_s_(log_every_s) {}
  void Update(const ProgressEvent& e) {
    if (mode_ == Mode::kOff) return;
    const bool fresh = e.group_elapsed_s == 0;
    if (mode_ == Mode::kLog) {
      if (e.elapsed_s - last_print_s_ < log_every_s_ || (log_every_s_ <= 0 && !fresh)) return;
      last_print_s_ = e.elapsed_s;
      fmt::print(stderr, "progress: {}\n", Text(e, fresh));
      std::fflush(stderr);
      return;
    }
    if (!fresh && e.elapsed_s - last_print_s_ < 0.5) return;
    last_print_s_ = e.elapsed_s;
    fmt::print(stderr, "\r\033[K{}", Text(e, fresh));
    std::fflush(stderr);
  }
  void Done() {
    if (mode_ == Mode::kTerminal) std::fprintf(stderr, "\r\033[K");
  }

 private:
  static std::string Text(const ProgressEvent& e, bool fresh) {
    const double left = e.RemainingSeconds();
    const std::string eta = left >= 0 ? fmt::format(", ~{:.0f} s left", left) : "";
    const std::string within = fresh ? "" : fmt::format(", group {:.0f}%", 100 * e.group_fraction);
    return fmt::format("[{}/{}] {}  ({:.0f} s elapsed{}{})", e.group_index + 1, e.group_count, e.name, e.elapsed_s,
                       within, eta);
  }
  Mode mode_;
  double log_every_s_;
  double last_print_s_ = 0;
};

// The progress mode of this process: none on a rank other than 0.
Progress MakeProgress(const RunSettings& settings) {
  if (settings.launch.rank != 0) return Progress(Progress::Mode::kOff, 0);
  if (StderrIsTerminal()) return Progress(Progress::Mode::kTerminal, 0);
  double every = Progress::kLogEveryS;
  if (const char* v = std::getenv("PERFBENCH_PROGRESS_EVERY"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const double parsed = std::strtod(v, &end);
    if (end != v && *end == '\0' && parsed >= 0) every = parsed;
    else std::fprintf(stderr, "warning: PERFBENCH_PROGRESS_EVERY='%s' is not seconds >= 0; using %g\n", v, every);
  }
  return Progress(Progress::Mode::kLog, every);
}

}  // namespace

void AddMeasureOptions(po::options_description& desc, bool for_gate) {
  const std::string from = " (default: the baseline's)";
  const std::string reps_from = " (default: a quarter of the baseline's, at least 2)";
  auto def = [&](const std::string& run_default) { return for_gate ? from : " (default " + run_default + ")"; };
  const std::string reps = fmt::format("{}; {} with --quick", RunSettings::kRepetitions, RunSettings::kQuickRepetitions);
  const std::string warm = fmt::format("{}; {} with --quick", RunSettings::kWarmupSteps, RunSettings::kQuickWarmupSteps);
  desc.add_options()
      ("repetitions", po::value<int>()->value_name("N"),
       (for_gate ? "timed repetitions per variant in each process" + reps_from
                 : "timed repetitions per variant" + def(reps)).c_str())
      ("warmup", po::value<int>()->value_name("N"), ("discarded warm-up steps per variant" + def(warm)).c_str())
      ("device", po::value<std::string>()->value_name("D"), ("auto | cpu | cuda" + def("auto")).c_str())
      ("threads", po::value<int>()->value_name("N"), ("intra-op threads, 0: the library default" + def("0")).c_str())
      ("seed", po::value<uint64_t>()->value_name("N"),
       ("seed for weights and data" + def(std::to_string(RunSettings::kSeed))).c_str())
      ("timeout", po::value<double>()->value_name("SECONDS"),
       ("time budget per variant: planned repetitions are cut (at least " +
        std::to_string(RunSettings::kMinRepetitions) + ") or the variant skipped when its step time says they do " +
        "not fit; a variant still over it is recorded as failed" + def(fmt::format("{:g}", RunSettings::kTimeoutS)))
           .c_str());
}

RunSettings ResolveSettings(const po::variables_map& vm, RunSettings s, DeviceBackend& backend) {
  if (vm.count("warmup")) s.warmup_steps = vm["warmup"].as<int>();
  if (vm.count("repetitions")) s.repetitions = vm["repetitions"].as<int>();
  if (vm.count("seed")) s.seed = vm["seed"].as<uint64_t>();
  if (vm.count("timeout")) s.timeout_s = vm["timeout"].as<double>();
  if (vm.count("threads")) s.threads = vm["threads"].as<int>();
  if (vm.count("device")) s.device = vm["device"].as<std::string>();
  try {
    s.Validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (s.device == "cuda" && !backend.CudaAvailable())
    throw UsageError("--device cuda: no CUDA device is available on this machine");
  if (s.device == "auto") s.device = backend.CudaAvailable() ? "cuda" : "cpu";
  return s;
}

namespace {

// Rank 0 serves the rendezvous on the master port: say so now if it is taken.
void CheckPortFree(const DistributedLaunch& l) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as the store's server does
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(l.master_port));
  const bool taken = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == EADDRINUSE;
  close(fd);
  if (taken)
    throw UsageError("master port " + std::to_string(l.master_port) +
                     " is already in use on this machine (rank 0 serves the rendezvous there); " +
                     (l.source == "flags" ? "choose another --master-port" : "set another MASTER_PORT"));
}

}  // namespace

void AddDistributedOptions(po::options_description& desc) {
  desc.add_options()
      ("world-sizes", po::value<std::string>()->value_name("N[,N]"),
       "ddp: world sizes to sweep when perfbench starts the ranks itself (default 1,2)")
      ("param", po::value<std::vector<std::string>>()->composing()->value_name("KEY=V[,V]"),
       "replace a param's values in every variant that has it (e.g. bytes=1048576,67108864), or add an "
       "optional one (amp: accumulation, memory_format); a KEY no selected workload has is an error")
      ("model-file", po::value<std::vector<std::string>>()->composing()->value_name("PATH"),
       "model suite: an exported model to benchmark (AOTInductor .pt2 or TorchScript, from "
       "scripts/export-model.py); repeat for several; alone, it selects the model suite")
      ("comm-timeout", po::value<double>()->value_name("SECONDS"),
       "ddp: a rank silent this long fails the run, naming it (default 30; $PERFBENCH_COMM_TIMEOUT)")
      ("nnodes", po::value<int>()->value_name("N"), "ddp manual start: number of nodes")
      ("node-rank", po::value<int>()->value_name("I"), "ddp manual start: this node's index (0 writes results)")
      ("nproc-per-node", po::value<int>()->value_name("N"), "ddp manual start: ranks per node (default 1)")
      ("master-addr", po::value<std::string>()->value_name("HOST"), "ddp manual start: address of node 0")
      ("master-port", po::value<int>()->value_name("PORT"), "ddp manual start: TCP port on node 0 (default 29500)");
}

namespace {

// --nnodes --node-rank --nproc-per-node --master-addr --master-port.
DistributedLaunch ManualLaunch(const po::variables_map& vm) {
  DistributedLaunch l;
  l.mode = DistributedLaunch::Mode::kManual;
  l.source = "flags";
  l.nnodes = vm.count("nnodes") ? vm["nnodes"].as<int>() : 1;
  l.node_rank = vm.count("node-rank") ? vm["node-rank"].as<int>() : 0;
  l.nproc_per_node = vm.count("nproc-per-node") ? vm["nproc-per-node"].as<int>() : 1;
  if (l.nnodes < 1) throw UsageError("--nnodes must be at least 1");
  if (l.nproc_per_node < 1) throw UsageError("--nproc-per-node must be at least 1");
  if (l.node_rank < 0 || l.node_rank >= l.nnodes)
    throw UsageError("--node-rank must be in [0, " + std::to_string(l.nnodes) + ")");
  if (l.nnodes > 1 && !vm.count("master-addr")) throw UsageError("--nnodes > 1 needs --master-addr (node 0's address)");
  if (vm.count("master-addr")) l.master_addr = vm["master-addr"].as<std::string>();
  l.master_port = vm.count("master-port") ? vm["master-port"].as<int>() : 29500;
  if (l.master_port < 1 || l.master_port > 65535) throw UsageError("--master-port must be in [1, 65535]");
  l.world_size = l.nnodes * l.nproc_per_node;
  l.rank = l.node_rank * l.nproc_per_node;
  l.local_rank = 0;
  return l;
}

DistributedLaunch ResolveLaunch(const po::variables_map& vm) {
  DistributedLaunch l;
  try {
    l = ParseLaunchEnvironment([](const char* n) { return std::getenv(n); });
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("launcher environment: ") + e.what());
  }
  const bool manual = vm.count("nnodes") || vm.count("node-rank") || vm.count("nproc-per-node") ||
                      vm.count("master-addr") || vm.count("master-port");
  if (manual && l.Fixed())
    throw UsageError("--nnodes/--node-rank/... given inside a launcher's environment (" + l.source +
                     "); use one or the other");
  if (manual) l = ManualLaunch(vm);
  if (vm.count("comm-timeout")) l.comm_timeout_s = vm["comm-timeout"].as<double>();
  if (!(l.comm_timeout_s > 0)) throw UsageError("--comm-timeout must be positive");
  return l;
}

std::vector<ParamOverride> ParamFlags(const po::variables_map& vm) {
  std::vector<ParamOverride> out;
  for (const auto& kv : vm.count("param") ? vm["param"].as<std::vector<std::string>>() : std::vector<std::string>{}) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
      throw UsageError("--param '" + kv + "': expected KEY=VALUE[,VALUE]");
    out.push_back({kv.substr(0, eq), SplitCommas({kv.substr(eq + 1)})});
  }
  return out;
}

std::vector<std::string> WorldSizes(const std::string& text) {
  auto sizes = SplitCommas({text});
  for (const auto& s : sizes)
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 4 || std::stoi(s) < 1 ||
        std::stoi(s) > 1024)
      throw UsageError("--world-sizes: '" + s + "' is not a world size (1..1024)");
  return sizes;
}

// Suites with a multi-rank workload (one that names a rank param).
std::set<std::string> MultiRankSuites() {
  std::set<std::string> out;
  for (const auto* w : AllWorkloads())
    if (!w->info.rank_param.empty()) out.insert(w->info.suite);
  return out;
}

// A launched run: only multi-rank suites, at the launch's world size.
void ApplyFixedLaunch(const po::variables_map& vm, RunSettings* s) {
  const auto multi = MultiRankSuites();
  for (const auto& suite : s->suites)
    if (!multi.count(suite))
      throw UsageError("a launched multi-rank run (" + s->launch.source + ") runs only multi-rank suites, not '" +
                       suite + "'");
  if (s->suites.empty()) s->suites.assign(multi.begin(), multi.end());
  if (vm.count("world-sizes"))
    throw UsageError("--world-sizes applies when perfbench starts the ranks; this launch fixes the world size at " +
                     std::to_string(s->launch.world_size));
  for (const auto& p : RankParams()) s->overrides.push_back({p, {std::to_string(s->launch.world_size)}});
}

}  // namespace

void ResolveDistributed(const po::variables_map& vm, RunSettings* s) {
  s->launch = ResolveLaunch(vm);
  for (auto& o : ParamFlags(vm)) s->overrides.push_back(std::move(o));
  if (vm.count("world-sizes")) {
    const auto sizes = WorldSizes(vm["world-sizes"].as<std::string>());
    for (const auto& p : RankParams()) s->overrides.push_back({p, sizes});
  }
  if (s->launch.Fixed() && s->launch.rank == 0) CheckPortFree(s->launch);
  if (s->launch.Fixed()) ApplyFixedLaunch(vm, s);
}

void AddDataDirOption(po::options_description& desc) {
  desc.add_options()("data-dir", po::value<std::string>()->value_name("DIR"),
                     "datasets and trained weights (default $PERFBENCH_DATA_DIR, else $XDG_CACHE_HOME/perfbench/data, "
                     "else ~/.cache/perfbench/data)");
}

std::string ResolveDataDir(const po::variables_map& vm, const std::vector<VariantRef>& variants,
                           const std::string& recorded) {
  const bool needed = std::any_of(variants.begin(), variants.end(), [](const VariantRef& v) {
    const auto& n = v.workload->info.needs;
    return std::find(n.begin(), n.end(), "data") != n.end();
  });
  std::string dir;
  if (vm.count("data-dir")) {
    dir = vm["data-dir"].as<std::string>();
    if (dir.empty()) throw UsageError("--data-dir is empty");
  } else if (!recorded.empty()) {
    dir = recorded;
  } else if (!needed) {
    return "";  // nothing reads it: nothing to record
  } else if (const char* e = std::getenv("PERFBENCH_DATA_DIR"); e && *e) {
    dir = e;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::string(x) + "/perfbench/data";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.cache/perfbench/data";
  } else {
    dir = "perfbench-data";
  }
  if (!needed) return dir;
  if (auto err = posix::MakeDirs(dir); !err.empty())
    throw UsageError("--data-dir '" + dir + "' cannot be created: " + err);
  const std::string probe = dir + "/.perfbench-write-test-" + std::to_string(getpid());
  FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) throw UsageError("--data-dir '" + dir + "' is not writable: " + std::strerror(errno));
  std::fclose(f);
  std::remove(probe.c_str());
  return dir;
}

// --model-file: absolute paths (child processes and a later gate may run
// elsewhere); alone, the files select the model suite. A file that is
// missing is the variant's failure, named at set-up, not a usage error.
void ResolveModelFiles(const po::variables_map& vm, RunSettings* s) {
  if (vm.count("model-file")) {
    for (const auto& path : vm["model-file"].as<std::vector<std::string>>()) {
      if (path.empty()) throw UsageError("--model-file: empty path");
      s->model_files.push_back(posix::Absolute(path));
    }
  }
  const bool model_suite = std::find(s->suites.begin(), s->suites.end(), "model") != s->suites.end();
  if (!s->model_files.empty() && s->suites.empty()) s->suites = {"model"};
  if (model_suite && s->model_files.empty())
    throw UsageError("the model suite runs the exported models given with --model-file PATH "
                     "(scripts/export-model.py makes one)");
}

RunSettings SelectionSettings(const po::variables_map& vm, DeviceBackend& backend) {
  RunSettings s = ResolveSettings(vm, RunSettings::Defaults(vm["quick"].as<bool>()), backend);
  if (vm.count("suite")) s.suites = SplitCommas(vm["suite"].as<std::vector<std::string>>());
  if (vm.count("filter")) s.filter = vm["filter"].as<std::string>();
  ResolveModelFiles(vm, &s);
  ResolveDistributed(vm, &s);
  return s;
}

std::vector<VariantRef> SelectOrThrow(const po::variables_map& vm, RunSettings* s) {
  std::vector<VariantRef> variants;
  try {
    variants = SelectVariants(*s);
    CheckOverridesKnown(*s);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (variants.empty()) throw UsageError("no workload matches the selection (see `perfbench list`)");
  s->data_dir = ResolveDataDir(vm, variants);
  return variants;
}

RunRecord NewRunRecord(const std::string& label, const RunSettings& settings, const std::string& command,
                       DeviceBackend& backend) {
  RunRecord run;
  run.label = label;
  run.fingerprint = CaptureFingerprint(backend);
  run.profile_key = ProfileKey(run.fingerprint);
  run.settings = settings.ToJson();
  run.command = command;
  run.machine = MachineName();  // the gate compares it before the store has it
  return run;
}

std::string CommandLine(const std::string& cmd, const std::vector<std::string>& args) {
  std::string line = "perfbench " + cmd;
  for (const auto& a : args) {  // a server URL's password is never stored (--db URL, --db=URL)
    const size_t eq = a.rfind("--", 0) == 0 ? a.find('=') : std::string::npos;
    line += " " + (eq == std::string::npos ? RedactLocation(a) : a.substr(0, eq + 1) + RedactLocation(a.substr(eq + 1)));
  }
  return line;
}

std::string ContextLine(const nlohmann::json& fp, const RunSettings& s) {
  std::ostringstream out;
  out << "perfbench " << fp.value("perfbench_version", "?") << " (" << fp.value("git_sha", "?") << ")  "
      << fp.value("cpu_model", "?") << ", " << fp.value("cpu_cores", 0) << " cores/"
      << fp.value("cpu_threads", 0) << " threads";
  if (fp.contains("torch_version")) out << "  torch " << fp["torch_version"].get<std::string>();
  out << "  device " << s.device;
  if (fp.contains("intra_op_threads")) out << "  intra-op threads " << fp["intra_op_threads"].get<int>();
  if (fp.value("gpu_count", 0) > 0) out << "  GPUs " << fp["gpu_names"].dump();
  return out.str();
}

namespace {

// Adds a group's records to `into`; returns the rows to store and whether
// they replace stored ones.
std::vector<ResultRecord> Merge(const std::vector<ResultRecord>& records, Execution* into, bool* replace) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < into->results.size(); ++i) index[ResultKey(into->results[i])] = i;
  std::vector<ResultRecord> rows;
  for (const auto& r : records) {
    auto it = index.find(ResultKey(r));
    if (it == index.end()) {
      into->results.push_back(r);
      rows.push_back(r);
      continue;
    }
    *replace = true;
    ResultRecord& have = into->results[it->second];
    have.AppendSamples(r);
    if (r.status == ResultStatus::kFailed) {
      have.status = ResultStatus::kFailed;
      have.reason = r.reason;
    }
    rows.push_back(have);
  }
  return rows;
}

// The control's groups (empty in a build without the micro suite).
std::vector<VariantGroup> ControlGroups(const RunSettings& s) {
  RunSettings c = s;
  c.suites = {kControlSuite};
  c.filter.clear();
  c.overrides.clear();
  c.quick = false;
  try {
    return GroupVariants(SelectVariants(c));
  } catch (const std::invalid_argument&) {
    return {};
  }
}

// True when a group is of a suite that is not hidden (not a self-test).
bool AnyRealSuite(const std::vector<VariantGroup>& groups) {
  return std::any_of(groups.begin(), groups.end(), [](const VariantGroup& g) { return !g.workload->info.hidden; });
}

// `groups` between two measurements of the control, when the run has one
// (RunSettings::control).
std::vector<VariantGroup> WithControl(const RunSettings& s, const std::vector<VariantGroup>& groups) {
  if (!s.control || s.launch.Fixed() || !AnyRealSuite(groups)) return groups;
  const auto control = ControlGroups(s);
  std::vector<VariantGroup> out = control;
  out.insert(out.end(), groups.begin(), groups.end());
  out.insert(out.end(), control.begin(), control.end());
  return out;
}

// `records` merged into `into` and stored in one transaction (when there is a store).
void MergeAndStore(Store* store, int64_t run_id, const std::vector<ResultRecord>& records, Execution* into) {
  if (records.empty()) return;
  bool replace = false;
  const auto rows = Merge(records, into, &replace);
  if (!store) return;
  if (replace)
    store->ReplaceResults(run_id, rows);
  else
    store->AppendResults(run_id, rows);
}

}  // namespace

// Variants an earlier process of run `run_id` skipped (no samples), by full
// name, with the reason it gave.
std::map<std::string, std::string> EarlierSkips(Store& store, int64_t run_id) {
  const std::string again = "skipped by an earlier process of this run: ";  // Runner's wording
  std::map<std::string, std::string> skips;
  for (const auto& r : store.GetResults(run_id))
    if (r.status == ResultStatus::kSkipped && r.samples.empty())
      skips.emplace(r.suite + "/" + r.workload + (r.params.empty() ? "" : "/" + r.params.Encode()),
                    r.reason.rfind(again, 0) == 0 ? r.reason.substr(again.size()) : r.reason);
  return skips;
}

void ExecuteGroups(Store* store, int64_t run_id, const RunSettings& settings, DeviceBackend& backend,
                   const std::vector<VariantGroup>& groups, Execution* into, const ProcessTag& process) {
  Runner runner(settings, backend);
  runner.set_process_seed(process.seed);
  runner.set_budget(process.budget_s);
  if (store && process.index > 0) runner.set_known_skips(EarlierSkips(*store, run_id));
  Progress progress = MakeProgress(settings);
  runner.set_progress([&](const ProgressEvent& e) { progress.Update(e); });
  runner.RunAll(WithControl(settings, groups), [&](const std::vector<VariantOutcome>& outcomes) {
    std::vector<ResultRecord> records;
    for (const auto& o : outcomes) {
      // A failed control is stored and reported, never the run's failure.
      if (o.status == ResultStatus::kFailed && o.variant.workload->info.suite == kControlSuite) {
        std::fprintf(stderr, "warning: the control %s failed: %s\n", o.variant.FullName().c_str(), o.reason.c_str());
      } else if (o.status == ResultStatus::kFailed) {
        ++into->failed;
      }
      auto r = ToResultRecords(o, process.index);
      records.insert(records.end(), r.begin(), r.end());
    }
    MergeAndStore(store, run_id, records, into);  // one transaction per group
  });
  progress.Done();
  into->timed_s += runner.timed_s();
  // Where the time went (run_cost.h), for runs of the real suites, as the
  // control is: the hidden self-test suites' runs hold their own rows only.
  if (AnyRealSuite(groups)) MergeAndStore(store, run_id, PhaseRecords(runner.phase_times(), process.index), into);
}

}  // namespace perfbench::cli
