// perfbench baseline set|list|show|export|import|delete: named baselines.
#include <iostream>

#include "cli.h"
#include "common.h"
#include "report/format.h"
#include "report/run_report.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench baseline set NAME RUN       point NAME at a stored run (id, label or latest)\n"
    "       perfbench baseline list               names, runs and when they were set\n"
    "       perfbench baseline show NAME [--format table|json]\n"
    "       perfbench baseline export NAME FILE   versioned JSON with fingerprint and raw samples\n"
    "       perfbench baseline import FILE [--name NAME]\n"
    "       perfbench baseline delete NAME        forget the name (the run stays)\n"
    "       all take [--db PATH]\n\n"
    "A baseline is a name for a stored run, meant for `perfbench compare NAME B` and\n"
    "`perfbench gate --baseline NAME`. Export files are meant to be committed under\n"
    "baselines/; export then import gives the same file back, byte for byte.";

void CheckName(const std::string& name) {
  if (name.empty() || name == "latest" || name.find_first_not_of("0123456789") == std::string::npos ||
      LooksLikeFile(name) || name.find_first_of(" \t\n") != std::string::npos)
    throw UsageError("bad baseline name '" + name +
                     "': use letters, digits, '-', '_' or '.', not only digits, not `latest`, no '/' or .json");
}

BaselineRecord GetOrThrow(Store& store, const std::string& name) {
  auto b = store.GetBaseline(name);
  if (!b) throw UsageError("no baseline '" + name + "' in " + store.path() + " (see `perfbench baseline list`)");
  return *b;
}

}  // namespace

int BaselineCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("action", po::value<std::string>(), "")("arg1", po::value<std::string>(), "")
      ("arg2", po::value<std::string>(), "")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "show: table | json")
      ("name", po::value<std::string>()->value_name("NAME"), "import: name to give (default: the file's)");
  AddDbOption(desc);
  po::positional_options_description pos;
  pos.add("action", 1).add("arg1", 1).add("arg2", 1);
  po::variables_map vm;
  if (!Parse(args, desc, pos, vm, kUsage)) return kExitOk;
  if (!vm.count("action")) throw UsageError("missing action: set, list, show, export, import or delete");
  const std::string action =
      CheckChoice("action", vm["action"].as<std::string>(), {"set", "list", "show", "export", "import", "delete"});
  auto arg = [&](const char* key, const char* what) {
    if (!vm.count(key)) throw UsageError("baseline " + action + ": missing " + what);
    return vm[key].as<std::string>();
  };
  const size_t want = action == "list" ? 0 : (action == "set" || action == "export") ? 2 : 1;
  if ((want < 2 && vm.count("arg2")) || (want < 1 && vm.count("arg1")))
    throw UsageError("baseline " + action + ": too many arguments");

  if (action == "set") {
    const std::string name = arg("arg1", "NAME"), ref = arg("arg2", "RUN");
    CheckName(name);
    auto store = OpenStore(vm, Store::Mode::kExisting);
    const int64_t id = ResolveRunOrThrow(*store, ref);
    const RunRecord run = store->GetRun(id);
    if (run.status != "complete" && run.status != "imported")
      throw UsageError("run " + std::to_string(id) + " is " + run.status + "; a baseline must be a finished run");
    if (run.ok_results == 0) throw UsageError("run " + std::to_string(id) + " has no successful results");
    const int64_t before = store->SetBaseline(name, id);
    std::cout << "baseline " << name << " -> run " << id;
    if (before && before != id) std::cout << " (was run " << before << ")";
    std::cout << "\n";
    return kExitOk;
  }
  if (action == "list") {
    auto store = OpenStore(vm, Store::Mode::kExisting);
    TextTable t({"name", "run", "label", "set at (UTC)", "run started", "results", "profile"});
    for (const auto& b : store->ListBaselines()) {
      const RunRecord r = store->GetRun(b.run_id);
      t.AddRow({b.name, std::to_string(b.run_id), r.label, b.created_at, r.started_at,
                std::to_string(r.ok_results), r.profile_key});
    }
    t.Print(std::cout);
    return kExitOk;
  }
  if (action == "show") {
    const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "json"});
    auto store = OpenStore(vm, Store::Mode::kExisting);
    const BaselineRecord b = GetOrThrow(*store, arg("arg1", "NAME"));
    const RunRecord run = store->GetRun(b.run_id);
    const auto results = store->GetResults(b.run_id);
    if (format == "json") {
      std::cout << BaselineToJson(b, run, results).dump(2) << "\n";
      return kExitOk;
    }
    std::cout << "baseline " << b.name << " -> run " << run.id << (run.label.empty() ? "" : " (" + run.label + ")")
              << ", set " << b.created_at << "\n"
              << run.fingerprint.value("cpu_model", "?") << "  torch " << run.fingerprint.value("torch_version", "-")
              << "  " << run.command << "\n\n";
    PrintResultsTable(results, std::cout);
    return kExitOk;
  }
  if (action == "export") {
    const std::string name = arg("arg1", "NAME"), file = arg("arg2", "FILE");
    auto store = OpenStore(vm, Store::Mode::kExisting);
    const BaselineRecord b = GetOrThrow(*store, name);
    const std::string text =
        BaselineToJson(b, store->GetRun(b.run_id), store->GetResults(b.run_id)).dump(2) + "\n";
    WriteAtomically(file, text, "FILE");
    std::cout << "exported baseline " << name << " (run " << b.run_id << ") to " << file << "\n";
    return kExitOk;
  }
  if (action == "import") {
    const std::string file = arg("arg1", "FILE");
    RunDocument doc = ParseRunDocument(ReadJsonFile(file), file);
    if (doc.kind != "baseline")
      throw UsageError("'" + file + "' is a " + doc.kind +
                       " document, not a baseline export (use `perfbench import`, then `baseline set`)");
    const std::string name = vm.count("name") ? vm["name"].as<std::string>() : doc.baseline_name;
    CheckName(name);
    auto store = OpenStore(vm, Store::Mode::kCreate);
    const auto before = store->GetBaseline(name);
    const int64_t id = store->InsertBaselineRun(name, doc.baseline_created_at, doc.run, doc.results);
    std::cout << "imported baseline " << name << " as run " << id << " (" << doc.results.size() << " results)";
    if (before) std::cout << "; it pointed at run " << before->run_id << " before";
    std::cout << "\n";
    return kExitOk;
  }
  // delete
  const std::string name = arg("arg1", "NAME");
  auto store = OpenStore(vm, Store::Mode::kExisting);
  if (!store->DeleteBaseline(name)) throw UsageError("no baseline '" + name + "' in " + store->path());
  std::cout << "deleted baseline " << name << " (its run stays)\n";
  return kExitOk;
}

}  // namespace perfbench::cli
