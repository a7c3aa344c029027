// Read-only commands: list, env, runs, show.
#include <iostream>
#include <sstream>

#include "cli.h"
#include "peaks.h"
#include "common.h"
#include "fingerprint.h"
#include "perfbench/backend.h"
#include "registry.h"
#include "report/format.h"
#include "report/run_report.h"
#include "run_support.h"

namespace perfbench::cli {

int ListCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("suite", po::value<std::vector<std::string>>()->composing()->value_name("S[,S]"),
                     "only these suites (hidden self-test suites are listed when named)")
      ("filter", po::value<std::string>()->value_name("REGEX"),
       "only variants whose full name (suite/workload/k:v/...) matches, as run --filter")
      ("quick", po::bool_switch(), "list the --quick variants")
      ("device", po::value<std::string>()->default_value("auto")->value_name("D"),
       "judge skips for auto | cpu | cuda")
      ("model-file", po::value<std::vector<std::string>>()->composing()->value_name("PATH"),
       "the model suite's variants for this exported model (repeatable)");
  AddWideOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm,
             "usage: perfbench list [--suite S[,S]] [--filter REGEX] [--quick] [--device auto|cpu|cuda] [--wide]\n"
             "                      [--model-file PATH]...\n\n"
             "Lists every workload variant, and why a variant would be skipped here; --wide adds its metrics."))
    return kExitOk;
  const std::string device = CheckChoice("--device", vm["device"].as<std::string>(), {"auto", "cpu", "cuda"});
  DeviceBackend& backend = GetDeviceBackend();
  const std::string dev = device == "auto" ? (backend.CudaAvailable() ? "cuda" : "cpu") : device;
  RunSettings sel = RunSettings::Defaults(vm["quick"].as<bool>());
  if (vm.count("suite")) sel.suites = SplitCommas(vm["suite"].as<std::vector<std::string>>());
  if (vm.count("filter")) sel.filter = vm["filter"].as<std::string>();
  ResolveModelFiles(vm, &sel);
  std::vector<VariantRef> variants;
  try {
    variants = SelectVariants(sel);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool wide = vm["wide"].as<bool>();
  TextTable t(wide ? std::vector<std::string>{"variant", "here (" + dev + ")", "metrics"}
                   : std::vector<std::string>{"variant", "here (" + dev + ")"});
  for (const auto& v : variants) {
    std::string metrics;
    for (const auto& m : v.workload->info.metrics) metrics += (metrics.empty() ? "" : ",") + m.name;
    const std::string why = SkipReason(v, dev);
    std::vector<std::string> row{v.FullName(), why.empty() ? "runs" : "skipped: " + why};
    if (wide) row.push_back(metrics);
    t.AddRow(std::move(row));
  }
  t.Print(std::cout);
  return kExitOk;
}

int EnvCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("format", po::value<std::string>()->default_value("table")->value_name("F"), "table | json");
  AddWideOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm,
             "usage: perfbench env [--format table|json] [--wide]\n\n"
             "Prints the fingerprint stored with every run, and its hardware profile key."))
    return kExitOk;
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "json"});
  auto fp = CaptureFingerprint(GetDeviceBackend());
  fp["profile_key"] = ProfileKey(fp);
  if (format == "json") {
    std::cout << fp.dump(2) << "\n";
    return kExitOk;
  }
  TextTable t({"field", "value"});
  for (auto it = fp.begin(); it != fp.end(); ++it)
    t.AddRow({it.key(), OneLine(it.value().is_string() ? it.value().get<std::string>() : it.value().dump())});
  t.Print(std::cout);
  return kExitOk;
}

