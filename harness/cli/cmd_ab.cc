// perfbench ab: paired A/B runs of two builds (or two configurations) that
// can both run now. N pairs of processes, each pair A then B or B then A in a
// seeded, balanced order, back to back: drift between pairs cancels in the
// pair log ratios, which a Wilcoxon signed-rank test judges (ComparePaired).
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <random>
#include <sstream>

#include "cli.h"
#include "common.h"
#include "compare/compare.h"
#include "perfbench/posix_fs.h"
#include "processes.h"
#include "gate/window.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench ab [--a-bin PATH] [--b-bin PATH] [--a-args \"...\"] [--b-args \"...\"]\n"
    "                    [--a-env K=V]... [--b-env K=V]... [--pairs N] [--order-seed N]\n"
    "                    [--a-label L] [--b-label L] [--policy FILE] [--db PATH]\n"
    "                    [--format table|markdown|json|junit|none] [--output FILE] [--junit FILE]\n"
    "                    [--markdown FILE] [--json FILE] [--allow-inconclusive]\n"
    "                    [--baseline label:NAME [--last N]] [run options]\n\n"
    "Paired A/B comparison of two builds or configurations that can both run now (a torch\n"
    "upgrade, a driver, a patch, a flag). Runs N pairs of processes back to back, each pair in\n"
    "the order AB or BA, balanced and shuffled with --order-seed; every process is a\n"
    "`BIN run` of the same selection (any `perfbench run` option given here, e.g. --suite amp\n"
    "--quick --filter mlp, goes to both sides; --a-args/--b-args and --a-env/--b-env to one).\n"
    "Both binaries default to this one. Each process is stored as a run labelled ab-a or ab-b.\n"
    "Every metric is judged on its N pair log ratios, so drift of the machine between pairs\n"
    "cancels: Wilcoxon signed-rank test (SciPy's wilcoxon), Hodges-Lehmann estimate and\n"
    "interval of the ratio, Benjamini-Hochberg across metrics, verdicts at the policy's limits.\n"
    "The pairs' own spread is in the test; the run-to-run noise floor learned from A's runs\n"
    "(or with --baseline label:NAME --last N from that rolling window, the syntax of gate),\n"
    "which limits compare and gate, is what pairing cancels: it is reported beside each\n"
    "verdict as what an unpaired comparison could resolve here, not raised into the limit.\n"
    "With the default 10 pairs the smallest two-sided p is 2/1024 = 0.002. Each side's process\n"
    "has run's default --run-budget (900 s: a slow variant may run fewer repetitions, and one\n"
    "whose set-up, warm-up and 2 repetitions need over a quarter of it is skipped); pass\n"
    "--run-budget 0 to lift it on both sides.\n"
    "Exit 0 pass, 1 regression (B worse than A), 2 bad input, 3 inconclusive, 4 a process failed.";

// 10 pairs: the smallest exact two-sided p is 2/1024, small enough to pass
// Benjamini-Hochberg when 10 of 200 metrics change (0.05 * 10 / 200).
constexpr int kDefaultPairs = 10;
// Fewer than 6 pairs can never be significant (the smallest two-sided p of
// the signed-rank test with 5 pairs is 2/32) and leave the paired interval
// without its stated coverage.
constexpr int kMinPairs = 6;

po::options_description AbOptions() {
  po::options_description desc("options");
  desc.add_options()
      ("a-bin", po::value<std::string>()->value_name("PATH"), "perfbench binary of side A (default: this one)")
      ("b-bin", po::value<std::string>()->value_name("PATH"), "perfbench binary of side B (default: this one)")
      ("a-args", po::value<std::string>()->value_name("\"...\""), "extra `run` arguments for A only")
      ("b-args", po::value<std::string>()->value_name("\"...\""), "extra `run` arguments for B only")
      ("a-env", po::value<std::vector<std::string>>()->composing()->value_name("K=V"), "environment for A only")
      ("b-env", po::value<std::vector<std::string>>()->composing()->value_name("K=V"), "environment for B only")
      ("pairs", po::value<int>()->default_value(kDefaultPairs)->value_name("N"), "pairs of processes (at least 6)")
      ("order-seed", po::value<uint64_t>()->default_value(1)->value_name("N"), "seed of the AB/BA order")
      ("a-label", po::value<std::string>()->default_value("ab-a")->value_name("L"), "label of A's runs")
      ("b-label", po::value<std::string>()->default_value("ab-b")->value_name("L"), "label of B's runs")
      ("policy", po::value<std::string>()->value_name("FILE"), "thresholds (as compare and gate)")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"),
       "report on stdout: table | markdown | json | junit | none")
      ("output", po::value<std::string>()->value_name("FILE"), "write the --format report to FILE instead")
      ("junit", po::value<std::string>()->value_name("FILE"), "also write a JUnit XML report")
      ("markdown", po::value<std::string>()->value_name("FILE"), "also write a Markdown report")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the JSON report")
      ("allow-inconclusive", po::bool_switch(), "exit 0 instead of 3 when metrics stay inconclusive")
      ("baseline", po::value<std::string>()->value_name("label:NAME"), "learn noise floors from NAME's rolling window")
      ("last", po::value<int>()->value_name("N"), "--baseline label:NAME: its last N usable runs (default 20)");
  AddWideOption(desc);
  AddDbOption(desc);
  return desc;
}

