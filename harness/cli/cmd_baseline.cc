// perfbench baseline set|list|show|export|import|delete: named baselines.
#include <algorithm>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "common.h"
#include "report/format.h"
#include "report/run_report.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench baseline set NAME RUN [RUN...]  point NAME at stored runs (ids, labels or latest)\n"
    "       perfbench baseline add NAME RUN       add a run to NAME\n"
    "       perfbench baseline list               names, runs and when they were set\n"
    "       perfbench baseline show NAME [--format table|json]\n"
    "       perfbench baseline export NAME FILE   versioned JSON with fingerprint and raw samples\n"
    "       perfbench baseline import FILE [--name NAME]\n"
    "       perfbench baseline delete NAME        forget the name (the run stays)\n"
    "       perfbench baseline accept RUN         let a run a gate rejected into its label's rolling\n"
    "                                             baseline (--baseline label:NAME)\n"
    "       all take [--db PATH]\n\n"
    "A baseline is a name for one or more stored runs, meant for `perfbench compare NAME B`\n"
    "and `perfbench gate --baseline NAME`. Its runs are pooled: each run's processes are\n"
    "independent samples of the build's speed, so a baseline of several runs (e.g. 5) gives\n"
    "the gate process-to-process variation to judge by. A label names all its runs. Export\n"
    "files keep every run and every sample's process index and are meant to be committed\n"
    "under baselines/; export then import gives the same file back, byte for byte.";

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

// A run a baseline may name: finished, with results.
void CheckUsable(const RunRecord& run) {
  if (run.status != RunStatus::kComplete && run.status != RunStatus::kImported)
    throw UsageError("run " + std::to_string(run.id) + " is " + std::string(ToString(run.status)) +
                     "; a baseline must be a finished run");
  if (run.ok_results == 0) throw UsageError("run " + std::to_string(run.id) + " has no successful results");
}

// Runs pooled in one baseline must be comparable: same hardware profile and
// the same quick, threads and device settings.
void CheckPoolable(const RunRecord& first, const RunRecord& run) {
  if (run.profile_key != first.profile_key)
    throw IncomparableError("runs " + std::to_string(first.id) + " and " + std::to_string(run.id) +
                            " are on different hardware; a baseline pools runs of one machine");
  for (const char* k : {"quick", "threads", "device"})
    if (run.settings.value(k, nlohmann::json()) != first.settings.value(k, nlohmann::json()))
      throw IncomparableError("runs " + std::to_string(first.id) + " and " + std::to_string(run.id) + " differ in " +
                              k + "; a baseline pools runs measured the same way");
}

// Runs by id, label (all its runs) or `latest`.
std::vector<int64_t> UsableRuns(Store& store, const std::string& ref) {
  std::vector<int64_t> ids = store.RunsWithLabel(ref);
  if (ids.empty()) ids = {ResolveRunOrThrow(store, ref)};
  for (int64_t id : ids) CheckUsable(store.GetRun(id));
  return ids;
}

void CheckAllPoolable(Store& store, const std::vector<int64_t>& ids) {
  const RunRecord first = store.GetRun(ids.front());
  for (int64_t id : ids) CheckPoolable(first, store.GetRun(id));
}

