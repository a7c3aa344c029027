// perfbench baseline set|list|show|export|import|delete: named baselines.
#include <iostream>
#include <map>

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

namespace {

// The positional arguments of one action.
struct Args {
  const po::variables_map& vm;
  std::string action;
  std::string Get(const char* key, const char* what) const {
    if (!vm.count(key)) throw UsageError("baseline " + action + ": missing " + what);
    return vm[key].as<std::string>();
  }
};

int Set(const Args& a) {
  const std::string name = a.Get("arg1", "NAME"), ref = a.Get("arg2", "RUN");
  CheckName(name);
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  const int64_t id = ResolveRunOrThrow(*store, ref);
  const RunRecord run = store->GetRun(id);
  if (run.status != RunStatus::kComplete && run.status != RunStatus::kImported)
    throw UsageError("run " + std::to_string(id) + " is " + std::string(ToString(run.status)) +
                     "; a baseline must be a finished run");
  if (run.ok_results == 0) throw UsageError("run " + std::to_string(id) + " has no successful results");
  const int64_t before = store->SetBaseline(name, id);
  std::cout << "baseline " << name << " -> run " << id;
  if (before && before != id) std::cout << " (was run " << before << ")";
  std::cout << "\n";
  return kExitOk;
}

int List(const Args& a) {
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  TextTable t({"name", "run", "label", "set at (UTC)", "run started", "results", "profile"});
  for (const auto& b : store->ListBaselines()) {
    const RunRecord r = store->GetRun(b.run_id);
    t.AddRow({b.name, std::to_string(b.run_id), r.label, b.created_at, r.started_at, std::to_string(r.ok_results),
              r.profile_key});
  }
  t.Print(std::cout);
  return kExitOk;
}

int Show(const Args& a) {
  const std::string format = CheckChoice("--format", a.vm["format"].as<std::string>(), {"table", "json"});
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  const BaselineRecord b = GetOrThrow(*store, a.Get("arg1", "NAME"));
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

int Export(const Args& a) {
  const std::string name = a.Get("arg1", "NAME"), file = a.Get("arg2", "FILE");
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  const BaselineRecord b = GetOrThrow(*store, name);
  const std::string text = BaselineToJson(b, store->GetRun(b.run_id), store->GetResults(b.run_id)).dump(2) + "\n";
  WriteAtomically(file, text, "FILE");
  std::cout << "exported baseline " << name << " (run " << b.run_id << ") to " << file << "\n";
  return kExitOk;
}

int Import(const Args& a) {
  const std::string file = a.Get("arg1", "FILE");
  RunDocument doc = ParseRunDocument(ReadJsonFile(file), file);
  if (doc.kind != "baseline")
    throw UsageError("'" + file + "' is a " + doc.kind +
                     " document, not a baseline export (use `perfbench import`, then `baseline set`)");
  const std::string name = a.vm.count("name") ? a.vm["name"].as<std::string>() : doc.baseline_name;
  CheckName(name);
  auto store = OpenStore(a.vm, Store::Mode::kCreate);
  const auto before = store->GetBaseline(name);
  const int64_t id = store->InsertBaselineRun(name, doc.baseline_created_at, doc.run, doc.results);
  std::cout << "imported baseline " << name << " as run " << id << " (" << doc.results.size() << " results)";
  if (before) std::cout << "; it pointed at run " << before->run_id << " before";
  std::cout << "\n";
  return kExitOk;
}

int Delete(const Args& a) {
  const std::string name = a.Get("arg1", "NAME");
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  if (!store->DeleteBaseline(name)) throw UsageError("no baseline '" + name + "' in " + store->path());
  std::cout << "deleted baseline " << name << " (its run stays)\n";
  return kExitOk;
}

}  // namespace

int BaselineCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("action", po::value<std::string>(), "")("arg1", po::value<std::string>(), "")
      ("arg2", po::value<std::string>(), "")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "show: table | json")
      ("name", po::value<std::string>()->value_name("NAME"), "import: name to give (default: the file's)");
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {"action", "arg1", "arg2"}, vm, kUsage)) return kExitOk;
  if (!vm.count("action")) throw UsageError("missing action: set, list, show, export, import or delete");
  static const std::map<std::string, int (*)(const Args&)> actions = {
      {"set", Set}, {"list", List}, {"show", Show}, {"export", Export}, {"import", Import}, {"delete", Delete}};
  const std::string action =
      CheckChoice("action", vm["action"].as<std::string>(), {"set", "list", "show", "export", "import", "delete"});
  const size_t want = action == "list" ? 0 : (action == "set" || action == "export") ? 2 : 1;
  if ((want < 2 && vm.count("arg2")) || (want < 1 && vm.count("arg1")))
    throw UsageError("baseline " + action + ": too many arguments");
  return actions.at(action)(Args{vm, action});
}

}  // namespace perfbench::cli