namespace {

void PrintRuns(const std::vector<RunRecord>& runs, const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& r : runs)
      arr.push_back({{"id", r.id}, {"uuid", r.uuid}, {"machine", r.machine}, {"label", r.label},
                     {"started_at", r.started_at}, {"status", ToString(r.status)}, {"profile_key", r.profile_key},
                     {"ok", r.ok_results}, {"failed", r.failed_results}, {"skipped", r.skipped_results}});
    std::cout << nlohmann::ordered_json{{"schema_version", 1}, {"runs", arr}}.dump(2) << "\n";
    return;
  }
  TextTable t({"id", "label", "started (UTC)", "status", "results ok/failed/skipped", "machine", "profile", "torch"});
  for (const auto& r : runs) {
    t.AddRow({std::to_string(r.id), r.label, r.started_at, std::string(ToString(r.status)),
              std::to_string(r.ok_results) + "/" + std::to_string(r.failed_results) + "/" +
                  std::to_string(r.skipped_results),
              r.machine, r.profile_key, r.fingerprint.value("torch_version", "-")});
  }
  t.Print(std::cout);
}

}  // namespace

int RunsCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("limit", po::value<int>()->default_value(20)->value_name("N"), "newest N runs (0: all)")
      ("label", po::value<std::string>()->value_name("L"), "only runs labelled L")
      ("machine", po::value<std::string>()->value_name("M"), "only runs measured on machine M (see --machines)")
      ("machines", po::bool_switch(), "list the machines that measured runs here, the most recent first")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "table | json");
  AddWideOption(desc);
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm,
             "usage: perfbench runs [--label L] [--machine M] [--limit N] [--format table|json] [--db PATH|URL]\n"
             "       perfbench runs --machines [--db PATH|URL]\n\n"
             "Lists recorded runs, newest first. With a fleet's store (--db postgresql://...), every\n"
             "machine's runs; --machine M only M's (its name: $PERFBENCH_MACHINE where it ran, else its\n"
             "hostname)."))
    return kExitOk;
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "json"});
  const int limit = vm["limit"].as<int>();
  if (limit < 0) throw UsageError("--limit must not be negative");
  auto store = OpenStore(vm, Store::Mode::kReadOnly);
  if (vm["machines"].as<bool>()) {
    for (const auto& m : store->Machines()) std::cout << m << "\n";
    return kExitOk;
  }
  const std::string machine = vm.count("machine") ? vm["machine"].as<std::string>() : "";
  std::vector<RunRecord> runs = store->ListRuns(vm.count("label") ? -1 : limit == 0 ? -1 : limit, machine);
  if (vm.count("label")) {
    std::erase_if(runs, [&](const RunRecord& r) { return r.label != vm["label"].as<std::string>(); });
    if (limit > 0 && std::ssize(runs) > limit) runs.resize(static_cast<size_t>(limit));
  }
  if (!machine.empty() && runs.empty()) throw UsageError("no runs of machine '" + machine + "' in " + store->path());
  PrintRuns(runs, format);
  return kExitOk;
}

int ShowCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("run", po::value<std::string>()->value_name("RUN"), "run id, label (newest run) or latest")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "table | json");
  AddWideOption(desc);
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {"run"}, vm,
             "usage: perfbench show RUN [--db PATH] [--format table|json]\n\n"
             "Shows one run. RUN is an id, a label (its newest run) or `latest`. The JSON is a\n"
             "versioned contract (schema_version 2) that `perfbench import` reads back."))
    return kExitOk;
  if (!vm.count("run")) throw UsageError("missing RUN (an id, a label or latest)");
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "json"});
  auto store = OpenStore(vm, Store::Mode::kReadOnly);
  const int64_t id = ResolveRunOrThrow(*store, vm["run"].as<std::string>());
  const auto run = store->GetRun(id);
  const auto results = store->GetResults(id);
  if (format == "json") {
    std::cout << RunToJson(run, results).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "run " << run.id << (run.label.empty() ? "" : " (" + run.label + ")") << "  " << run.started_at
            << "  " << ToString(run.status) << "  profile " << run.profile_key << "\n"
            << run.fingerprint.value("cpu_model", "?") << "  torch " << run.fingerprint.value("torch_version", "-")
            << "  " << run.command << "\n\n";
  PrintResultsTable(results, std::cout);
  std::ostringstream peaks;
  if (PrintAchievable(*store, run, peaks)) std::cout << "\n" << peaks.str();
  return kExitOk;
}

}  // namespace perfbench::cli
