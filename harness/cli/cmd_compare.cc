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

namespace perfbench::cli {
namespace {

// A run id, `latest`, or a label; a label naming several runs pools them.
RunData Load(Store& store, const std::string& ref, const char* role) {
  RunData d;
  auto ids = store.RunsWithLabel(ref);
  if (ids.empty()) {
    auto id = store.ResolveRun(ref);
    if (!id) throw UsageError(std::string("no ") + role + " run or label '" + ref + "' in " + store.path());
    ids = {*id};
  }
  d.run_ids = ids;
  d.run = store.GetRun(ids.front());
  for (int64_t id : ids) {
    const RunRecord r = store.GetRun(id);
    if (r.profile_key != d.run.profile_key)
      throw UsageError(std::string(role) + " label '" + ref + "' names runs on different hardware (runs " +
                       std::to_string(ids.front()) + " and " + std::to_string(id) + "); compare run ids");
    auto res = store.GetResults(id);
    d.results.insert(d.results.end(), res.begin(), res.end());
  }
  return d;
}

// Writes `text` to `path` through a temporary file and rename, so a reader
// never sees half a report.
void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw UsageError("cannot write --output '" + path + "'");
    out << text;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      throw UsageError("cannot write --output '" + path + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw UsageError("cannot write --output '" + path + "'");
  }
}

}  // namespace

int CompareCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("baseline", po::value<std::string>()->value_name("A"), "baseline: run id, label or latest")
      ("candidate", po::value<std::string>()->value_name("B"), "candidate: run id, label or latest")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "table | markdown | json | junit")
      ("output", po::value<std::string>()->value_name("FILE"), "write the report to FILE instead of stdout")
      ("policy", po::value<std::string>()->value_name("FILE"),
       "thresholds (default: $PERFBENCH_POLICY, else built-in defaults; see baselines/policy.json)")
      ("only-changed", po::bool_switch(), "leave unchanged metrics out of the report")
      ("across-hardware", po::bool_switch(), "compare runs on different hardware: ratios and intervals, no pass/fail")
      ("strict", po::bool_switch(), "exit 3 when any metric is inconclusive or missing (a decision is required)");
  AddDbOption(desc);
  po::positional_options_description pos;
  pos.add("baseline", 1).add("candidate", 1);
  po::variables_map vm;
  if (!Parse(args, desc, pos, vm,
             "usage: perfbench compare A B [--db PATH] [--format table|markdown|json|junit] [--output FILE]\n"
             "                         [--policy FILE] [--only-changed] [--across-hardware] [--strict]\n\n"
             "Compares candidate B with baseline A, metric by metric: Mann-Whitney U p-values,\n"
             "Benjamini-Hochberg q-values, Hodges-Lehmann intervals for the ratio of medians, and a\n"
             "verdict per metric (regression, improvement, unchanged, inconclusive, missing, new).\n"
             "A and B are run ids, labels or `latest`; a label naming several runs pools their\n"
             "samples. Exit 0 no regression, 1 regression, 2 bad input or runs on different\n"
             "hardware, 3 inconclusive with --strict."))
    return kExitOk;
  if (!vm.count("baseline") || !vm.count("candidate")) throw UsageError("needs two runs: compare A B");
  const std::string format =
      CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json", "junit"});
  Policy policy = Policy::Default();
  std::string policy_path = vm.count("policy") ? vm["policy"].as<std::string>() : "";
  if (policy_path.empty())
    if (const char* env = std::getenv("PERFBENCH_POLICY"); env && *env) policy_path = env;
  if (!policy_path.empty()) {
    try {
      policy = Policy::Load(policy_path);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  auto store = OpenStore(vm, Store::Mode::kExisting);
  const RunData a = Load(*store, vm["baseline"].as<std::string>(), "baseline");
  const RunData b = Load(*store, vm["candidate"].as<std::string>(), "candidate");
  Comparison c;
  try {
    c = Compare(a, b, policy, vm["across-hardware"].as<bool>());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool only_changed = vm["only-changed"].as<bool>();
  const bool to_file = vm.count("output") > 0;
  std::string text;
  if (format == "table") text = ComparisonTable(c, a, b, !to_file && StdoutIsTerminal(), only_changed);
  if (format == "markdown") text = ComparisonMarkdown(c, a, b, only_changed);
  if (format == "json") text = ComparisonJson(c, a, b, only_changed).dump(2) + "\n";
  if (format == "junit") text = ComparisonJunit(c, a, b);
  if (to_file) {
    WriteAtomically(vm["output"].as<std::string>(), text);
  } else {
    std::cout << text;
  }
  if (c.verdict == "regression") return kExitRegression;
  if (vm["strict"].as<bool>() && c.verdict == "inconclusive") return kExitInconclusive;
  return kExitOk;
}

int ImportCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("file", po::value<std::string>()->value_name("FILE"), "a `perfbench show --format json` document")
      ("label", po::value<std::string>()->value_name("L"), "label for the imported run (default: the file's)");
  AddDbOption(desc);
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!Parse(args, desc, pos, vm,
             "usage: perfbench import FILE [--db PATH] [--label L]\n\n"
             "Loads a run from the JSON that `perfbench show --format json` prints (schema_version 1).\n"
             "A malformed file exits 2 and writes nothing."))
    return kExitOk;
  if (!vm.count("file")) throw UsageError("missing FILE");
  const std::string path = vm["file"].as<std::string>();
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read '" + path + "'");
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("'" + path + "' is not valid JSON (" + std::string(e.what()) + ")");
  }
  RunRecord run;
  std::vector<ResultRecord> results;
  try {
    RunFromJson(doc, &run, &results);
  } catch (const std::invalid_argument& e) {
    throw UsageError("'" + path + "': " + e.what());
  }
  if (vm.count("label")) run.label = vm["label"].as<std::string>();
  // Only a finished run keeps its status; one cut short elsewhere is just imported.
  if (run.status != "complete") run.status = "imported";
  auto store = OpenStore(vm, Store::Mode::kCreate);
  const int64_t id = store->InsertRun(run, results);
  std::cout << "imported run " << id << " (" << results.size() << " results) into " << store->path() << "\n";
  return kExitOk;
}

}  // namespace perfbench::cli
