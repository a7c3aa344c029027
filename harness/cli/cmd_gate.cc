// perfbench gate --baseline NAME|FILE: the nightly CI gate. Reruns what the
// baseline holds with its settings, compares, and when metrics are
// inconclusive adds repetitions to those workloads only, up to
// --max-repetitions, testing each look at alpha / K (K planned looks).
#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "cli.h"
#include "common.h"
#include "compare/compare.h"
#include "report/run_report.h"
#include "run_support.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench gate --baseline NAME|FILE [--max-repetitions N] [--policy FILE]\n"
    "                      [--format table|markdown|json|junit|none] [--output FILE]\n"
    "                      [--junit FILE] [--markdown FILE] [--json FILE] [--label L]\n"
    "                      [--repetitions N] [--warmup N] [--threads N] [--device D] [--seed N]\n"
    "                      [--timeout SECONDS] [--data-dir DIR] [--allow-inconclusive] [--db PATH]\n\n"
    "Runs the workload variants the baseline holds, with every setting the baseline recorded\n"
    "(flags override them), stores the candidate run, and compares it with the baseline. Metrics\n"
    "still inconclusive get more repetitions, for their workloads only, round after round\n"
    "until decided or --max-repetitions. With K = planned looks (1 + extra rounds), every\n"
    "look tests at alpha/K and builds (1 - (1 - confidence)/K) intervals: a Bonferroni\n"
    "split, so the chance of a false verdict over all looks stays within the policy's.\n"
    "Exit 0 pass, 1 regression, 2 bad input / missing baseline / different hardware,\n"
    "3 metrics still inconclusive or missing, 4 a workload failed to run.";

po::options_description GateOptions() {
  po::options_description desc("options");
  desc.add_options()("baseline", po::value<std::string>()->value_name("NAME|FILE"),
                     "baseline name in the database, or a baseline export / show JSON file")
      ("label", po::value<std::string>()->value_name("L"), "label stored with the candidate run (default: gate)")
      ("max-repetitions", po::value<int>()->value_name("N"),
       "most repetitions per variant over all rounds (default: twice the first round's)")
      ("policy", po::value<std::string>()->value_name("FILE"),
       "thresholds (default: $PERFBENCH_POLICY, else built-in defaults; see baselines/policy.json)")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"),
       "report on stdout: table | markdown | json | junit | none")
      ("output", po::value<std::string>()->value_name("FILE"), "write the --format report to FILE instead of stdout")
      ("junit", po::value<std::string>()->value_name("FILE"), "also write a JUnit XML report")
      ("markdown", po::value<std::string>()->value_name("FILE"),
       "also write a Markdown report (e.g. $GITHUB_STEP_SUMMARY)")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the JSON report (schema_version 1)")
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

// Planned looks and the per-look levels (a Bonferroni split).
struct Looks {
  int first = 0, max_reps = 0, extra_rounds = 0;
  Policy policy;
};
Looks PlanLooks(const po::variables_map& vm, const RunSettings& s, const Policy& policy) {
  Looks l;
  l.first = s.repetitions;
  l.max_reps = vm.count("max-repetitions") ? vm["max-repetitions"].as<int>() : 2 * l.first;
  if (l.max_reps < l.first)
    throw UsageError("--max-repetitions must be at least the first round's " + std::to_string(l.first));
  l.extra_rounds = (l.max_reps - 1) / l.first;
  const int looks = 1 + l.extra_rounds;
  l.policy = policy;
  l.policy.alpha = policy.alpha / looks;
  l.policy.confidence = 1 - (1 - policy.confidence) / looks;
  return l;
}

// Groups of workloads with an inconclusive metric.
std::vector<VariantGroup> Undecided(const Comparison& c, const std::vector<VariantGroup>& groups) {
  std::set<std::string> undecided;
  for (const auto& m : c.metrics)
    if (m.verdict == Verdict::kInconclusive) undecided.insert(m.suite + "/" + m.workload);
  std::vector<VariantGroup> again;
  for (const auto& g : groups)
    if (undecided.count(g.workload->info.FullName())) again.push_back(g);
  return again;
}

struct Candidate {
  RunData data;
  Execution done;
};