std::string IdList(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

int Set(const Args& a) {
  const std::string name = a.Get("arg1", "NAME");
  CheckName(name);
  std::vector<std::string> refs = a.vm.count("more") ? a.vm["more"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (refs.empty()) throw UsageError("baseline set: missing RUN");
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  std::vector<int64_t> ids;
  for (const auto& ref : refs)
    for (int64_t id : UsableRuns(*store, ref))
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  CheckAllPoolable(*store, ids);
  const auto before = store->SetBaseline(name, ids);
  std::cout << "baseline " << name << " -> run" << (ids.size() > 1 ? "s " : " ") << IdList(ids);
  if (!before.empty() && before != ids) std::cout << " (was " << IdList(before) << ")";
  std::cout << "\n";
  return kExitOk;
}

int Add(const Args& a) {
  const std::string name = a.Get("arg1", "NAME");
  std::vector<std::string> refs = a.vm.count("more") ? a.vm["more"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (refs.size() != 1) throw UsageError("baseline add: expected NAME RUN");
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  const BaselineRecord b = GetOrThrow(*store, name);
  const int64_t id = ResolveRunOrThrow(*store, refs.front());
  const RunRecord run = store->GetRun(id);
  CheckUsable(run);
  CheckPoolable(store->GetRun(b.run_ids.front()), run);
  const bool added = store->AddBaselineRun(name, id);
  std::cout << "baseline " << name << (added ? ": added run " : ": already has run ") << id << " (runs "
            << IdList(GetOrThrow(*store, name).run_ids) << ")\n";
  return kExitOk;
}

// A run its gate rejected (regression, inconclusive) joins its label's
// rolling baseline again: the change was intended.
int Accept(const Args& a) {
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  const int64_t id = ResolveRunOrThrow(*store, a.Get("arg1", "RUN"));
  const RunRecord run = store->GetRun(id);
  CheckUsable(run);
  const auto before = store->GetRunVerdict(id);
  store->SetRunVerdict(id, "accepted");
  std::cout << "run " << id << (run.label.empty() ? "" : " (" + run.label + ")") << " accepted"
            << (before ? " (its gate said " + *before + ")" : "") << ": rolling baselines"
            << (run.label.empty() ? " of its label" : " of label:" + run.label) << " include it\n";
  return kExitOk;
}

int List(const Args& a) {
  auto store = OpenStore(a.vm, Store::Mode::kReadOnly);
  TextTable t({"name", "runs", "label", "set at (UTC)", "newest run started", "results", "profile"});
  for (const auto& b : store->ListBaselines()) {
    const RunRecord r = store->GetRun(b.run_ids.back());
    t.AddRow({b.name, IdList(b.run_ids), r.label, b.created_at, r.started_at, std::to_string(r.ok_results),
              r.profile_key});
  }
  t.Print(std::cout);
  return kExitOk;
}

int Show(const Args& a) {
  const std::string format = CheckChoice("--format", a.vm["format"].as<std::string>(), {"table", "json"});
  auto store = OpenStore(a.vm, Store::Mode::kReadOnly);
  const BaselineRecord b = GetOrThrow(*store, a.Get("arg1", "NAME"));
  const auto runs = BaselineRuns(*store, b);
  if (format == "json") {
    std::cout << BaselineToJson(b, runs).dump(2) << "\n";
    return kExitOk;
  }
  for (const auto& [run, results, verdict] : runs) {
    std::cout << "baseline " << b.name << ": run " << run.id << (run.label.empty() ? "" : " (" + run.label + ")")
              << ", set " << b.created_at << "\n"
              << run.fingerprint.value("cpu_model", "?") << "  torch " << run.fingerprint.value("torch_version", "-")
              << "  " << run.command << "\n\n";
    PrintResultsTable(results, std::cout);
    std::cout << "\n";
  }
  return kExitOk;
}

int Export(const Args& a) {
  const std::string name = a.Get("arg1", "NAME");
  std::vector<std::string> rest = a.vm.count("more") ? a.vm["more"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (rest.size() != 1) throw UsageError("baseline export: expected NAME FILE");
  const std::string file = rest.front();
  auto store = OpenStore(a.vm, Store::Mode::kReadOnly);
  const BaselineRecord b = GetOrThrow(*store, name);
  const std::string text = BaselineToJson(b, BaselineRuns(*store, b)).dump(2) + "\n";
  WriteAtomically(file, text, "FILE");
  std::cout << "exported baseline " << name << " (runs " << IdList(b.run_ids) << ") to " << file << "\n";
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
  KeepIdentitiesHonest(*store, doc.runs);
  const auto ids = store->InsertBaselineRuns(name, doc.baseline_created_at, doc.runs);
  std::cout << "imported baseline " << name << " as run" << (ids.size() > 1 ? "s " : " ") << IdList(ids) << " ("
            << doc.ResultCount() << " results)";
  if (before) std::cout << "; it named run(s) " << IdList(before->run_ids) << " before";
  std::cout << "\n";
  return kExitOk;
}

int Delete(const Args& a) {
  const std::string name = a.Get("arg1", "NAME");
  auto store = OpenStore(a.vm, Store::Mode::kExisting);
  if (!store->DeleteBaseline(name)) throw UsageError("no baseline '" + name + "' in " + store->path());
  std::cout << "deleted baseline " << name << " (its runs stay)\n";
  return kExitOk;
}

}  // namespace

int BaselineCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("action", po::value<std::string>(), "")("arg1", po::value<std::string>(), "")
      ("more", po::value<std::vector<std::string>>(), "")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "show: table | json")
      ("name", po::value<std::string>()->value_name("NAME"), "import: name to give (default: the file's)");
  AddWideOption(desc);
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {"action", "arg1", "...more"}, vm, kUsage)) return kExitOk;
  if (!vm.count("action")) throw UsageError("missing action: set, add, list, show, export, import, delete or accept");
  static const std::map<std::string, int (*)(const Args&)> actions = {
      {"set", Set},       {"add", Add},       {"list", List},     {"show", Show},
      {"export", Export}, {"import", Import}, {"delete", Delete}, {"accept", Accept}};
  const std::string action = CheckChoice("action", vm["action"].as<std::string>(),
                                         {"set", "add", "list", "show", "export", "import", "delete", "accept"});
  const bool takes_more = action == "set" || action == "add" || action == "export";
  if ((!takes_more && vm.count("more")) || (action == "list" && vm.count("arg1")))
    throw UsageError("baseline " + action + ": too many arguments");
  return actions.at(action)(Args{vm, action});
}

}  // namespace perfbench::cli
