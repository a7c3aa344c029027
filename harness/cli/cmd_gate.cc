// perfbench gate --baseline NAME|FILE: the nightly CI gate. Reruns what the
// baseline holds with its settings, compares, and when metrics are
// inconclusive adds repetitions to those workloads only, up to
// --max-repetitions, testing each look at alpha / K (K planned looks).
#include <cmath>
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

std::string VariantKey(const std::string& suite, const std::string& workload, const Params& p) {
  return suite + "/" + workload + "/" + p.Encode();
}
std::string ResultKey(const ResultRecord& r) { return VariantKey(r.suite, r.workload, r.params) + "\x1f" + r.metric; }

// Settings recorded with a perfbench run; UsageError when the baseline has none.
RunSettings SettingsOf(const RunData& b) {
  const auto& s = b.run.settings;
  if (!s.is_object() || !s.contains("repetitions") || !s.contains("quick"))
    throw UsageError("the baseline (" + (b.source.empty() ? "run " + std::to_string(b.run.id) : b.source) +
                     ") was not recorded by `perfbench run`; a gate needs perfbench workloads");
  RunSettings r;
  try {
    r.warmup_steps = s.value("warmup_steps", 3);
    r.repetitions = s.at("repetitions").get<int>();
    r.timeout_s = s.value("timeout_s", 300.0);
    r.seed = s.value("seed", uint64_t{42});
    r.quick = s.at("quick").get<bool>();
    r.device = s.value("device", std::string("auto"));
    r.threads = s.value("threads", 0);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("the baseline's settings are malformed: ") + e.what());
  }
  return r;
}

// Metrics a further round could decide: inconclusive or missing for lack of samples.
bool Undecided(const MetricVerdict& m) { return m.verdict == "inconclusive"; }

}  // namespace

