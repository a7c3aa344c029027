// perfbench run: select variants, run them, store and print the results.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "common.h"
#include "fingerprint.h"
#include "perfbench/backend.h"
#include "registry.h"
#include "report/run_report.h"
#include "runner.h"

namespace perfbench::cli {
namespace {

// Defaults: full runs take enough samples for google/benchmark's U-test
// advice (>= 9); --quick keeps CI short but still gives >= 5 samples.
constexpr int kWarmup = 3, kRepetitions = 15;
constexpr int kQuickWarmup = 2, kQuickRepetitions = 7;

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

}  // namespace

int RunCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()
      ("suite", po::value<std::vector<std::string>>()->composing()->value_name("S[,S]"),
       "suites to run (default: all but hidden self-test suites)")
      ("filter", po::value<std::string>()->value_name("REGEX"),
       "run only variants whose full name (suite/workload/k:v/...) matches")
      ("quick", po::bool_switch(), "small sizes and fewer repetitions (CI, smoke tests)")
      ("label", po::value<std::string>()->value_name("L"), "label stored with the run (e.g. a version)")
      ("repetitions", po::value<int>()->value_name("N"),
       "timed repetitions per variant (default 15; 7 with --quick)")
      ("warmup", po::value<int>()->value_name("N"), "discarded warm-up steps per variant (default 3; 2 with --quick)")
      ("device", po::value<std::string>()->default_value("auto")->value_name("D"), "auto | cpu | cuda")
      ("threads", po::value<int>()->default_value(0)->value_name("N"), "intra-op threads (0: library default)")
      ("seed", po::value<uint64_t>()->default_value(42)->value_name("N"), "seed for weights and data")
      ("timeout", po::value<double>()->default_value(300)->value_name("SECONDS"),
       "wall-clock limit per workload group; exceeded -> recorded as failed")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"),
       "what to print on stdout: table | json | none");
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm,
             "usage: perfbench run [--suite S[,S]] [--filter REGEX] [--quick] [--label L] [--db PATH]\n"
             "                     [--repetitions N] [--warmup N] [--device auto|cpu|cuda] [--threads N]\n"
             "                     [--seed N] [--timeout SECONDS] [--format table|json|none]\n\n"
             "Runs the selected workloads (warm-up discarded, timed repetitions interleaved across\n"
             "the variants compared with each other), stores every sample with this machine's\n"
             "fingerprint, and prints one row per result. Exit 0 when all ran, 4 when a workload\n"
             "failed (the others are still recorded), 2 on bad input."))
    return kExitOk;

  RunSettings settings;
  settings.quick = vm["quick"].as<bool>();
  settings.warmup_steps = vm.count("warmup") ? vm["warmup"].as<int>() : (settings.quick ? kQuickWarmup : kWarmup);
  settings.repetitions =
      vm.count("repetitions") ? vm["repetitions"].as<int>() : (settings.quick ? kQuickRepetitions : kRepetitions);
  settings.seed = vm["seed"].as<uint64_t>();
  settings.timeout_s = vm["timeout"].as<double>();
  settings.threads = vm["threads"].as<int>();
  if (settings.repetitions < 1) throw UsageError("--repetitions must be at least 1");
  if (settings.warmup_steps < 0) throw UsageError("--warmup must not be negative");
  if (settings.threads < 0) throw UsageError("--threads must not be negative");
  if (!(settings.timeout_s > 0)) throw UsageError("--timeout must be positive");
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "json", "none"});
  const std::string device = CheckChoice("--device", vm["device"].as<std::string>(), {"auto", "cpu", "cuda"});

  DeviceBackend& backend = GetDeviceBackend();
  if (device == "cuda" && !backend.CudaAvailable())
    throw UsageError("--device cuda: no CUDA device is available on this machine");
  settings.device = device == "auto" ? (backend.CudaAvailable() ? "cuda" : "cpu") : device;

  Selection sel;
  if (vm.count("suite")) sel.suites = SplitCommas(vm["suite"].as<std::vector<std::string>>());
  if (vm.count("filter")) sel.filter = vm["filter"].as<std::string>();
  sel.quick = settings.quick;
  std::vector<VariantRef> variants;
  try {
    variants = SelectVariants(sel);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (variants.empty()) throw UsageError("no workload matches the selection (see `perfbench list`)");

  // Open the store before running anything, so a bad --db costs nothing.
  auto store = OpenStore(vm, Store::Mode::kCreate);
  backend.SetThreads(settings.threads);

  RunRecord run;
  run.label = vm.count("label") ? vm["label"].as<std::string>() : "";
  run.fingerprint = CaptureFingerprint(backend);
  run.profile_key = ProfileKey(run.fingerprint);
  run.settings = {{"warmup_steps", settings.warmup_steps}, {"repetitions", settings.repetitions},
                  {"timeout_s", settings.timeout_s},       {"seed", settings.seed},
                  {"quick", settings.quick},               {"device", settings.device},
                  {"threads", settings.threads},           {"suites", sel.suites},
                  {"filter", sel.filter}};
  {
    std::string cmdline = "perfbench run";
    for (const auto& a : args) cmdline += " " + a;
    run.command = cmdline;
  }
  const int64_t run_id = store->BeginRun(run);
  if (format == "table") std::cout << ContextLine(run.fingerprint, settings) << "\n" << std::flush;

  Runner runner(settings, backend);
  Progress progress(StderrIsTerminal());
  runner.set_progress([&](const ProgressEvent& e) { progress.Update(e); });
  std::vector<ResultRecord> all;
  size_t failed = 0;
  runner.RunAll(GroupVariants(variants), [&](const std::vector<VariantOutcome>& outcomes) {
    std::vector<ResultRecord> records;
    for (const auto& o : outcomes) {
      if (o.status == OutcomeStatus::kFailed) ++failed;
      auto r = ToResultRecords(o);
      records.insert(records.end(), r.begin(), r.end());
    }
    store->AppendResults(run_id, records);  // one transaction per group
    all.insert(all.end(), records.begin(), records.end());
  });
  progress.Done();
  store->FinishRun(run_id, "complete");

  if (format == "table") {
    PrintResultsTable(all, std::cout);
    std::cout << "\nrun " << run_id << (run.label.empty() ? "" : " (" + run.label + ")") << " stored in "
              << store->path();
    if (failed) std::cout << "; " << failed << " variant(s) failed";
    std::cout << "\n";
  } else if (format == "json") {
    std::cout << RunToJson(store->GetRun(run_id), store->GetResults(run_id)).dump(2) << "\n";
  }
  return failed ? kExitRuntime : kExitOk;
}

}  // namespace perfbench::cli
