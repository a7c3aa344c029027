// perfbench report: one self-contained HTML file with the headline plots,
// trends with change points, a comparison and the procurement view (see
// harness/src/report/html_report.h).
#include <algorithm>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cli.h"
#include "common.h"
#include "report/html_report.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench report [RUN...] [--label L] [--compare A B] [--title T] --output FILE.html [--db PATH]\n\n"
    "Writes one self-contained HTML file (scripts, style and data inlined; opens offline, fit\n"
    "for a CI artifact): the newest run's machine and software; per suite a headline view (amp\n"
    "speed-up and throughput by precision, ddp throughput and scaling efficiency by world size,\n"
    "dataloader throughput and wait share by workers, quant latency and accuracy by precision);\n"
    "with several runs of one machine, trend plots of the headline metrics with 95% bands and\n"
    "change points (as `perfbench history`); with --compare A B, compare's verdict table; with\n"
    "runs from several machines, the procurement ranking (as `perfbench procure`). RUN is an id,\n"
    "a label (its runs pooled) or a JSON file; --label L takes each run labelled L; default:\n"
    "the latest run. Plots are drawn by dygraphs (Debian's libjs-dygraphs, inlined).\n"
    "Exit 0, 2 on bad input (nothing written).";

// Runs as given: each RUN, or each run labelled L; oldest first.
std::vector<RunData> SelectRuns(Store& store, const po::variables_map& vm) {
  std::vector<RunData> out;
  if (vm.count("label")) {
    auto ids = store.RunsWithLabel(vm["label"].as<std::string>());
    if (ids.empty()) throw UsageError("no run labelled '" + vm["label"].as<std::string>() + "'");
    std::reverse(ids.begin(), ids.end());
    for (int64_t id : ids) out.push_back(LoadRunData(&store, std::to_string(id), "run"));
  }
  if (vm.count("runs"))
    for (const auto& ref : vm["runs"].as<std::vector<std::string>>()) out.push_back(LoadRunData(&store, ref, "run"));
  if (out.empty()) out.push_back(LoadRunData(&store, "latest", "run"));
  return out;
}

// The runs of one machine as one (processes of each run numbered after the others').
RunData Pooled(const std::vector<const RunData*>& runs) {
  RunData all = *runs.back();
  all.results.clear();
  for (const RunData* r : runs) all.results.insert(all.results.end(), r->results.begin(), r->results.end());
  return PoolProcesses(all);
}

// A run's machine for the report: the machine that measured it (host
// identity) on its hardware; a machine whose hardware changed is two.
std::string MachineKey(const RunRecord& run) { return run.machine + "|" + run.profile_key; }

// History of the newest run's machine, and machines when the runs span several.
void AddSeriesAndMachines(ReportInput& in) {
  std::map<std::string, std::vector<const RunData*>> by_profile;
  std::vector<std::string> order;
  for (const auto& r : in.runs) {
    if (!by_profile.count(MachineKey(r.run))) order.push_back(MachineKey(r.run));
    by_profile[MachineKey(r.run)].push_back(&r);
  }
  const auto& mine = by_profile[MachineKey(in.runs.back().run)];
  in.trend_runs = mine.size();
  if (mine.size() >= 2) {
    std::vector<std::pair<RunRecord, std::vector<ResultRecord>>> runs;
    for (const RunData* r : mine) runs.emplace_back(r->run, PoolProcesses(*r).results);  // a label given: one point
    in.trends = BuildHistory(runs, {}, {});
  }
  if (order.size() < 2) return;
  for (const auto& key : order) {
    const auto& runs = by_profile[key];
    const RunRecord& newest = runs.back()->run;
    const std::string name = newest.machine.empty() ? (newest.label.empty() ? "unlabelled" : newest.label) : newest.machine;
    in.machines.push_back({fmt::format("{} (run {})", name, newest.id), Pooled(runs), 0, 0});
  }
  in.procurement = Procure(in.machines);
}

}  // namespace

int ReportCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("runs", po::value<std::vector<std::string>>()->value_name("RUN"), "runs to report")
      ("label", po::value<std::string>()->value_name("L"), "every run labelled L, each on its own")
      ("compare", po::value<std::vector<std::string>>()->multitoken()->value_name("A B"), "add compare A B's verdicts")
      ("title", po::value<std::string>()->default_value("perfbench report")->value_name("T"), "page title")
      ("output", po::value<std::string>()->value_name("FILE"), "the HTML file to write");
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {"...runs"}, vm, kUsage)) return kExitOk;
  if (!vm.count("output")) throw UsageError("missing --output FILE.html");
  if (vm.count("compare") && vm["compare"].as<std::vector<std::string>>().size() != 2)
    throw UsageError("--compare takes two runs: --compare A B");
  std::pair<std::string, std::string> dygraphs;
  try {
    dygraphs = LoadDygraphs();
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  auto store = OpenStore(vm, Store::Mode::kReadOnly);
  ReportInput in;
  in.title = vm["title"].as<std::string>();
  in.runs = SelectRuns(*store, vm);
  AddSeriesAndMachines(in);
  if (vm.count("compare")) {
    const auto ab = vm["compare"].as<std::vector<std::string>>();
    const RunData a = LoadRunData(store.get(), ab[0], "baseline"), b = LoadRunData(store.get(), ab[1], "candidate");
    try {
      in.comparison = Compare(a, b, Policy::Default(), /*across_hardware=*/true, LoadHistory(*store, a, b));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    in.comparison_a = ab[0];
    in.comparison_b = ab[1];
  }
  WriteAtomically(vm["output"].as<std::string>(), RenderHtmlReport(in, dygraphs.first, dygraphs.second), "--output");
  const nlohmann::json specs = PlotSpecs(in);
  std::cerr << "report: " << in.runs.size() << " run(s), " << specs["headline"].size() << " headline and "
            << specs["trends"].size() << " trend plots -> " << vm["output"].as<std::string>() << "\n";
  return kExitOk;
}

}  // namespace perfbench::cli