// Further rounds while metrics stay inconclusive; each adds repetitions to
// the undecided workloads through the same run path as the first.
Comparison RunRounds(Store& store, const RunSettings& s, DeviceBackend& backend, const RunData& baseline,
                     const std::vector<VariantGroup>& groups, const Looks& looks, Candidate* cand) {
  Comparison c = Compare(baseline, cand->data, looks.policy, false);
  std::map<std::string, int> reps;  // per variant key
  for (const auto& g : groups)
    for (const auto& p : g.variants) reps[VariantKey(g.workload->info.suite, g.workload->info.name, p)] = looks.first;
  for (int round = 1; round <= looks.extra_rounds; ++round) {
    const auto again = Undecided(c, groups);
    int have = 0;
    for (const auto& g : again)
      for (const auto& p : g.variants) have = std::max(have, reps[VariantKey(g.workload->info.suite, g.workload->info.name, p)]);
    const int more = std::min(looks.first, looks.max_reps - have);
    if (again.empty() || more <= 0) break;
    std::cerr << "gate: round " << round + 1 << ": " << again.size() << " workload group(s) inconclusive, +" << more
              << " repetitions\n";
    RunSettings round_settings = s;
    round_settings.repetitions = more;
    ExecuteGroups(&store, cand->data.run.id, round_settings, backend, again, &cand->done);
    for (const auto& g : again)
      for (const auto& p : g.variants) reps[VariantKey(g.workload->info.suite, g.workload->info.name, p)] += more;
    cand->data.results = cand->done.results;
    c = Compare(baseline, cand->data, looks.policy, false);
  }
  return c;
}

void WriteReports(const po::variables_map& vm, const std::string& format, const Comparison& c, const RunData& a,
                  const RunData& b) {
  auto render = [&](const std::string& f, bool color) { return RenderComparison(f, c, a, b, color, false); };
  if (vm.count("junit")) WriteAtomically(vm["junit"].as<std::string>(), render("junit", false), "--junit");
  if (vm.count("markdown")) WriteAtomically(vm["markdown"].as<std::string>(), render("markdown", false), "--markdown");
  if (vm.count("json")) WriteAtomically(vm["json"].as<std::string>(), render("json", false), "--json");
  if (format == "none") return;
  if (vm.count("output"))
    WriteAtomically(vm["output"].as<std::string>(), render(format, false), "--output");
  else
    std::cout << render(format, StdoutIsTerminal());
}

int GateExit(const Comparison& c, size_t failed, bool allow_inconclusive) {
  if (c.verdict == Overall::kRegression) return kExitRegression;
  if (failed) return kExitRuntime;
  if (c.verdict == Overall::kInconclusive && !allow_inconclusive) return kExitInconclusive;
  return kExitOk;
}

// Refuses different hardware before spending time on a run.
void CheckComparable(const RunData& baseline, const RunData& candidate, const Policy& policy) {
  try {
    Compare(RunData{baseline.source, baseline.run, {}, {}}, candidate, policy, false);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
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
  DeviceBackend& backend = GetDeviceBackend();
  RunSettings settings = ResolveSettings(vm, RecordedSettings(baseline), backend);
  const auto variants = BaselineVariants(baseline, &settings);
  settings.data_dir = ResolveDataDir(vm, variants, settings.data_dir);
  const Looks looks = PlanLooks(vm, settings, policy);
  backend.SetThreads(settings.threads);
  Candidate cand;
  cand.data.run = NewRunRecord(vm.count("label") ? vm["label"].as<std::string>() : "gate", settings,
                               CommandLine("gate", args), backend);
  CheckComparable(baseline, cand.data, policy);
  cand.data.run.id = store->BeginRun(cand.data.run);
  cand.data.run_ids = {cand.data.run.id};
  if (format == "table" && !vm.count("output"))
    std::cout << ContextLine(cand.data.run.fingerprint, settings) << "\n"
              << "gate: " << variants.size() << " variants from " << (baseline.source.empty() ? ref : baseline.source)
              << "; up to " << 1 + looks.extra_rounds << " look(s), alpha " << looks.policy.alpha << " each\n"
              << std::flush;
  const auto groups = GroupVariants(variants);
  ExecuteGroups(store.get(), cand.data.run.id, settings, backend, groups, &cand.done);
  cand.data.results = cand.done.results;
  const Comparison c = RunRounds(*store, settings, backend, baseline, groups, looks, &cand);
  store->FinishRun(cand.data.run.id, RunStatus::kComplete);
  cand.data.run = store->GetRun(cand.data.run.id);
  WriteReports(vm, format, c, baseline, cand.data);
  std::cerr << "gate: " << ToString(c.verdict) << " (candidate run " << cand.data.run.id << ")\n";
  return GateExit(c, cand.done.failed, vm["allow-inconclusive"].as<bool>());
}

}  // namespace perfbench::cli
