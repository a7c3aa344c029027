#include "run_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "fingerprint.h"
#include "perfbench/posix_fs.h"
#include "report/run_report.h"

namespace perfbench::cli {
namespace {

class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  void Update(const ProgressEvent& e) {
    if (!enabled_) return;
    char eta[64] = "";
    if (e.group_index > 0) {
      const double left = e.elapsed_s / e.group_index * (e.group_count - e.group_index);
      std::snprintf(eta, sizeof eta, ", ~%.0f s left", left);
    }
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s  (%.0f s elapsed%s)", e.group_index + 1, e.group_count,
                 e.name.c_str(), e.elapsed_s, eta);
    std::fflush(stderr);
  }
  void Done() {
    if (enabled_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  bool enabled_;
};

}  // namespace

void AddMeasureOptions(po::options_description& desc, bool for_gate) {
  const std::string from = for_gate ? " (default: the baseline's)" : "";
  desc.add_options()
      ("repetitions", po::value<int>()->value_name("N"),
       (for_gate ? "timed repetitions per variant in the first round (default: the baseline's)"
                 : "timed repetitions per variant (default 15; 7 with --quick)"))
      ("warmup", po::value<int>()->value_name("N"),
       (for_gate ? "discarded warm-up steps per variant (default: the baseline's)"
                 : "discarded warm-up steps per variant (default 3; 2 with --quick)"))
      ("device", po::value<std::string>()->value_name("D"), ("auto | cpu | cuda" + from + (for_gate ? "" : " (default auto)")).c_str())
      ("threads", po::value<int>()->value_name("N"),
       ("intra-op threads, 0: the library default" + (for_gate ? from : std::string(" (default 0)"))).c_str())
      ("seed", po::value<uint64_t>()->value_name("N"), ("seed for weights and data" + (for_gate ? from : std::string(" (default 42)"))).c_str())
      ("timeout", po::value<double>()->value_name("SECONDS"),
       ("wall-clock limit per workload group; exceeded -> recorded as failed" +
        (for_gate ? from : std::string(" (default 300)"))).c_str());
}

RunSettings ResolveSettings(const po::variables_map& vm, RunSettings s, DeviceBackend& backend) {
  if (vm.count("warmup")) s.warmup_steps = vm["warmup"].as<int>();
  if (vm.count("repetitions")) s.repetitions = vm["repetitions"].as<int>();
  if (vm.count("seed")) s.seed = vm["seed"].as<uint64_t>();
  if (vm.count("timeout")) s.timeout_s = vm["timeout"].as<double>();
  if (vm.count("threads")) s.threads = vm["threads"].as<int>();
  if (vm.count("device")) s.device = vm["device"].as<std::string>();
  if (s.repetitions < 1) throw UsageError("--repetitions must be at least 1");
  if (s.warmup_steps < 0) throw UsageError("--warmup must not be negative");
  if (s.threads < 0) throw UsageError("--threads must not be negative");
  if (!(s.timeout_s > 0)) throw UsageError("--timeout must be positive");
  CheckChoice("--device", s.device, {"auto", "cpu", "cuda"});
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
       "replace a param's values in every variant that has it (e.g. bytes=1048576,67108864)")
      ("comm-timeout", po::value<double>()->value_name("SECONDS"),
       "ddp: a rank silent this long fails the run, naming it (default 30; $PERFBENCH_COMM_TIMEOUT)")
      ("nnodes", po::value<int>()->value_name("N"), "ddp manual start: number of nodes")
      ("node-rank", po::value<int>()->value_name("I"), "ddp manual start: this node's index (0 writes results)")
      ("nproc-per-node", po::value<int>()->value_name("N"), "ddp manual start: ranks per node (default 1)")
      ("master-addr", po::value<std::string>()->value_name("HOST"), "ddp manual start: address of node 0")
      ("master-port", po::value<int>()->value_name("PORT"), "ddp manual start: TCP port on node 0 (default 29500)");
}

