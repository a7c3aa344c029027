// perfbench diagnose: which bottleneck holds each variant back, with its
// evidence and remedies (see harness/src/diagnose.h).
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include <algorithm>

#include "cli.h"
#include "common.h"
#include "diagnose.h"
#include "peaks.h"

namespace perfbench::cli {

int RunCmd(const std::vector<std::string>& args);

namespace {

constexpr const char* kUsage =
    "usage: perfbench diagnose [RUN] [--format table|markdown|json] [--db PATH] [run options]\n\n"
    "Diagnose before optimising: gives every variant of a run a verdict among memory,\n"
    "communication, input, compute and balanced, each finding with its evidence, the threshold\n"
    "it crossed and remedies by expected gain. RUN is an id, a label or `latest` (default: the\n"
    "newest run that is not a profile or a peak).\n"
    "With run options (--suite amp,ddp --quick ...), runs them first and diagnoses that run.\n"
    "Thresholds: peak memory above 90% of the device, comm_share above 30%, data_wait_share\n"
    "above 10%, a reduced precision below 0.8x fp32. With a `perfbench profile` of the same machine\n"
    "the breakdown adds the share of GEMM/convolution, ops per step and achieved FLOP/s against the\n"
    "achievable peak (`perfbench peak`). The JSON is versioned (schema_version 1).";

// The traces of the newest profile run of the same machine, by variant
// ("amp/mlp/precision:fp32/size:quick" -> path).
std::map<std::string, std::string> Traces(Store& store, const RunRecord& run) {
  for (int64_t id : store.RunsWithLabel("profile")) {
    if (store.GetRun(id).profile_key != run.profile_key) continue;
    std::map<std::string, std::string> out;
    for (const auto& r : store.GetResults(id))
      if (auto t = r.attributes.find("trace"); t != r.attributes.end())
        out[r.suite + "/" + r.workload + "/" + r.params.Encode()] = t->second;
    return out;
  }
  return {};
}

// A trace's breakdown, or nothing (with a warning) when it cannot be read.
std::optional<TraceBreakdown> ReadTrace(const std::string& path) {
  std::ifstream in(path);
  try {
    if (in) return BreakdownOfTrace(nlohmann::json::parse(in));
  } catch (const std::exception& e) {
    std::cerr << "warning: " << path << ": " << e.what() << "\n";
    return std::nullopt;
  }
  std::cerr << "warning: " << path << ": cannot be read (moved or deleted?)\n";
  return std::nullopt;
}

// The newest run that measured something: not a profile or a peak.
int64_t LatestMeasured(Store& store) {
  for (const auto& r : store.ListRuns())
    if (r.label != "profile" && r.label != kPeakLabel) return r.id;
  throw UsageError("no measured run in " + store.path() + " (run `perfbench run` or pass run options)");
}

std::vector<Diagnosis> DiagnoseRun(Store& store, int64_t id) {
  const RunRecord run = store.GetRun(id);
  const MachineFacts machine = MachineFacts::FromRun(run);
  const auto traces = Traces(store, run);
  const auto peaks = AchievableFlops(store, run);
  std::vector<Diagnosis> ds;
  for (auto& e : CollectEvidence(store.GetResults(id))) {
    if (AroundRun(e.suite)) continue;
    if (auto t = traces.find(e.suite + "/" + e.workload + "/" + e.params.Encode()); t != traces.end())
      e.trace = ReadTrace(t->second);
    if (auto p = peaks.find(e.params.Get("precision", "fp32")); p != peaks.end()) e.achievable_flops = p->second;
    ds.push_back(Classify(e, machine));
  }
  return ds;
}

}  // namespace

int DiagnoseCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("format", po::value<std::string>()->default_value("table")->value_name("F"),
                     "table | markdown | json");
  AddWideOption(desc);
  AddDbOption(desc);
  po::variables_map vm;
  std::vector<std::string> rest;
  if (!ParsePassThrough(args, desc, vm, &rest, kUsage)) return kExitOk;
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json"});
  std::string ref = "latest";
  const auto positional = std::find_if(rest.begin(), rest.end(), [](const std::string& a) { return a.rfind("-", 0) != 0; });
  if (positional == rest.begin() && rest.size() > 1)  // RUN and run options: which did the user mean?
    throw UsageError("diagnose RUN reads a stored run and takes no run options (" + rest[1] +
                     "); without RUN, run options (--suite, --filter, --quick...) measure first, then diagnose");
  if (rest.size() == 1 && rest[0].rfind("--", 0) != 0) {
    ref = rest[0];
  } else if (!rest.empty()) {
    std::vector<std::string> run = rest;
    run.insert(run.end(), {"--format", "none"});
    if (vm.count("db")) run.insert(run.end(), {"--db", vm["db"].as<std::string>()});
    const int code = RunCmd(run);
    if (code != kExitOk && code != kExitRuntime) return code;  // a failed variant is evidence too
  }
  auto store = OpenStore(vm, Store::Mode::kReadOnly);
  const auto ds = DiagnoseRun(*store, ref == "latest" ? LatestMeasured(*store) : ResolveRunOrThrow(*store, ref));
  if (format == "json") {
    std::cout << DiagnosisJson(ds).dump(2) << "\n";
  } else {
    std::cout << DiagnosisText(ds, format == "markdown");
  }
  return kExitOk;
}

}  // namespace perfbench::cli