int GateCmd(const std::vector<std::string>& args) {
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
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm,
             "usage: perfbench gate --baseline NAME|FILE [--max-repetitions N] [--policy FILE]\n"
             "                      [--format table|markdown|json|junit|none] [--output FILE]\n"
             "                      [--junit FILE] [--markdown FILE] [--json FILE] [--label L]\n"
             "                      [--repetitions N] [--warmup N] [--threads N] [--device D] [--seed N]\n"
             "                      [--timeout SECONDS] [--allow-inconclusive] [--db PATH]\n\n"
             "Runs the workload variants the baseline holds, with the baseline's settings (flags\n"
             "override them), stores the candidate run, and compares it with the baseline. Metrics\n"
             "still inconclusive get more repetitions, for their workloads only, round after round\n"
             "until decided or --max-repetitions. With K = planned looks (1 + extra rounds), every\n"
             "look tests at alpha/K and builds (1 - (1 - confidence)/K) intervals: a Bonferroni\n"
             "split, so the chance of a false verdict over all looks stays within the policy's.\n"
             "Exit 0 pass, 1 regression, 2 bad input / missing baseline / different hardware,\n"
             "3 metrics still inconclusive or missing, 4 a workload failed to run."))
    return kExitOk;
  if (!vm.count("baseline")) throw UsageError("missing --baseline NAME|FILE (a gate without a baseline never passes)");
  const std::string format =
      CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json", "junit", "none"});
  const std::string ref = vm["baseline"].as<std::string>();
  Policy policy = LoadPolicy(vm.count("policy") ? vm["policy"].as<std::string>() : "");

  // A baseline name needs the database to exist; a file does not.
  auto store = OpenStore(vm, LooksLikeFile(ref) ? Store::Mode::kCreate : Store::Mode::kExisting);
  const RunData baseline = LoadRunData(store.get(), ref, "baseline");
  DeviceBackend& backend = GetDeviceBackend();
  RunSettings base = SettingsOf(baseline);
  // The baseline's resolved device: keep it unless this machine cannot.
  const RunSettings settings = ResolveSettings(vm, base, backend);
  const int first = settings.repetitions;
  const int max_reps = vm.count("max-repetitions") ? vm["max-repetitions"].as<int>() : 2 * first;
  if (max_reps < first) throw UsageError("--max-repetitions must be at least the first round's " + std::to_string(first));

  // What the baseline holds, matched against this build's variants.
  std::set<std::string> wanted, suites;
  for (const auto& r : baseline.results) {
    wanted.insert(VariantKey(r.suite, r.workload, r.params));
    suites.insert(r.suite);
  }
  Selection sel;
  sel.quick = settings.quick;
  std::vector<VariantRef> variants;
  {
    Selection all;
    all.quick = settings.quick;
    all.suites.assign(suites.begin(), suites.end());
    // The baseline's --param / --world-sizes, so its variants exist here too.
    if (baseline.run.settings.contains("param_overrides") && baseline.run.settings["param_overrides"].is_object())
      for (const auto& [k, v] : baseline.run.settings["param_overrides"].items())
        if (v.is_array()) all.overrides.emplace_back(k, v.get<std::vector<std::string>>());
    std::vector<VariantRef> available;
    try {
      available = SelectVariants(all);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("the baseline names a suite this build lacks: ") + e.what());
    }
    for (const auto& v : available)
      if (wanted.count(VariantKey(v.workload->info.suite, v.workload->info.name, v.params))) variants.push_back(v);
    sel.suites = all.suites;
    sel.overrides = all.overrides;
  }
  if (variants.empty())
    throw UsageError("none of the baseline's " + std::to_string(wanted.size()) +
                     " variants exists in this build (see `perfbench list`)");

  RunSettings run_settings = settings;
  run_settings.data_dir = ResolveDataDir(vm, variants);
  // Refuse different hardware before spending time on a run.
  backend.SetThreads(settings.threads);
  std::string cmdline = "perfbench gate";
  for (const auto& a : args) cmdline += " " + a;
  RunData candidate;
  candidate.run = NewRunRecord(vm.count("label") ? vm["label"].as<std::string>() : "gate", settings, sel, cmdline,
                               backend);
  try {
    Compare(RunData{baseline.source, baseline.run, {}, {}}, candidate, policy, false);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  // Planned looks and the per-look levels.
  const int extra_rounds = (max_reps - first + first - 1) / first;
  const int looks = 1 + extra_rounds;
  Policy look_policy = policy;
  look_policy.alpha = policy.alpha / looks;
  look_policy.confidence = 1 - (1 - policy.confidence) / looks;

  const int64_t run_id = store->BeginRun(candidate.run);
  candidate.run.id = run_id;
  candidate.run_ids = {run_id};
  if (format == "table" && !vm.count("output"))
    std::cout << ContextLine(candidate.run.fingerprint, settings) << "\n"
              << "gate: " << variants.size() << " variants from " << (baseline.source.empty() ? ref : baseline.source)
              << "; up to " << looks << " look(s), alpha " << look_policy.alpha << " each\n"
              << std::flush;

  size_t failed = 0;
  const auto groups = GroupVariants(variants);
  candidate.results = ExecuteGroups(store.get(), run_id, run_settings, backend, groups, &failed);
  std::map<std::string, int> reps;  // per variant key
  for (const auto& v : variants) reps[VariantKey(v.workload->info.suite, v.workload->info.name, v.params)] = first;

  Comparison c = Compare(baseline, candidate, look_policy, false);
  for (int round = 1; round <= extra_rounds; ++round) {
    std::set<std::string> undecided;  // suite/workload of undecided metrics
    for (const auto& m : c.metrics)
      if (Undecided(m)) undecided.insert(m.suite + "/" + m.workload);
    std::vector<VariantGroup> again;
    for (const auto& g : groups)
      if (undecided.count(g.workload->info.suite + "/" + g.workload->info.name)) again.push_back(g);
    if (again.empty()) break;
    int have = 0;
    for (const auto& g : again)
      for (const auto& p : g.variants) have = std::max(have, reps[VariantKey(g.workload->info.suite, g.workload->info.name, p)]);
    const int more = std::min(first, max_reps - have);
    if (more <= 0) break;
    std::cerr << "gate: round " << round + 1 << ": " << undecided.size() << " workload(s) inconclusive, +" << more
              << " repetitions\n";
    RunSettings s = run_settings;
    s.repetitions = more;
    // Run into a scratch list, then grow the stored results in one transaction each.
    Runner runner(s, backend);
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < candidate.results.size(); ++i) index[ResultKey(candidate.results[i])] = i;
    runner.RunAll(again, [&](const std::vector<VariantOutcome>& outcomes) {
      std::vector<ResultRecord> grown;
      for (const auto& o : outcomes) {
        if (o.status == OutcomeStatus::kFailed) ++failed;
        for (auto& r : ToResultRecords(o)) {
          auto it = index.find(ResultKey(r));
          if (it == index.end()) {
            index[ResultKey(r)] = candidate.results.size();
            candidate.results.push_back(r);
            grown.push_back(r);
            continue;
          }
          ResultRecord& have_r = candidate.results[it->second];
          have_r.samples.insert(have_r.samples.end(), r.samples.begin(), r.samples.end());
          if (r.status == "failed") {
            have_r.status = "failed";
            have_r.reason = r.reason;
          }
          grown.push_back(have_r);
        }
        reps[VariantKey(o.variant.workload->info.suite, o.variant.workload->info.name, o.variant.params)] += more;
      }
      store->ReplaceResults(run_id, grown);
    });
    c = Compare(baseline, candidate, look_policy, false);
  }
  store->FinishRun(run_id, "complete");
  candidate.run = store->GetRun(run_id);

  // Reports.
  auto render = [&](const std::string& f, bool color) {
    return RenderComparison(f, c, baseline, candidate, color, /*only_changed=*/false);
  };
  if (vm.count("junit")) WriteAtomically(vm["junit"].as<std::string>(), render("junit", false), "--junit");
  if (vm.count("markdown")) WriteAtomically(vm["markdown"].as<std::string>(), render("markdown", false), "--markdown");
  if (vm.count("json")) WriteAtomically(vm["json"].as<std::string>(), render("json", false), "--json");
  if (format != "none") {
    if (vm.count("output"))
      WriteAtomically(vm["output"].as<std::string>(), render(format, false), "--output");
    else
      std::cout << render(format, StdoutIsTerminal());
  }
  std::cerr << "gate: " << c.verdict << " (candidate run " << run_id << ")\n";
  if (c.verdict == "regression") return kExitRegression;
  if (failed) return kExitRuntime;
  if (c.verdict == "inconclusive" && !vm["allow-inconclusive"].as<bool>()) return kExitInconclusive;
  return kExitOk;
}

}  // namespace perfbench::cli