// Words of a flag value, split on white space ("--threads 1").
std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Options ab sets for each side itself.
void CheckPassThrough(const std::vector<std::string>& args, const std::string& where) {
  for (const auto& a : args)
    for (const char* own : {"--db", "--label", "--format", "--processes"})
      if (a == own || a.rfind(std::string(own) + "=", 0) == 0)
        throw UsageError(std::string(own) + where + " is set by ab for each side");
}

struct Side {
  std::string bin, label;
  std::vector<std::string> args;                          // after `run`
  std::vector<std::pair<std::string, std::string>> env;   // added to ours
};

std::vector<std::pair<std::string, std::string>> EnvFlags(const po::variables_map& vm, const char* key) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!vm.count(key)) return out;
  for (const auto& kv : vm[key].as<std::vector<std::string>>()) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError(std::string("--") + key + " '" + kv + "': expected K=V");
    out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return out;
}

Side MakeSide(const po::variables_map& vm, char which, const std::vector<std::string>& common, const std::string& db) {
  const std::string p(1, which);
  Side s;
  s.bin = vm.count(p + "-bin") ? vm[p + "-bin"].as<std::string>() : posix::SelfExe();
  if (access(s.bin.c_str(), X_OK) != 0) throw UsageError("--" + p + "-bin '" + s.bin + "' is not an executable");
  s.label = vm[p + "-label"].as<std::string>();
  s.args = {"run", "--db", db, "--label", s.label, "--format", "none", "--processes", "1"};  // a pair's side is one process
  s.args.insert(s.args.end(), common.begin(), common.end());
  if (vm.count(p + "-args"))
    for (auto& w : Words(vm[p + "-args"].as<std::string>())) s.args.push_back(w);
  s.env = EnvFlags(vm, (p + "-env").c_str());
  return s;
}

// The balanced order: half the pairs AB, half BA (the odd one decided by the
// seed), shuffled by a seeded Fisher-Yates with a portable generator.
std::vector<bool> Orders(int pairs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<bool> b_first(static_cast<size_t>(pairs), false);
  for (int i = 0; i < pairs / 2; ++i) b_first[static_cast<size_t>(i)] = true;
  if (pairs % 2) b_first.back() = rng() % 2 == 1;
  for (size_t i = b_first.size(); i > 1; --i) {
    const size_t j = rng() % i;
    const bool t = b_first[i - 1];
    b_first[i - 1] = b_first[j];
    b_first[j] = t;
  }
  return b_first;
}

}  // namespace

