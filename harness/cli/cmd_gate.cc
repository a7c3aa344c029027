// perfbench gate --baseline NAME|FILE: the nightly CI gate. Reruns what the
// baseline holds with its settings in fresh processes, compares at the
// process level, and when metrics are inconclusive adds processes to those
// workloads only, up to --max-processes, testing each look at alpha / K
// (K planned looks).

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "cli.h"
#include "common.h"
#include "compare/compare.h"
#include "compare/gate_plan.h"
#include "report/run_report.h"
#include "run_support.h"
#include "processes.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench gate --baseline NAME|FILE [--processes K] [--max-processes N] [--policy FILE]\n"
    "                      [--format table|markdown|json|junit|none] [--output FILE]\n"
    "                      [--junit FILE] [--markdown FILE] [--json FILE] [--label L]\n"
    "                      [--repetitions N] [--warmup N] [--threads N] [--device D] [--seed N]\n"
    "                      [--timeout SECONDS] [--data-dir DIR] [--allow-inconclusive] [--db PATH]\n\n"
    "Runs the workload variants the baseline holds, with every setting the baseline recorded\n"
    "(flags override them), in fresh processes one after another, stores the candidate run and\n"
    "compares it with the baseline: at the process level (Welch on process medians) when both\n"
    "sides have 2 or more processes, so a baseline of several runs (`baseline set NAME R1 R2\n"
    "...`) lets the gate see how much processes differ. The first round's processes come from\n"
    "the baseline's between-process spread and the limit; metrics still inconclusive get more\n"
    "processes, for their workloads only, round after round until decided or --max-processes.\n"
    "Limits are the policy's, raised to each metric's noise floor learned from the baseline's\n"
    "runs and earlier gate runs (same label). With K = planned looks, every look tests at\n"
    "alpha/K and builds (1 - (1 - confidence)/K) intervals: a Bonferroni split, so the chance\n"
    "of a false verdict over all looks stays within the policy's.\n"
    "Exit 0 pass, 1 regression, 2 bad input / missing baseline / different hardware,\n"
    "3 metrics still inconclusive or missing, 4 a workload failed to run.";

po::options_description GateOptions() {
  po::options_description desc("options");
  desc.add_options()("baseline", po::value<std::string>()->value_name("NAME|FILE"),
                     "baseline name in the database, or a baseline export / show JSON file")
      ("label", po::value<std::string>()->value_name("L"), "label stored with the candidate run (default: gate)")
      ("processes", po::value<int>()->value_name("K"),
       "processes in the first round (default: from the baseline's between-process spread, 2..3)")
      ("max-processes", po::value<int>()->value_name("N"),
       "most processes per variant over all rounds (default: the first round's + 2)")
      ("policy", po::value<std::string>()->value_name("FILE"),
       "thresholds (default: $PERFBENCH_POLICY, else built-in defaults; see baselines/policy.json)")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"),
       "report on stdout: table | markdown | json | junit | none")
      ("output", po::value<std::string>()->value_name("FILE"), "write the --format report to FILE instead of stdout")
      ("junit", po::value<std::string>()->value_name("FILE"), "also write a JUnit XML report")
      ("markdown", po::value<std::string>()->value_name("FILE"),
       "also write a Markdown report (e.g. $GITHUB_STEP_SUMMARY)")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the JSON report (schema_version 3)")
      ("allow-inconclusive", po::bool_switch(), "exit 0 instead of 3 when metrics stay inconclusive");
  AddMeasureOptions(desc, true);
  AddDataDirOption(desc);
  AddDbOption(desc);
  return desc;
}

std::string VariantKeyOf(const VariantRef& v) { return VariantKey(v.workload->info.suite, v.workload->info.name, v.params); }

// Every setting the baseline recorded; UsageError when it was not recorded by `perfbench run`.
RunSettings RecordedSettings(const RunData& b) {
  const auto& s = b.run.settings;
  if (!s.is_object() || !s.contains("repetitions") || !s.contains("quick"))
    throw UsageError("the baseline (" + (b.source.empty() ? "run " + std::to_string(b.run.id) : b.source) +
                     ") was not recorded by `perfbench run`; a gate needs perfbench workloads");
  try {
    return RunSettings::FromJson(s);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("the baseline's settings are malformed: ") + e.what());
  }
}

// The baseline's variants as this build has them.
std::vector<VariantRef> BaselineVariants(const RunData& baseline, RunSettings* s) {
  std::set<std::string> wanted, suites;
  for (const auto& r : baseline.results) {
    if (r.suite == "control") continue;  // measured around every run (RunSettings::control)
    wanted.insert(VariantKey(r.suite, r.workload, r.params));
    suites.insert(r.suite);
  }
  s->suites.assign(suites.begin(), suites.end());
  std::vector<VariantRef> available, variants;
  try {
    available = SelectVariants(*s);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("the baseline names a suite this build lacks: ") + e.what());
  }
  for (const auto& v : available)
    if (wanted.count(VariantKeyOf(v))) variants.push_back(v);
  if (variants.empty())
    throw UsageError("none of the baseline's " + std::to_string(wanted.size()) +
                     " variants exists in this build (see `perfbench list`)");
  return variants;
}

