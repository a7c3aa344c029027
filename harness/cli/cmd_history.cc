// perfbench history: series of run medians per metric over the runs of one
// machine, oldest first, with change points (harness/src/history.h,
// changepoint.h).
#include <algorithm>
#include <iostream>
#include <set>
#include <tuple>

#include "cli.h"
#include "common.h"
#include "history.h"
#include "peaks.h"
#include "gate/window.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench history [--label L | --baseline label:L] [--suite S[,S]] [--filter REGEX]\n"
    "                         [--metric M] [--last N]\n"
    "                         [--window N] [--max-pvalue P] [--min-segment N] [--fail-on-change]\n"
    "                         [--format table|json] [--db PATH]\n\n"
    "Per metric, the series of run medians (each with the 95% interval of its median) over the\n"
    "runs of one machine (the hardware profile of the newest run selected), oldest first, and\n"
    "its change points: E-divisive means as Apache Otava does it (a split where the\n"
    "energy-distance statistic peaks, kept when Student's t-test between the segments gives\n"
    "p <= --max-pvalue, weakest points re-tested and dropped; windows of --window runs), with at\n"
    "least --min-segment runs on each side of a change, so one spike is not a step. Runs: those\n"
    "labelled L (default: every measured run, not profiles, peaks, advise's or ab's), of the\n"
    "newest one's machine, threads, size and device, by start time; the last --last N.\n"
    "--baseline label:L (the syntax of compare and gate) is --label L, and also prints on\n"
    "stderr the rolling baseline a gate would take: the runs kept and why others were left out.\n"
    "Exit 0; with --fail-on-change, 1 when a change point moves a metric the worse way\n"
    "(as compare's exit codes); 2 on bad input.";

po::options_description HistoryOptions() {
  const ChangePointOptions d;
  po::options_description desc("options");
  desc.add_options()("label", po::value<std::string>()->value_name("L"), "only runs with this label")
      ("baseline", po::value<std::string>()->value_name("label:L"), "as --label L, and print the rolling window")
      ("suite", po::value<std::vector<std::string>>()->composing()->value_name("S[,S]"), "only these suites")
      ("filter", po::value<std::string>()->value_name("REGEX"), "only variants whose full name matches")
      ("metric", po::value<std::string>()->value_name("M"), "only this metric")
      ("last", po::value<int>()->value_name("N"), "only the last N runs")
      ("window", po::value<int>()->default_value(static_cast<int>(d.window))->value_name("N"),
       "runs per window of the change-point search")
      ("max-pvalue", po::value<double>()->default_value(d.max_pvalue)->value_name("P"),
       "significance a change point needs")
      ("min-segment", po::value<int>()->default_value(static_cast<int>(d.min_segment))->value_name("N"),
       "fewest runs on each side of a change point")
      ("fail-on-change", po::bool_switch(), "exit 1 when a change point is a regression")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "table | json");
  AddWideOption(desc);
  AddDbOption(desc);
  return desc;
}

// Runs that measured one build as it is: not profiles, peaks, advise's
// settings or ab's alternating sides (unless --label names them).
bool Measured(const RunRecord& r) {
  return (r.status == RunStatus::kComplete || r.status == RunStatus::kImported) && r.label != "profile" &&
         r.label != kPeakLabel && r.label.rfind("advise/", 0) != 0 && r.label != "ab-a" && r.label != "ab-b";
}