void ResolveDistributed(const po::variables_map& vm, RunSettings* settings, Selection* sel) {
  DistributedLaunch l;
  try {
    l = ParseLaunchEnvironment([](const char* n) { return std::getenv(n); });
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("launcher environment: ") + e.what());
  }
  const bool manual = vm.count("nnodes") || vm.count("node-rank") || vm.count("nproc-per-node") ||
                      vm.count("master-addr") || vm.count("master-port");
  if (manual) {
    if (l.Fixed())
      throw UsageError("--nnodes/--node-rank/... given inside a launcher's environment (" + l.source +
                       "); use one or the other");
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
  }
  if (vm.count("comm-timeout")) l.comm_timeout_s = vm["comm-timeout"].as<double>();
  if (!(l.comm_timeout_s > 0)) throw UsageError("--comm-timeout must be positive");
  settings->launch = l;

  for (const auto& kv : vm.count("param") ? vm["param"].as<std::vector<std::string>>() : std::vector<std::string>{}) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
      throw UsageError("--param '" + kv + "': expected KEY=VALUE[,VALUE]");
    sel->overrides.emplace_back(kv.substr(0, eq), SplitCommas({kv.substr(eq + 1)}));
  }
  if (vm.count("world-sizes")) {
    auto sizes = SplitCommas({vm["world-sizes"].as<std::string>()});
    for (const auto& s : sizes)
      if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || std::stoi(s) < 1 || std::stoi(s) > 1024)
        throw UsageError("--world-sizes: '" + s + "' is not a world size (1..1024)");
    sel->overrides.emplace_back("world_size", sizes);
  }
  if (l.Fixed() && l.rank == 0) CheckPortFree(l);
  if (l.Fixed()) {
    for (const auto& s : sel->suites)
      if (s != "ddp")
        throw UsageError("a launched multi-rank run (" + l.source + ") runs only the ddp suite, not '" + s + "'");
    sel->suites = {"ddp"};
    if (vm.count("world-sizes"))
      throw UsageError("--world-sizes applies when perfbench starts the ranks; this launch fixes the world size at " +
                       std::to_string(l.world_size));
    sel->overrides.emplace_back("world_size", std::vector<std::string>{std::to_string(l.world_size)});
  }
}

void AddDataDirOption(po::options_description& desc) {
  desc.add_options()("data-dir", po::value<std::string>()->value_name("DIR"),
                     "dataset cache (default $PERFBENCH_DATA_DIR, else $XDG_CACHE_HOME/perfbench/data, "
                     "else ~/.cache/perfbench/data)");
}

std::string ResolveDataDir(const po::variables_map& vm, const std::vector<VariantRef>& variants) {
  std::string dir;
  if (vm.count("data-dir")) {
    dir = vm["data-dir"].as<std::string>();
    if (dir.empty()) throw UsageError("--data-dir is empty");
  } else if (const char* e = std::getenv("PERFBENCH_DATA_DIR"); e && *e) {
    dir = e;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::string(x) + "/perfbench/data";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.cache/perfbench/data";
  } else {
    dir = "perfbench-data";
  }
  const bool needed = std::any_of(variants.begin(), variants.end(), [](const VariantRef& v) {
    const auto& n = v.workload->info.needs;
    return std::find(n.begin(), n.end(), "data") != n.end();
  });
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

RunRecord NewRunRecord(const std::string& label, const RunSettings& settings, const Selection& sel,
                       const std::string& command, DeviceBackend& backend) {
  RunRecord run;
  run.label = label;
  run.fingerprint = CaptureFingerprint(backend);
  run.profile_key = ProfileKey(run.fingerprint);
  run.settings = {{"warmup_steps", settings.warmup_steps}, {"repetitions", settings.repetitions},
                  {"timeout_s", settings.timeout_s},       {"seed", settings.seed},
                  {"quick", settings.quick},               {"device", settings.device},
                  {"threads", settings.threads},           {"suites", sel.suites},
                  {"filter", sel.filter}};
  if (!sel.overrides.empty()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [k, v] : sel.overrides) o[k] = v;
    run.settings["param_overrides"] = o;
  }
  if (settings.launch.Fixed() || settings.launch.comm_timeout_s != DistributedLaunch{}.comm_timeout_s) {
    const auto& l = settings.launch;
    run.settings["launch"] = {{"source", l.source}, {"world_size", l.world_size}, {"nnodes", l.nnodes},
                              {"nproc_per_node", l.nproc_per_node}, {"comm_timeout_s", l.comm_timeout_s}};
  }
  run.command = command;
  return run;
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

std::vector<ResultRecord> ExecuteGroups(Store* store, int64_t run_id, const RunSettings& settings,
                                        DeviceBackend& backend, const std::vector<VariantGroup>& groups,
                                        size_t* failed) {
  Runner runner(settings, backend);
  Progress progress(StderrIsTerminal() && settings.launch.rank == 0);
  runner.set_progress([&](const ProgressEvent& e) { progress.Update(e); });
  std::vector<ResultRecord> all;
  runner.RunAll(groups, [&](const std::vector<VariantOutcome>& outcomes) {
    std::vector<ResultRecord> records;
    for (const auto& o : outcomes) {
      if (o.status == OutcomeStatus::kFailed) ++*failed;
      auto r = ToResultRecords(o);
      records.insert(records.end(), r.begin(), r.end());
    }
    if (store) store->AppendResults(run_id, records);  // one transaction per group
    all.insert(all.end(), records.begin(), records.end());
  });
  progress.Done();
  return all;
}

}  // namespace perfbench::cli