GatePlan PlanFromFlags(const po::variables_map& vm, const RunData& baseline, int baseline_repetitions,
                       const Policy& policy) {
  for (const char* flag : {"processes", "max-processes"})
    if (vm.count(flag) && vm[flag].as<int>() < 1) throw UsageError(std::string("--") + flag + " must be at least 1");
  try {
    return PlanGate(baseline, baseline_repetitions, policy, vm.count("processes") ? vm["processes"].as<int>() : 0,
                    vm.count("max-processes") ? vm["max-processes"].as<int>() : 0);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// Variant keys of the workloads with an inconclusive metric.
std::vector<std::string> Undecided(const Comparison& c, const std::vector<VariantRef>& variants) {
  std::set<std::string> undecided;
  for (const auto& m : c.metrics)
    if (m.verdict == Verdict::kInconclusive) undecided.insert(m.suite + "/" + m.workload);
  std::vector<std::string> keys;
  for (const auto& v : variants)
    if (undecided.count(v.workload->info.FullName())) keys.push_back(VariantKeyOf(v));
  return keys;
}

struct Candidate {
  RunData data;
  size_t failed = 0;
};

// Runs `count` more processes of `keys` (empty: every variant) into the candidate run.
void AddProcesses(Store& store, const RunSettings& s, const std::vector<std::string>& keys, int first, int count,
                  int total, Candidate* cand) {
  const ProcessJob job{store.path(), cand->data.run.id, s, keys};
  for (const auto& p : RunProcesses(job, first, count, total))
    cand->failed += p.failed_variants + (p.failure.empty() ? 0 : 1);
  cand->data.results = store.GetResults(cand->data.run.id);
}

// The first round, then further rounds while metrics stay inconclusive;
// each adds processes to the undecided workloads only.
Comparison RunRounds(Store& store, const RunSettings& s, const RunData& baseline, const History& history,
                     const std::vector<VariantRef>& variants, const GatePlan& looks, Candidate* cand) {
  AddProcesses(store, s, {}, 0, looks.first, looks.max_processes, cand);
  Comparison c = Compare(baseline, cand->data, looks.policy, false, history);
  int next = looks.first;
  for (int round = 1; round <= looks.extra_rounds; ++round) {
    const auto again = Undecided(c, variants);
    const int more = NextRound(looks, next);
    if (again.empty() || more <= 0) break;
    std::cerr << "gate: round " << round + 1 << ": " << again.size() << " variant(s) inconclusive, +" << more
              << " processes\n";
    AddProcesses(store, s, again, next, more, looks.max_processes, cand);
    next += more;
    c = Compare(baseline, cand->data, looks.policy, false, history);
  }
  return c;
}

// Refuses different hardware before spending time on a run.
void CheckComparable(const RunData& baseline, const RunData& candidate, const Policy& policy) {
  try {
    RunData fingerprint_only;
    fingerprint_only.source = baseline.source;
    fingerprint_only.run = baseline.run;
    Compare(fingerprint_only, candidate, policy, false);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// The candidate run record, stored as running; refuses different hardware first.
Candidate BeginCandidate(const po::variables_map& vm, Store& store, const RunSettings& settings,
                         const RunData& baseline, const Policy& policy, const std::vector<std::string>& args) {
  Candidate cand;
  cand.data.run = NewRunRecord(vm.count("label") ? vm["label"].as<std::string>() : "gate", settings,
                               CommandLine("gate", args), GetDeviceBackend());
  CheckComparable(baseline, cand.data, policy);
  cand.data.run.id = store.BeginRun(cand.data.run);
  cand.data.run_ids = {cand.data.run.id};
  return cand;
}

}  // namespace

int GateCmd(const std::vector<std::string>& args) {
  const po::options_description desc = GateOptions();
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm, kUsage)) return kExitOk;
  if (!vm.count("baseline")) throw UsageError("missing --baseline NAME|FILE (a gate without a baseline never passes)");
  const std::string format =
      CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json", "junit", "none"});
  const std::string ref = vm["baseline"].as<std::string>();
  const Policy policy = LoadPolicy(vm.count("policy") ? vm["policy"].as<std::string>() : "");
  // A baseline name needs the database to exist; a file does not.
  auto store = OpenStore(vm, LooksLikeFile(ref) ? Store::Mode::kCreate : Store::Mode::kExisting);
  const RunData baseline = LoadRunData(store.get(), ref, "baseline");
  RunSettings recorded = RecordedSettings(baseline);
  const GatePlan looks = PlanFromFlags(vm, baseline, recorded.repetitions, policy);
  recorded.repetitions = looks.repetitions;
  RunSettings settings = ResolveSettings(vm, recorded, GetDeviceBackend());
  const auto variants = BaselineVariants(baseline, &settings);
  settings.data_dir = ResolveDataDir(vm, variants, settings.data_dir);
  settings.processes = looks.first;
  Candidate cand = BeginCandidate(vm, *store, settings, baseline, policy, args);
  const History history = LoadHistory(*store, baseline, cand.data);
  if (format == "table" && !vm.count("output"))
    std::cout << ContextLine(cand.data.run.fingerprint, settings) << "\n"
              << "gate: " << variants.size() << " variants from " << (baseline.source.empty() ? ref : baseline.source)
              << "; " << looks.first << " processes x " << settings.repetitions << " repetitions first ("
              << looks.sizing << "), up to " << looks.max_processes << " processes in " << 1 + looks.extra_rounds
              << " look(s), alpha " << looks.policy.alpha << " each\n"
              << std::flush;
  const Comparison c = RunRounds(*store, settings, baseline, history, variants, looks, &cand);
  store->FinishRun(cand.data.run.id, RunStatus::kComplete);
  cand.data.run = store->GetRun(cand.data.run.id);
  WriteComparisonReports(vm, format, c, baseline, cand.data);
  std::cerr << "gate: " << ToString(c.verdict) << " (candidate run " << cand.data.run.id << ")\n";
  return ComparisonExit(c, cand.failed, vm["allow-inconclusive"].as<bool>());
}

}  // namespace perfbench::cli
