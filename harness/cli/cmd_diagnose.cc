// perfbench diagnose: which bottleneck holds each variant back, with its
// evidence and remedies (see harness/src/diagnose.h).
#include <iostream>

#include "cli.h"
#include "common.h"
#include "diagnose.h"

namespace perfbench::cli {

int RunCmd(const std::vector<std::string>& args);

namespace {

constexpr const char* kUsage =
    "usage: perfbench diagnose [RUN] [--format table|markdown|json] [--db PATH] [run options]\n\n"
    "Diagnose before optimising: gives every variant of a run a verdict among memory,\n"
    "communication, input, compute and balanced, each finding with its evidence, the threshold\n"
    "it crossed and remedies by expected gain. RUN is an id, a label or `latest` (default).\n"
    "With run options (--suite amp,ddp --quick ...), runs them first and diagnoses that run.\n"
    "Thresholds: peak memory above 90% of the device, comm_share above 30%, data_wait_share\n"
    "above 10%, a reduced precision below 0.8x fp32. The JSON is versioned (schema_version 1).";

}  // namespace

int DiagnoseCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("format", po::value<std::string>()->default_value("table")->value_name("F"),
                     "table | markdown | json");
  AddDbOption(desc);
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::cout << kUsage << "\n\n" << desc << "\n";
      return kExitOk;
    }
  po::variables_map vm;
  std::vector<std::string> rest;
  try {
    const auto parsed = po::command_line_parser(args).options(desc).allow_unregistered().run();
    po::store(parsed, vm);
    po::notify(vm);
    rest = po::collect_unrecognized(parsed.options, po::include_positional);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json"});
  std::string ref = "latest";
  if (rest.size() == 1 && rest[0].rfind("--", 0) != 0) {
    ref = rest[0];
  } else if (!rest.empty()) {
    std::vector<std::string> run = rest;
    run.insert(run.end(), {"--format", "none"});
    if (vm.count("db")) run.insert(run.end(), {"--db", vm["db"].as<std::string>()});
    const int code = RunCmd(run);
    if (code != kExitOk && code != kExitRuntime) return code;  // a failed variant is evidence too
  }
  auto store = OpenStore(vm, Store::Mode::kExisting);
  const int64_t id = ResolveRunOrThrow(*store, ref);
  const MachineFacts machine = MachineFacts::FromRun(store->GetRun(id));
  std::vector<Diagnosis> ds;
  for (const auto& e : CollectEvidence(store->GetResults(id)))
    if (e.suite != "control") ds.push_back(Classify(e, machine));
  if (format == "json") {
    std::cout << DiagnosisJson(ds).dump(2) << "\n";
  } else {
    std::cout << DiagnosisText(ds, format == "markdown");
  }
  return kExitOk;
}

}  // namespace perfbench::cli
