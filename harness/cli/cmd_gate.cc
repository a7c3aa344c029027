// perfbench gate: the nightly CI gate. Parses options, loads the baseline
// (stored, file, or a rolling window), and prints; the plan, the rounds and
// the verdict are the core's (gate/gate.h).

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "cli.h"
#include "common.h"
#include "compare/compare.h"
#include "gate/gate.h"
#include "gate/window.h"
#include "perfbench/statistics.h"
#include "report/run_report.h"
#include "run_support.h"
#include "processes.h"
#include "sources.h"

namespace perfbench::cli {

// The interleaved form (gate_interleaved.cc): --reference-bin or --reference-model.
bool IsInterleavedGate(const std::vector<std::string>& args);
int InterleavedGateCmd(const std::vector<std::string>& args);

namespace {

constexpr const char* kUsage =
    "usage: perfbench gate --baseline NAME|FILE|label:NAME [--last N] [--anchor NAME|FILE]\n"
    "                      [--plan] [--processes K] [--max-processes N] [--max-seconds S] [--confirm K]\n"
    "                      [--require-mde] [--per-control] [--policy FILE] [--allow-inconclusive]\n"
    "                      [--format table|markdown|json|junit|none] [--output FILE]\n"
    "                      [--junit FILE] [--markdown FILE] [--json FILE] [--label L]\n"
    "                      [--repetitions N] [--warmup N] [--threads N] [--device D] [--seed N]\n"
    "                      [--timeout SECONDS] [--data-dir DIR] [--db PATH]\n"
    "       perfbench gate --reference-bin PATH | --reference-model FILE [run options] (interleaved;\n"
    "                      its options: perfbench gate --reference-bin --help)\n\n"
    "Two forms; every verdict names its kind. With --reference-bin or --reference-model (a pull\n"
    "request's build against main's, a new model file against the old one) the reference runs\n"
    "now, in processes alternating with the candidate's, and the machine's slow periods cancel:\n"
    "on a shared machine only this resolves a few percent (kind interleaved). With --baseline\n"
    "(nightlies, trends, a dedicated machine) it judges against numbers stored earlier (kind\n"
    "stored_baseline, or rolling_baseline for label:NAME), as follows.\n\n"
    "Runs the workload variants the baseline holds, with every setting the baseline recorded\n"
    "(flags override them), in fresh processes one after another, stores the candidate run and\n"
    "compares it with the baseline at the process level (Welch on process medians).\n\n"
    "--baseline label:NAME --last N (default 20) judges against the last N runs labelled NAME\n"
    "on this machine and conditions: only runs after the last change point `history` finds,\n"
    "only runs no gate rejected (or accepted with `baseline accept RUN`), never runs whose\n"
    "control moved; exit 3 with the reason when fewer than 5 remain. The candidate is labelled\n"
    "NAME (unless --label), so a nightly gate's passing runs roll into its window. --anchor\n"
    "names a pinned baseline judged beside it, so slow creep a window absorbs still shows.\n\n"
    "Before its first round the gate plans the candidate processes each judged metric needs\n"
    "for its detectable effect (80% power) to fall within the policy's mde (twice its limit by\n"
    "default), up to --max-processes (default 10) and --max-seconds; a second look adds the\n"
    "rest for workloads still inconclusive. Each of the K looks tests at alpha/K (Bonferroni).\n"
    "A regression the looks find must show again in --confirm fresh processes (default: as many\n"
    "as the first round, at least 3; 0: none), judged on their own (one-sided, p < 0.1), before\n"
    "it fails the gate; one they do not show is inconclusive (the processes of a round share\n"
    "the machine's moment, and a slow moment is not the code).\n"
    "--plan prints the plan and exits. Every verdict states its detectable effect; a pass\n"
    "that cannot resolve the policy's mde says so, and --require-mde makes that exit 3.\n"
    "Limits are the policy's, raised to each metric's noise floor learned from earlier runs.\n"
    "Exit 0 pass, 1 regression (confirmed), 2 bad input / missing baseline, 3 inconclusive\n"
    "(a regression not confirmed too), missing, too few runs for a rolling baseline, or\n"
    "(--require-mde) a pass that cannot resolve its mde, 4 a workload failed to run, 5 this\n"
    "machine is other hardware than the baseline's.\n\n"
    "What to run comes from the baseline: its variants, --quick, --suite, --filter, --param\n"
    "and the ddp launch are the recorded ones and are not options here; the options below\n"
    "override how they are measured.";

constexpr const char* kFromBaseline[] = {"quick", "suite", "filter", "param", "world-sizes", "comm-timeout",
                                          "no-control", "model-file", "nnodes", "node-rank", "nproc-per-node", "master-addr",
                                          "master-port"};

po::options_description GateOptions() {
  po::options_description desc("options");
  desc.add_options()("baseline", po::value<std::string>()->value_name("REF"),
                     "baseline name, a baseline export / show JSON file, or label:NAME (rolling)")
      ("last", po::value<int>()->value_name("N"), "label:NAME: judge against its last N usable runs (default 20)")
      ("anchor", po::value<std::string>()->value_name("NAME|FILE"),
       "a pinned baseline judged beside a rolling one (slow creep a window absorbs)")
      ("plan", po::bool_switch(), "print the plan (processes, looks, detectable effects) and exit")
      ("label", po::value<std::string>()->value_name("L"),
       "label stored with the candidate run (default: NAME of label:NAME, else gate)")
      ("processes", po::value<int>()->value_name("K"), "processes in the first round (default: planned for the policy's mde)")
      ("max-processes", po::value<int>()->value_name("N"), "most processes per variant over all rounds (default 10; a confirmation comes on top)")
      ("max-seconds", po::value<double>()->value_name("S"),
       "cap the planned processes at S seconds, at the baseline's seconds per process")
      ("confirm", po::value<int>()->value_name("K"),
       "fresh processes a regression must show again in to fail the gate (default: the first round's, at least 3; 0: none)")
      ("require-mde", po::bool_switch(), "exit 3 when a pass cannot resolve the policy's mde")
      ("per-control", po::bool_switch(),
       "judge throughput_per_control (throughput against the control block after each step: a machine-wide slowdown "
       "cancels) and report raw throughput as informational")
      ("policy", po::value<std::string>()->value_name("FILE"),
       "thresholds (default: $PERFBENCH_POLICY, else built-in defaults; see baselines/policy.json)")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"),
       "report on stdout: table | markdown | json | junit | none")
      ("output", po::value<std::string>()->value_name("FILE"), "write the --format report to FILE instead of stdout")
      ("junit", po::value<std::string>()->value_name("FILE"), "also write a JUnit XML report")
      ("markdown", po::value<std::string>()->value_name("FILE"),
       "also write a Markdown report (e.g. $GITHUB_STEP_SUMMARY)")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the JSON report (schema_version 5)")
      ("allow-inconclusive", po::bool_switch(), "exit 0 instead of 3 when metrics stay inconclusive");
  AddMeasureOptions(desc, true);
  AddDataDirOption(desc);
  AddWideOption(desc);
  AddDbOption(desc);
  // run's selection options, recognised only to say where they come from.
  for (const char* name : kFromBaseline) desc.add_options()(name, po::value<std::vector<std::string>>()->multitoken()->zero_tokens(), "");
  return desc;
}

// A run option a gate takes from its baseline: one line saying so.
void RefuseSelection(const po::variables_map& vm) {
  for (const char* name : kFromBaseline)
    if (vm.count(name))
      throw UsageError(std::string("--") + name + " is not a gate option: a gate runs what its baseline recorded "
                       "(variants, --quick, --suite, --filter, --param, --model-file, the ddp launch); it takes --repetitions, "
                       "--warmup, --threads, --device, --seed, --timeout, --data-dir and --processes");
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

// The baseline's variants as this build has them, less those it skipped
// everywhere (no samples to judge against: a variant its run's budget or
// --timeout found hopeless would otherwise run in full here).
std::vector<VariantRef> BaselineVariants(const RunData& baseline, RunSettings* s) {
  std::set<std::string> wanted, suites;
  for (const auto& r : baseline.results) {
    if (AroundRun(r.suite)) continue;  // measured around every run (records.h)
    if (r.status == ResultStatus::kSkipped && r.samples.empty()) continue;
    wanted.insert(VariantKey(r.suite, r.workload, r.params));
    suites.insert(r.suite);
  }
  if (wanted.empty()) throw UsageError("the baseline measured no variant (every one was skipped): nothing to gate");
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

double IsoSeconds(const std::string& iso) {
  struct tm t = {};
  if (iso.empty() || !strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &t)) return 0;
  return static_cast<double>(timegm(&t));
}

// The median wall time of one process of the baseline's stored runs (0: unknown).
double ProcessSeconds(Store* store, const RunData& baseline) {
  std::vector<double> per;
  for (int64_t id : baseline.run_ids) {
    const RunRecord r = store->GetRun(id);
    const double wall = IsoSeconds(r.finished_at) - IsoSeconds(r.started_at);
    const int processes = std::max(1, r.settings.value("processes", 1));
    if (wall > 0) per.push_back(wall / processes);
  }
  return per.empty() ? 0 : stats::Median(per);
}

// The newest run of a label, for the settings a rolling window's gate runs with.
RunData NewestOf(Store& store, const std::string& label) {
  const auto ids = store.RunsWithLabel(label);
  if (ids.empty())
    throw InconclusiveError("label '" + label + "' has no runs in " + store.path() + ": a rolling baseline needs at least " +
                            std::to_string(gate::kMinWindowRuns));
  RunData d;
  d.run = store.GetRun(ids.front());
  return d;
}

GatePlan PlanFromFlags(const po::variables_map& vm, Store* store, const RunData& baseline, int baseline_repetitions,
                       const Policy& policy) {
  for (const char* flag : {"processes", "max-processes"})
    if (vm.count(flag) && vm[flag].as<int>() < 1) throw UsageError(std::string("--") + flag + " must be at least 1");
  if (vm.count("max-seconds") && !(vm["max-seconds"].as<double>() > 0))
    throw UsageError("--max-seconds must be positive");
  if (vm.count("confirm") && vm["confirm"].as<int>() < 0) throw UsageError("--confirm must be 0 or more");
  PlanLimits limits;
  limits.first = vm.count("processes") ? vm["processes"].as<int>() : 0;
  limits.max_processes = vm.count("max-processes") ? vm["max-processes"].as<int>() : 0;
  limits.max_seconds = vm.count("max-seconds") ? vm["max-seconds"].as<double>() : 0;
  limits.process_seconds = store ? ProcessSeconds(store, baseline) : 0;
  limits.confirm = vm.count("confirm") ? vm["confirm"].as<int>() : -1;
  try {
    return PlanGate(baseline, baseline_repetitions, policy, limits);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// The store as a gate's process runner: fresh processes of this binary.
class StoreRunner final : public gate::ProcessRunner {
 public:
  StoreRunner(Store& store, const RunSettings& s, int64_t run_id) : store_(store), settings_(s), run_id_(run_id) {}
  size_t Run(const std::vector<std::string>& keys, int first, int count, int total) override {
    size_t failed = 0;
    const ProcessJob job{store_.path(), run_id_, settings_, keys};
    for (const auto& p : RunProcesses(job, first, count, total))
      failed += p.failed_variants + (p.failure.empty() ? 0 : 1);
    return failed;
  }
  std::vector<ResultRecord> Results() override { return store_.GetResults(run_id_); }

 private:
  Store& store_;
  const RunSettings& settings_;
  int64_t run_id_;
};

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

struct Baselines {
  RunData baseline;
  std::optional<RunData> anchor;
  std::string rolling_label;  // empty unless label:NAME
  std::vector<std::string> dropped;
};

// --baseline (a rolling window for label:NAME) and --anchor; `conditions`:
// the candidate's record (machine and settings a window must match).
Baselines LoadBaselines(const po::variables_map& vm, Store* store, const std::string& ref, const RunRecord& conditions,
                        const Policy& policy) {
  Baselines b;
  if (auto label = gate::RollingLabel(ref)) {
    const int last = vm.count("last") ? vm["last"].as<int>() : static_cast<int>(gate::kDefaultWindowRuns);
    try {
      auto w = gate::SelectWindow(*store, *label, static_cast<size_t>(std::max(last, 0)), conditions, policy);
      b.baseline = std::move(w.data);
      b.dropped = std::move(w.dropped);
    } catch (const gate::WindowError& e) {
      throw InconclusiveError(e.what());
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    b.rolling_label = *label;
  } else {
    if (vm.count("last")) throw UsageError("--last applies to --baseline label:NAME");
    b.baseline = LoadRunData(store, ref, "baseline");
  }
  if (vm.count("anchor")) b.anchor = LoadRunData(store, vm["anchor"].as<std::string>(), "anchor");
  return b;
}

void PrintHeader(const RunData& cand, const RunSettings& settings, const std::vector<VariantRef>& variants,
                 const Baselines& b, const GatePlan& plan) {
  std::cout << ContextLine(cand.run.fingerprint, settings) << "\n"
            << "gate: " << variants.size() << " variants from " << (b.baseline.source.empty() ? "run " + std::to_string(b.baseline.run.id) : b.baseline.source)
            << (b.anchor ? "; anchor " + (b.anchor->source.empty() ? "run " + std::to_string(b.anchor->run.id) : b.anchor->source) : "")
            << "\n" << plan.Describe() << "\n";
  for (const auto& d : b.dropped) std::cout << "baseline: left out " << d << "\n";
  std::cout << std::flush;
}

void PrintOutcome(const po::variables_map& vm, const std::string& format, const gate::GateOutcome& o,
                  const Baselines& b, const RunData& cand) {
  WriteComparisonReports(vm, format, o.comparison, b.baseline, cand);
  if (o.anchor && format == "table" && !vm.count("output")) {
    std::cout << "\nagainst the anchor:\n" << RenderComparison("table", *o.anchor, *b.anchor, cand, StdoutIsTerminal(), true);
  }
  std::cerr << "gate: " << DetectableHeadline(o.comparison, "this gate") << "\n";
  if (const std::string u = UnresolvedNote(o.comparison); !u.empty()) std::cerr << "gate: " << u << "\n";
  std::cerr << "gate: " << o.Verdict() << (o.anchor ? " (anchor: " + std::string(ToString(o.anchor->verdict)) + ")" : "")
            << " (" << ToString(o.comparison.kind) << "; candidate run " << cand.run.id << ", " << o.processes << " processes in " << o.rounds << " round(s)"
            << (o.confirm_processes ? fmt::format("; {} more to confirm: {} regression(s) shown again, {} not",
                                                  o.confirm_processes, o.confirmed, o.unconfirmed)
                                    : std::string())
            << ")\n";
}

}  // namespace

int GateCmd(const std::vector<std::string>& args) {
  if (IsInterleavedGate(args)) return InterleavedGateCmd(args);
  const po::options_description desc = GateOptions();
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm, kUsage)) return kExitOk;
  RefuseSelection(vm);
  if (!vm.count("baseline")) throw UsageError("missing --baseline REF (a gate without a baseline never passes)");
  const std::string format =
      CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json", "junit", "none"});
  const std::string ref = vm["baseline"].as<std::string>();
  const bool rolling = gate::RollingLabel(ref).has_value();
  Policy policy = LoadPolicy(vm.count("policy") ? vm["policy"].as<std::string>() : "");
  if (vm["per-control"].as<bool>()) policy.JudgePerControl();
  // A baseline name needs the database to exist; a file does not.
  auto store = OpenStore(vm, LooksLikeFile(ref) && !rolling ? Store::Mode::kCreate : Store::Mode::kExisting);
  // A rolling window is chosen for the candidate's conditions: those of the
  // label's newest run, with the flags applied.
  RunSettings recorded = RecordedSettings(rolling ? NewestOf(*store, *gate::RollingLabel(ref)) : LoadRunData(store.get(), ref, "baseline"));
  RunSettings settings = ResolveSettings(vm, recorded, GetDeviceBackend());
  const std::string label = vm.count("label") ? vm["label"].as<std::string>() : rolling ? *gate::RollingLabel(ref) : "gate";
  RunData cand;
  cand.run = NewRunRecord(label, settings, CommandLine("gate", args), GetDeviceBackend());
  const Baselines b = LoadBaselines(vm, store.get(), ref, cand.run, policy);
  recorded = RecordedSettings(b.baseline);
  const GatePlan plan = PlanFromFlags(vm, store.get(), b.baseline, recorded.repetitions, policy);
  recorded.repetitions = plan.repetitions;
  settings = ResolveSettings(vm, recorded, GetDeviceBackend());
  settings.run_budget_s = 0;  // the gate plans its own processes (--max-processes, --max-seconds)
  const auto variants = BaselineVariants(b.baseline, &settings);
  settings.data_dir = ResolveDataDir(vm, variants, settings.data_dir);
  settings.processes = plan.first;
  cand.run = NewRunRecord(label, settings, CommandLine("gate", args), GetDeviceBackend());
  CheckComparable(b.baseline, cand, policy);
  if (vm["plan"].as<bool>()) {
    PrintHeader(cand, settings, variants, b, plan);
    return kExitOk;
  }
  if (format == "table" && !vm.count("output")) PrintHeader(cand, settings, variants, b, plan);
  cand.run.id = store->BeginRun(cand.run);
  cand.run_ids = {cand.run.id};
  // A rolling window is its own history (it already left out what gates
  // rejected); otherwise the baseline's runs and earlier runs labelled alike.
  RunData for_history = cand;
  if (!b.rolling_label.empty()) for_history.run.label.clear();
  gate::GateInputs in{b.baseline, b.anchor, LoadHistory(*store, b.baseline, for_history), plan, {}};
  for (const auto& v : variants) in.variants.push_back(VariantKeyOf(v));
  in.kind = KindOf(ref, b.baseline);
  if (b.anchor) in.anchor_kind = KindOf(vm["anchor"].as<std::string>(), *b.anchor);
  StoreRunner runner(*store, settings, cand.run.id);
  const auto outcome = gate::RunGate(in, cand, runner, [](const std::string& line) { std::cerr << line << "\n"; });
  store->FinishRun(cand.run.id, RunStatus::kComplete, outcome.Verdict());
  cand.run = store->GetRun(cand.run.id);
  cand.results = runner.Results();
  PrintOutcome(vm, format, outcome, b, cand);
  return gate::GateExit(outcome, vm["allow-inconclusive"].as<bool>(), vm["require-mde"].as<bool>());
}

}  // namespace perfbench::cli