namespace {

// Runs one process of `side` and returns its run id (the newest with its
// label); a process that failed to finish counts in `failed`.
int64_t RunOne(Store& store, const Side& side, int pair, int pairs, char name, size_t* failed) {
  std::vector<std::string> argv = side.args;
  argv.insert(argv.begin(), side.bin);
  const StoredProcess p = RunStoredProcess(store, argv, side.env, side.label);
  std::cerr << "pair " << pair + 1 << "/" << pairs << ": " << name << (p.failure.empty() ? "" : " " + p.failure) << "\n";
  if (p.exit_code == kExitUsage && pair == 0)
    throw UsageError(std::string("side ") + name + " refused its arguments (`" + side.bin + " run ...` exited 2)");
  if (!p.run_id)
    throw std::runtime_error(std::string("side ") + name + " (" + side.bin + ") stored no run" +
                             (p.failure.empty() ? "" : ": it " + p.failure));
  // Exit 4 is a failed workload (recorded in the run); anything else a failed process.
  if (!p.failure.empty() && p.exit_code != kExitRuntime) ++*failed;
  if (!p.complete)
    throw std::runtime_error(std::string("side ") + name + " left run " + std::to_string(p.run_id) +
                             " unfinished" + (p.failure.empty() ? "" : ": it " + p.failure));
  return p.run_id;
}

PairedData RunPairs(Store& store, const Side& a, const Side& b, int pairs, uint64_t seed, size_t* failed) {
  PairedData d;
  std::vector<int64_t> ids_a, ids_b;
  const auto orders = Orders(pairs, seed);
  for (int i = 0; i < pairs; ++i) {
    int64_t ia = 0, ib = 0;
    if (orders[static_cast<size_t>(i)]) {
      ib = RunOne(store, b, i, pairs, 'B', failed);
      ia = RunOne(store, a, i, pairs, 'A', failed);
    } else {
      ia = RunOne(store, a, i, pairs, 'A', failed);
      ib = RunOne(store, b, i, pairs, 'B', failed);
    }
    for (auto [id, data, list, ids] : {std::tuple{ia, &d.a, &d.a_pairs, &ids_a}, std::tuple{ib, &d.b, &d.b_pairs, &ids_b}}) {
      const RunRecord r = store.GetRun(id);
      *failed += static_cast<size_t>(r.failed_results > 0);
      list->push_back(store.GetResults(id));
      data->results.insert(data->results.end(), list->back().begin(), list->back().end());
      ids->insert(ids->begin(), id);
      data->run = r;
    }
  }
  d.a.run_ids = ids_a;
  d.b.run_ids = ids_b;
  d.a.run_count = d.b.run_count = static_cast<size_t>(pairs);
  d.a.source = a.label + " (" + std::to_string(pairs) + " runs)";
  d.b.source = b.label + " (" + std::to_string(pairs) + " runs)";
  return d;
}

// Noise floors from A's runs, this time's and earlier ones with its label;
// or, with --baseline label:NAME, from that rolling window.
History AbHistory(const po::variables_map& vm, Store& store, const PairedData& d, const Policy& policy) {
  RunData a_runs;
  a_runs.run = d.a.run;
  a_runs.run_ids = d.a.run_ids;
  RunData a_label = a_runs;
  a_label.run_ids.clear();
  if (!vm.count("baseline")) {
    if (vm.count("last")) throw UsageError("--last applies to --baseline label:NAME");
    return LoadHistory(store, a_runs, a_label);
  }
  const std::string ref = vm["baseline"].as<std::string>();
  RunData window = LoadBaselineRef(&store, ref, vm.count("last") ? vm["last"].as<int>() : 0, a_runs, policy);
  RunData none;
  none.run = d.a.run;
  none.run.label.clear();
  return LoadHistory(store, window, none);
}

}  // namespace

int AbCmd(const std::vector<std::string>& args) {
  const po::options_description desc = AbOptions();
  po::variables_map vm;
  std::vector<std::string> common;
  if (!ParsePassThrough(args, desc, vm, &common, kUsage)) return kExitOk;
  const std::string format =
      CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json", "junit", "none"});
  const int pairs = vm["pairs"].as<int>();
  if (pairs < kMinPairs || pairs > 1000)
    throw UsageError("--pairs must be in [" + std::to_string(kMinPairs) + ", 1000]");
  CheckPassThrough(common, "");
  for (const char* side : {"a-args", "b-args"})
    if (vm.count(side)) CheckPassThrough(Words(vm[side].as<std::string>()), std::string(" in --") + side);
  if (vm["a-label"].as<std::string>() == vm["b-label"].as<std::string>())
    throw UsageError("--a-label and --b-label must differ");
  if (vm.count("baseline") && !gate::RollingLabel(vm["baseline"].as<std::string>()))
    throw UsageError("--baseline: expected label:NAME");
  const Policy policy = LoadPolicy(vm.count("policy") ? vm["policy"].as<std::string>() : "");
  const Side a = MakeSide(vm, 'a', common, DbPath(vm)), b = MakeSide(vm, 'b', common, DbPath(vm));
  auto store = OpenStore(vm, Store::Mode::kCreate);
  size_t failed = 0;
  const PairedData d = RunPairs(*store, a, b, pairs, vm["order-seed"].as<uint64_t>(), &failed);
  Comparison c;
  try {
    c = ComparePaired(d, policy, AbHistory(vm, *store, d, policy));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  WriteComparisonReports(vm, format, c, d.a, d.b);
  std::cerr << "ab: " << ToString(c.verdict) << "\n";
  return ComparisonExit(c, failed, vm["allow-inconclusive"].as<bool>());
}

}  // namespace perfbench::cli
