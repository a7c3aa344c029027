// perfbench ab: paired A/B runs of two builds (or two configurations) that
// can both run now, on the interleaved engine (paired_runs.h): drift
// between pairs cancels in the pair log ratios, which a Wilcoxon
// signed-rank test judges (ComparePaired).
#include <iostream>

#include "cli.h"
#include "common.h"
#include "compare/compare.h"
#include "gate/window.h"
#include "paired_runs.h"
#include "perfbench/posix_fs.h"
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
      ("baseline", po::value<std::string>()->value_name("label:NAME"), "learn noise floors from NAME's rolling window")
      ("last", po::value<int>()->value_name("N"), "--baseline label:NAME: its last N usable runs (default 20)");
  AddVerdictReportOptions(desc);
  AddWideOption(desc);
  AddDbOption(desc);
  return desc;
}

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

Side AbSide(const po::variables_map& vm, char which, const std::vector<std::string>& common, const std::string& db) {
  const std::string p(1, which);
  const std::string bin = vm.count(p + "-bin") ? vm[p + "-bin"].as<std::string>() : posix::SelfExe();
  return MakeSide(std::string(1, static_cast<char>(which - 'a' + 'A')), bin, "--" + p + "-bin", vm[p + "-label"].as<std::string>(), db, common,
                  vm.count(p + "-args") ? Words(vm[p + "-args"].as<std::string>()) : std::vector<std::string>{},
                  EnvFlags(vm, (p + "-env").c_str()));
}

// Noise floors from A's runs, this time's and earlier ones with its label;
// or, with --baseline label:NAME, from that rolling window.
History AbHistory(const po::variables_map& vm, Store& store, const PairedData& d, const Policy& policy) {
  if (!vm.count("baseline")) {
    if (vm.count("last")) throw UsageError("--last applies to --baseline label:NAME");
    return SideAHistory(store, d);
  }
  RunData a_runs;
  a_runs.run = d.a.run;
  a_runs.run_ids = d.a.run_ids;
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
  const Side a = AbSide(vm, 'a', common, DbPath(vm)), b = AbSide(vm, 'b', common, DbPath(vm));
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
