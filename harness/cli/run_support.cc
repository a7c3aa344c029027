#include "run_support.h"

#include <cstdio>
#include <sstream>

#include "fingerprint.h"
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

std::vector<ResultRecord> ExecuteGroups(Store& store, int64_t run_id, const RunSettings& settings,
                                        DeviceBackend& backend, const std::vector<VariantGroup>& groups,
                                        size_t* failed) {
  Runner runner(settings, backend);
  Progress progress(StderrIsTerminal());
  runner.set_progress([&](const ProgressEvent& e) { progress.Update(e); });
  std::vector<ResultRecord> all;
  runner.RunAll(groups, [&](const std::vector<VariantOutcome>& outcomes) {
    std::vector<ResultRecord> records;
    for (const auto& o : outcomes) {
      if (o.status == OutcomeStatus::kFailed) ++*failed;
      auto r = ToResultRecords(o);
      records.insert(records.end(), r.begin(), r.end());
    }
    store.AppendResults(run_id, records);  // one transaction per group
    all.insert(all.end(), records.begin(), records.end());
  });
  progress.Done();
  return all;
}

}  // namespace perfbench::cli
