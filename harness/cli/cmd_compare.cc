// perfbench compare A B, and perfbench import FILE.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "common.h"
#include "compare/compare.h"
#include "report/run_report.h"
#include "gate/history.h"
#include "gate/window.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kCompareUsage =
    "usage: perfbench compare A B [--last N] [--db PATH] [--format table|markdown|json|junit]\n"
    "                         [--output FILE] [--policy FILE] [--only-changed] [--across-hardware]\n"
    "                         [--strict] [--per-control]\n\n"
    "Compares candidate B with baseline A, metric by metric, and gives a verdict per metric\n"
    "(regression, improvement, unchanged, inconclusive, missing, new). Processes are the\n"
    "independent samples: when both sides hold 2 or more processes (run --processes, a\n"
    "baseline of several runs, a label's runs pooled) the test is Welch's t on the log of\n"
    "the process medians. With one process on a side (`run --processes 1`) the between-\n"
    "process noise is unknown: the metric is inconclusive unless 5 or more earlier runs give\n"
    "a noise floor (then Mann-Whitney U with a Hodges-Lehmann interval on the repetitions,\n"
    "judged at that floor). Every verdict states its detectable effect (mde: the smallest\n"
    "change it catches with 80% power). A = label:NAME [--last N] is a rolling baseline: the\n"
    "last N usable runs of NAME before B (see `perfbench gate --help`). q-values are\n"
    "Benjamini-Hochberg across metrics. A metric's limit is the policy's, raised to its\n"
    "noise floor (Q3 + 3 IQR of run-to-run changes) when 5 or more earlier runs exist.\n"
    "Earlier runs: the store's runs before B, of any label, that measured the same results\n"
    "under the same conditions (the last 30). Two runs' processes share each run's moment\n"
    "(a shared machine runs slower for tens of seconds at a time): with one run on a side\n"
    "and fewer than 5 earlier runs, a metric whose samples vary is never called a change but\n"
    "inconclusive, saying how to resolve it (`perfbench ab`, `gate --reference-bin`, or 5\n"
    "runs a side). The verdict's kind: stored_runs, stored_baseline or rolling_baseline.\n"
    "A and B are, looked up in this order: a JSON file (a path ending in .json or holding a\n"
    "'/': baseline export, show JSON or Google Benchmark JSON), a baseline name, a label (a\n"
    "label naming several runs pools their samples), a run id, or `latest`. Exit 0 no\n"
    "regression, 1 regression, 2 bad input, 3 inconclusive with --strict (or too few runs\n"
    "for label:NAME), 5 runs of other hardware or conditions (unless --across-hardware).\n"
    "The table ends with one line per judged workload: its headline metric and verdict.";

// A run imported before keeps the label it has: --label names a new copy only.
std::string LabelKept(Store& store, int64_t id, const po::variables_map& vm) {
  if (!vm.count("label")) return "";
  const std::string there = store.GetRun(id).label;
  if (there == vm["label"].as<std::string>()) return "";
  return (there.empty() ? std::string("; it stays unlabelled") : "; it keeps its label '" + there + "'") +
         " (--label applies to new runs only)";
}

}  // namespace

int CompareCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("baseline", po::value<std::string>()->value_name("A"),
                     "baseline: file, baseline name, label, run id, latest, or label:NAME (rolling)")
      ("last", po::value<int>()->value_name("N"), "A = label:NAME: its last N usable runs before B (default 20)")
      ("candidate", po::value<std::string>()->value_name("B"), "candidate: file, baseline name, label, run id or latest")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "table | markdown | json | junit")
      ("output", po::value<std::string>()->value_name("FILE"), "write the report to FILE instead of stdout")
      ("policy", po::value<std::string>()->value_name("FILE"),
       "thresholds (default: $PERFBENCH_POLICY, else built-in defaults; see baselines/policy.json)")
      ("only-changed", po::bool_switch(), "leave unchanged metrics out of the report")
      ("across-hardware", po::bool_switch(), "compare runs on different hardware: ratios and intervals, no pass/fail")
      ("strict", po::bool_switch(), "exit 3 when any metric is inconclusive or missing (a decision is required)")
      ("per-control", po::bool_switch(),
       "judge throughput_per_control (throughput against the control block after each step: a machine-wide slowdown "
       "cancels) and report raw throughput as informational");
  AddWideOption(desc);
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {"baseline", "candidate"}, vm,
kCompareUsage))
    return kExitOk;
  if (!vm.count("baseline") || !vm.count("candidate")) throw UsageError("needs two runs: compare A B");
  const std::string format =
      CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json", "junit"});
  Policy policy = LoadPolicy(vm.count("policy") ? vm["policy"].as<std::string>() : "");
  if (vm["per-control"].as<bool>()) policy.JudgePerControl();
  // Two files need no database.
  std::unique_ptr<Store> store;
  if (!LooksLikeFile(vm["baseline"].as<std::string>()) || !LooksLikeFile(vm["candidate"].as<std::string>()) ||
      gate::RollingLabel(vm["baseline"].as<std::string>()))
    store = OpenStore(vm, Store::Mode::kReadOnly);
  const RunData b = LoadRunData(store.get(), vm["candidate"].as<std::string>(), "candidate");
  const RunData a = LoadBaselineRef(store.get(), vm["baseline"].as<std::string>(),
                                    vm.count("last") ? vm["last"].as<int>() : 0, b, policy);
  Comparison c;
  try {
    c = Compare(a, b, policy, vm["across-hardware"].as<bool>(), store ? gate::LoadMachineHistory(*store, a, b) : History{},
                /*require_known_moment=*/true);
    c.kind = KindOf(vm["baseline"].as<std::string>(), a);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool only_changed = vm["only-changed"].as<bool>();
  const bool to_file = vm.count("output") > 0;
  const std::string text = RenderComparison(format, c, a, b, !to_file && StdoutIsTerminal(), only_changed);
  if (to_file) {
    WriteAtomically(vm["output"].as<std::string>(), text, "--output");
  } else {
    std::cout << text;
  }
  return ComparisonExit(c, 0, /*allow_inconclusive=*/!vm["strict"].as<bool>());
}

int ImportCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("file", po::value<std::string>()->value_name("FILE"),
                     "a `perfbench show --format json` document, a baseline export, or Google Benchmark JSON")
      ("label", po::value<std::string>()->value_name("L"), "label for a newly imported run (default: the file's; a run already here keeps its own)")
      ("suite", po::value<std::string>()->default_value("gbench")->value_name("S"),
       "suite name for Google Benchmark results");
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {"file"}, vm,
    "usage: perfbench import FILE [--db PATH] [--label L] [--suite S]\n\n"
    "Loads a run from the JSON that `perfbench show --format json` prints (schema_version 2, or 1),\n"
    "from a `perfbench baseline export` file (as a plain run; `baseline import` also names it),\n"
    "or from Google Benchmark's --benchmark_format=json output: each benchmark becomes a\n"
    "workload of suite S with real_time, cpu_time (s) and items/bytes_per_second, and each\n"
    "repetition a sample (run with --benchmark_repetitions=N, without\n"
    "--benchmark_report_aggregates_only). A malformed file exits 2 and writes nothing."))
    return kExitOk;
  if (!vm.count("file")) throw UsageError("missing FILE");
  const std::string path = vm["file"].as<std::string>();
  const std::string suite = vm["suite"].as<std::string>();
  if (suite.empty() || suite.find_first_of("/: ") != std::string::npos)
    throw UsageError("--suite: expected a name without '/', ':' or spaces");
  RunDocument doc = ParseRunDocument(ReadJsonFile(path), path, suite);
  for (auto& [run, results, verdict] : doc.runs) {  // a baseline export may hold several runs
    if (vm.count("label")) run.label = vm["label"].as<std::string>();
    // Only a finished run keeps its status; one cut short elsewhere is just imported.
    if (run.status != RunStatus::kComplete) run.status = RunStatus::kImported;
  }
  auto store = OpenStore(vm, Store::Mode::kCreate);
  KeepIdentitiesHonest(*store, doc.runs);
  const auto rows = store->InsertRunsReporting(doc.runs);  // all or none
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].inserted)
      std::cout << "imported run " << rows[i].id << " (" << doc.runs[i].results.size() << " results, " << doc.kind
                << ") into " << store->path() << "\n";
    else
      std::cout << "run " << rows[i].id << " is already in " << store->path() << " (the same run, "
                << doc.runs[i].run.uuid << "): not imported again" << LabelKept(*store, rows[i].id, vm) << "\n";
  return kExitOk;
}

}  // namespace perfbench::cli
