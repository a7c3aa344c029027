// perfbench procure: the same suites on several machines, ranked by
// throughput with intervals, per dollar-hour and per watt (see
// harness/src/procure.h).
#include <algorithm>
#include <iostream>
#include <map>

#include "cli.h"
#include "common.h"
#include "procure.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench procure RUN RUN... [--price RUN=USD_PER_HOUR]... [--power RUN=WATTS]...\n"
    "                         [--format table|markdown|json] [--db PATH|URL]\n"
    "       perfbench procure --label L [--db postgresql://...] [...]\n\n"
    "Ranks machines on the same workloads: RUN is a label (its runs pooled: each run one more\n"
    "process), a run id, a baseline name, machine:NAME (every run of that machine) or a JSON\n"
    "file, one per machine (import runs from other machines with `perfbench import`, or push\n"
    "them to a fleet's store). --label L without RUNs: one machine per machine name among the\n"
    "runs labelled L (a fleet's store, `perfbench push`), that machine's runs pooled.\n"
    "Per workload, each machine's throughput with its 95%\n"
    "interval (Student's t on process medians with several processes; the median's order-\n"
    "statistics interval within one process), relative to the first RUN; samples per dollar\n"
    "from --price (USD per hour of the machine); samples per joule from the energy the run\n"
    "measured (energy_per_sample), else from --power. Machines are ranked best first; one whose\n"
    "interval overlaps that of the machine just above it shares its rank (tied).\n"
    "Exit 0, 2 on bad input.";

// --price/--power RUN=NUMBER flags, by RUN; UsageError for a RUN not given
// or a value that is not a positive number.
std::map<std::string, double> PerRun(const po::variables_map& vm, const char* flag,
                                     const std::vector<std::string>& refs) {
  std::map<std::string, double> out;
  if (!vm.count(flag)) return out;
  for (const auto& kv : vm[flag].as<std::vector<std::string>>()) {
    const auto eq = kv.rfind('=');
    if (eq == std::string::npos || eq == 0) throw UsageError(std::string("--") + flag + " '" + kv + "': expected RUN=NUMBER");
    const std::string ref = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (std::find(refs.begin(), refs.end(), ref) == refs.end())
      throw UsageError(std::string("--") + flag + " '" + kv + "': " + ref + " is not one of the RUNs given");
    char* end = nullptr;
    const double x = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != 0 || !(x > 0))
      throw UsageError(std::string("--") + flag + " '" + kv + "': '" + value + "' is not a positive number");
    out[ref] = x;
  }
  return out;
}

// The runs labelled `label`, by the machine that measured them (a fleet).
std::map<std::string, RunData> MachinesOfLabel(Store& store, const std::string& label) {
  std::map<std::string, std::vector<int64_t>> ids;
  for (const int64_t id : store.RunsWithLabel(label)) ids[store.GetRun(id).machine].push_back(id);
  if (ids.empty()) throw UsageError("no run labelled '" + label + "' in " + store.path());
  std::map<std::string, RunData> out;
  for (const auto& [machine, runs] : ids) out.emplace(machine, LoadRuns(store, runs, machine, "machine"));
  return out;
}

}  // namespace

int ProcureCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("runs", po::value<std::vector<std::string>>()->value_name("RUN"), "runs, one per machine")
      ("price", po::value<std::vector<std::string>>()->composing()->value_name("RUN=USD_PER_HOUR"), "USD per hour of RUN's machine")
      ("power", po::value<std::vector<std::string>>()->composing()->value_name("RUN=WATTS"),
       "watts of RUN's machine (when the run measured no energy)")
      ("label", po::value<std::string>()->value_name("L"), "no RUNs: every machine's runs labelled L, a machine each")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "table | markdown | json");
  AddWideOption(desc);
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {"...runs"}, vm, kUsage)) return kExitOk;
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json"});
  auto refs = vm.count("runs") ? vm["runs"].as<std::vector<std::string>>() : std::vector<std::string>{};
  std::unique_ptr<Store> store;
  std::map<std::string, RunData> by_machine;
  if (vm.count("label")) {
    if (!refs.empty()) throw UsageError("give RUNs or --label L, not both");
    store = OpenStore(vm, Store::Mode::kReadOnly);
    by_machine = MachinesOfLabel(*store, vm["label"].as<std::string>());
    for (const auto& [name, data] : by_machine) refs.push_back(name);
  }
  if (refs.size() < 2) throw UsageError("needs at least two machines: procure RUN RUN... (or --label L over a fleet)");
  const auto prices = PerRun(vm, "price", refs), powers = PerRun(vm, "power", refs);
  if (!store && std::any_of(refs.begin(), refs.end(), [](const std::string& r) { return !LooksLikeFile(r); }))
    store = OpenStore(vm, Store::Mode::kReadOnly);
  std::vector<Machine> machines;
  for (const auto& ref : refs) {
    Machine m{ref, by_machine.count(ref) ? by_machine.at(ref) : LoadRunData(store.get(), ref, "machine"), 0, 0};
    if (auto p = prices.find(ref); p != prices.end()) m.usd_per_hour = p->second;
    if (auto w = powers.find(ref); w != powers.end()) m.watts = w->second;
    machines.push_back(std::move(m));
  }
  const auto rows = Procure(machines);
  if (rows.empty()) throw UsageError("no throughput metric in the runs given (nothing to rank)");
  if (format == "json")
    std::cout << ProcureJson(machines, rows).dump(2) << "\n";
  else
    std::cout << ProcureText(machines, rows, format == "markdown");
  return kExitOk;
}

}  // namespace perfbench::cli