// The selected runs, oldest first (by start time), with their results: those
// of the newest run's machine and conditions (SameConditions).
std::vector<std::pair<RunRecord, std::vector<ResultRecord>>> SelectRuns(Store& store, const po::variables_map& vm,
                                                                        const std::string& label) {
  std::vector<RunRecord> runs;
  for (auto& r : store.ListRuns()) {
    const bool labelled = !label.empty() && r.label == label;
    if (!label.empty() ? labelled && r.status != RunStatus::kRunning && r.status != RunStatus::kAborted : Measured(r))
      runs.push_back(std::move(r));
  }
  if (runs.empty())
    throw UsageError(!label.empty() ? "no measured run labelled '" + label + "'" : "no measured run in " + store.path());
  std::stable_sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
    return std::tie(a.started_at, a.id) > std::tie(b.started_at, b.id);  // newest first
  });
  const RunRecord newest = runs.front();
  std::vector<std::pair<RunRecord, std::vector<ResultRecord>>> out;
  for (const auto& r : runs) {
    if (!gate::SameHostConditions(store, r, newest)) continue;
    if (vm.count("last") && static_cast<int>(out.size()) >= vm["last"].as<int>()) break;
    out.emplace_back(r, store.GetResults(r.id));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// --label L, or --baseline label:L.
std::string LabelOf(const po::variables_map& vm) {
  if (!vm.count("baseline")) return vm.count("label") ? vm["label"].as<std::string>() : "";
  if (vm.count("label")) throw UsageError("give --label or --baseline, not both");
  const auto label = gate::RollingLabel(vm["baseline"].as<std::string>());
  if (!label || label->empty()) throw UsageError("--baseline: expected label:NAME");
  return *label;
}

// The window a gate with --baseline label:L --last N would judge against.
void PrintWindow(Store& store, const std::string& label, const po::variables_map& vm, const RunRecord& newest) {
  const size_t last = vm.count("last") ? static_cast<size_t>(vm["last"].as<int>()) : gate::kDefaultWindowRuns;
  try {
    const auto w = gate::SelectWindow(store, label, std::max(last, gate::kMinWindowRuns), newest, Policy::Default());
    std::cerr << "rolling baseline label:" << label << ": " << w.data.source << "; runs";
    for (auto it = w.data.run_ids.rbegin(); it != w.data.run_ids.rend(); ++it) std::cerr << " " << *it;
    std::cerr << "\n";
    for (const auto& d : w.dropped) std::cerr << "  left out " << d << "\n";
  } catch (const std::exception& e) {
    std::cerr << "rolling baseline label:" << label << ": " << e.what() << "\n";
  }
}

ChangePointOptions Options(const po::variables_map& vm) {
  ChangePointOptions o;
  const int window = vm["window"].as<int>(), segment = vm["min-segment"].as<int>();
  const double p = vm["max-pvalue"].as<double>();
  if (window < 4 || window > 1000) throw UsageError("--window must be in [4, 1000]");
  if (segment < 1) throw UsageError("--min-segment must be at least 1");
  if (!(p > 0 && p < 1)) throw UsageError("--max-pvalue must be in (0, 1)");
  o.window = static_cast<size_t>(window);
  o.min_segment = static_cast<size_t>(segment);
  o.max_pvalue = p;
  return o;
}

}  // namespace

int HistoryCmd(const std::vector<std::string>& args) {
  const po::options_description desc = HistoryOptions();
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm, kUsage)) return kExitOk;
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "json"});
  if (vm.count("last") && vm["last"].as<int>() < 2) throw UsageError("--last must be at least 2");
  const ChangePointOptions options = Options(vm);
  HistorySelection sel;
  if (vm.count("suite")) sel.suites = SplitCommas(vm["suite"].as<std::vector<std::string>>());
  if (vm.count("filter")) sel.filter = vm["filter"].as<std::string>();
  if (vm.count("metric")) sel.metric = vm["metric"].as<std::string>();
  const std::string label = LabelOf(vm);
  auto store = OpenStore(vm, Store::Mode::kReadOnly);
  const auto runs = SelectRuns(*store, vm, label);
  std::vector<HistorySeries> series;
  try {
    series = BuildHistory(runs, sel, options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (vm.count("baseline")) PrintWindow(*store, label, vm, runs.back().first);
  if (series.empty()) throw UsageError("no series matches the selection");
  if (format == "json")
    std::cout << HistoryJson(series).dump(2) << "\n";
  else
    std::cout << HistoryTable(series);
  bool regressed = false;
  for (const auto& s : series)
    for (const auto& c : s.change_points) regressed = regressed || s.Regressed(c);
  return vm["fail-on-change"].as<bool>() && regressed ? kExitRegression : kExitOk;
}

}  // namespace perfbench::cli
