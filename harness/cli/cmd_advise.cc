// perfbench advise: the source documents' first fixes measured on the
// selected workloads, before and after, and ranked by measured gain (see
// harness/src/advice_plan.h and advice.h). Every process is a stored
// `perfbench run`; rounds run the baseline and each trial once, in a seeded
// shuffled order, so that drift of the machine cancels in each pair.
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <tuple>

#include "advice.h"
#include "cli.h"
#include "common.h"
#include "perfbench/posix_fs.h"
#include "processes.h"
#include "run_support.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench advise [--suite S[,S]] [--filter REGEX] [--quick] [--knob K[,K]] [--rounds N]\n"
    "                        [--order-seed N] [--policy FILE] [--format table|markdown|json] [--db PATH]\n"
    "                        [run options]\n\n"
    "Measures the first fixes on the selected workloads, before and after, and ranks them by\n"
    "measured gain: mixed precision (amp: bf16, fp16), input workers and prefetch (dataloader),\n"
    "gradient accumulation at the same effective batch (amp: 2 and 4 micro-batches),\n"
    "channels-last (amp/cnn), quantisation (quant: int8), and intra-op threads (1, half and all\n"
    "of the library's default). The baseline is each selected variant at its workload's defaults\n"
    "(fp32, 0 workers, no accumulation...). Each round runs the baseline and every setting once,\n"
    "each as its own `perfbench run` process (stored, labelled advise/base and\n"
    "advise/<setting>), in a seeded shuffled order; each setting is judged on its rounds' pairs\n"
    "as `perfbench ab` does (Wilcoxon signed-rank, Hodges-Lehmann interval, Benjamini-Hochberg\n"
    "over each row's two metrics, the policy's limits) on the workload's throughput (or step\n"
    "time) and its memory. A --param on a knob is overridden: the baseline is the defaults.\n"
    "Rows: knob, setting, change with its 95% interval, gain (above 1 is better), verdict,\n"
    "memory change. The control is not measured (pairs in a round cancel the machine's drift).\n"
    "Exit 0 with a table, 4 when a process or a variant failed (the rest still ranked),\n"
    "2 on bad input.";

// 8 rounds: the smallest exact two-sided p of the signed-rank test is
// 2/256, small enough for Benjamini-Hochberg over a row's two metrics.
constexpr int kDefaultRounds = 8;

po::options_description AdviseOptions() {
  po::options_description desc("options");
  desc.add_options()
      ("suite", po::value<std::vector<std::string>>()->composing()->value_name("S[,S]"), "suites to advise on")
      ("filter", po::value<std::string>()->value_name("REGEX"), "only variants whose full name matches")
      ("quick", po::bool_switch(), "small sizes")
      ("knob", po::value<std::vector<std::string>>()->composing()->value_name("K[,K]"),
       "only these knobs (precision, accumulation, memory_format, workers, threads, ...)")
      ("rounds", po::value<int>()->default_value(kDefaultRounds)->value_name("N"),
       "rounds of processes (at least 6)")
      ("order-seed", po::value<uint64_t>()->default_value(1)->value_name("N"), "seed of the order within rounds")
      ("policy", po::value<std::string>()->value_name("FILE"), "thresholds (as compare and gate)")
      ("format", po::value<std::string>()->default_value("table")->value_name("F"), "table | markdown | json");
  AddMeasureOptions(desc, false);
  AddDistributedOptions(desc);
  AddDataDirOption(desc);
  AddWideOption(desc);
  AddDbOption(desc);
  return desc;
}

// The tokens of `args` (already validated against `desc`) that its
// processes get as they were typed, without the options advise sets itself
// (matched by their canonical names: abbreviations included).
std::vector<std::string> Forwarded(const std::vector<std::string>& args, const po::options_description& desc) {
  static const std::set<std::string> own{"filter", "knob", "rounds", "order-seed", "policy", "format", "db", "threads"};
  std::vector<std::string> out;
  for (const auto& o : po::command_line_parser(args).options(desc).run().options)
    if (!own.count(o.string_key)) out.insert(out.end(), o.original_tokens.begin(), o.original_tokens.end());
  return out;
}

std::string Escaped(const std::string& name) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(name, special, R"(\$&)");
}

// One kind of process of a round: the baseline or a trial.
struct Arm {
  std::string label;
  std::vector<std::string> argv;
  std::vector<std::optional<int64_t>> runs;  // per round; nullopt: it stored nothing
  std::string failure;                       // the first process failure, for the note
  bool failed_variants = false;              // a stored run holds a failed variant
};

Arm MakeArm(const std::string& label, const std::vector<std::string>& base, const std::vector<VariantRef>& variants,
            const std::vector<ParamOverride>& overrides, int threads) {
  Arm arm{label, base, {}, "", false};
  arm.argv.insert(arm.argv.begin() + 2, {"--label", label});
  std::string filter;
  for (const auto& v : variants) filter += (filter.empty() ? "" : "|") + Escaped(v.FullName());
  arm.argv.insert(arm.argv.end(), {"--filter", "^(" + filter + ")$"});
  for (const auto& o : overrides) arm.argv.insert(arm.argv.end(), {"--param", o.param + "=" + o.values.front()});
  if (threads > 0) arm.argv.insert(arm.argv.end(), {"--threads", std::to_string(threads)});
  return arm;
}

std::vector<VariantRef> Candidates(const Trial& t) {
  std::vector<VariantRef> out;
  for (const auto& v : t.variants)
    if (v.skip.empty()) out.push_back(v.candidate);
  return out;
}

}  // namespace

namespace {

// Each arm once per round, in a seeded shuffled order (a portable
// Fisher-Yates, as ab's).
void RunRounds(Store& store, std::vector<Arm>& arms, int rounds, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int r = 0; r < rounds; ++r) {
    std::vector<size_t> order(arms.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    for (size_t k = 0; k < order.size(); ++k) {
      Arm& arm = arms[order[k]];
      const StoredProcess p = RunStoredProcess(store, arm.argv, {}, arm.label);
      std::cerr << "round " << r + 1 << "/" << rounds << " (" << k + 1 << "/" << order.size() << "): " << arm.label
                << (p.failure.empty() ? "" : " " + p.failure) << "\n";
      if (p.exit_code == kExitUsage && r == 0)
        throw UsageError("`perfbench run` refused the arguments of " + arm.label + " (exit 2)");
      const bool ok = p.run_id && p.complete;
      arm.runs.push_back(ok ? std::optional<int64_t>(p.run_id) : std::nullopt);
      if (!ok && arm.failure.empty()) arm.failure = p.failure.empty() ? "stored no complete run" : p.failure;
      if (ok && store.GetRun(p.run_id).failed_results > 0) arm.failed_variants = true;
    }
  }
}

// The stored runs of an advise, each read once: every trial's rows read the
// baseline's runs again.
class StoredRuns {
 public:
  explicit StoredRuns(Store& store) : store_(store) {}
  const std::vector<ResultRecord>& Results(int64_t id) {
    auto it = results_.find(id);
    if (it == results_.end()) it = results_.emplace(id, store_.GetResults(id)).first;
    return it->second;
  }
  const RunRecord& Run(int64_t id) {
    auto it = runs_.find(id);
    if (it == runs_.end()) it = runs_.emplace(id, store_.GetRun(id)).first;
    return it->second;
  }

 private:
  Store& store_;
  std::map<int64_t, std::vector<ResultRecord>> results_;
  std::map<int64_t, RunRecord> runs_;
};

// The results of `run_id` that a trial judges (primary and memory metrics
// of its runnable variants, the candidate's when `candidate`), named as the
// baselines so that the two sides match.
std::vector<ResultRecord> Picked(StoredRuns& stored, int64_t run_id, const Trial& t, bool candidate) {
  std::vector<ResultRecord> out;
  for (ResultRecord r : stored.Results(run_id)) {
    for (const auto& tv : t.variants) {
      const VariantRef& v = candidate ? tv.candidate : tv.baseline;
      const WorkloadInfo& info = v.workload->info;
      if (!tv.skip.empty() || r.suite != info.suite || r.workload != info.name || !(r.params == v.params)) continue;
      if (r.metric != PrimaryMetric(info) && r.metric != MemoryMetric(info)) continue;
      r.params = tv.baseline.params;
      out.push_back(r);
      break;
    }
  }
  return out;
}

// The rounds where both arms stored a run, as pairs.
PairedData Pairs(StoredRuns& stored, const Trial& t, const Arm& base, const Arm& arm) {
  PairedData d;
  for (size_t r = 0; r < base.runs.size(); ++r) {
    if (!base.runs[r] || !arm.runs[r]) continue;
    d.a_pairs.push_back(Picked(stored, *base.runs[r], t, false));
    d.b_pairs.push_back(Picked(stored, *arm.runs[r], t, true));
    for (auto [id, data, list] : {std::tuple{*base.runs[r], &d.a, &d.a_pairs.back()},
                                  std::tuple{*arm.runs[r], &d.b, &d.b_pairs.back()}}) {
      data->results.insert(data->results.end(), list->begin(), list->end());
      data->run_ids.insert(data->run_ids.begin(), id);
      data->run = stored.Run(id);
    }
  }
  d.a.run_count = d.b.run_count = d.a_pairs.size();
  d.a.source = base.label;
  d.b.source = arm.label;
  return d;
}

// The row of one variant of a trial: judged on its own (its primary and
// memory metrics are the Benjamini-Hochberg family) when the trial's arm
// ran, else marked with the failure.
AdviceRow Judged(StoredRuns& stored, const Trial& trial, const TrialVariant& tv, const Arm& base, const Arm* arm,
                 const Policy& policy) {
  Trial one = trial;
  one.variants = {tv};
  Comparison c;
  PairedData d;
  std::string failure;
  if (arm && tv.skip.empty()) {
    d = Pairs(stored, one, base, *arm);
    try {
      c = ComparePaired(d, policy);
    } catch (const std::invalid_argument& e) {
      failure = e.what();
    }
  }
  AdviceRow row = AdviceRows(one, c).front();
  row.baseline_runs = d.a.run_ids;
  row.candidate_runs = d.b.run_ids;
  if (arm && !arm->failure.empty())
    row.note = (row.Measured() ? "some processes failed: " : "its processes failed: ") + arm->failure;
  if (!failure.empty()) row.note = failure;
  return row;
}

}  // namespace

int AdviseCmd(const std::vector<std::string>& args) {
  const po::options_description desc = AdviseOptions();
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm, kUsage)) return kExitOk;
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json"});
  const int rounds = vm["rounds"].as<int>();
  if (rounds < static_cast<int>(kMinPairs) || rounds > 1000)
    throw UsageError("--rounds must be in [" + std::to_string(kMinPairs) + ", 1000]");
  DeviceBackend& backend = GetDeviceBackend();
  RunSettings s = SelectionSettings(vm, backend);
  const std::vector<VariantRef> selected = SelectOrThrow(vm, &s);
  const std::vector<std::string> knobs =
      vm.count("knob") ? SplitCommas(vm["knob"].as<std::vector<std::string>>()) : std::vector<std::string>{};
  AdvicePlan plan;
  try {
    plan = PlanAdvice(selected, s, std::max(1, backend.Threads()), knobs);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (plan.baselines.empty()) throw UsageError("nothing to advise on: every selected variant is skipped here");
  const Policy policy = LoadPolicy(vm.count("policy") ? vm["policy"].as<std::string>() : "");
  auto store = OpenStore(vm, Store::Mode::kCreate);
  // Each arm of a round is one process (rounds are the replicates).
  std::vector<std::string> base{posix::SelfExe(), "run",          "--db",        store->path(), "--format",
                                "none",           "--no-control", "--processes", "1"};
  for (auto& a : Forwarded(args, desc)) base.push_back(a);
  const std::vector<ParamOverride> defaults = DefaultOverrides(plan);
  std::vector<Arm> arms{MakeArm("advise/base", base, plan.baselines, defaults, s.threads)};
  std::vector<const Trial*> armed;  // the trial of arms[i + 1]
  for (const auto& t : plan.trials) {
    if (!t.Runnable()) continue;
    std::vector<ParamOverride> overrides = defaults;
    overrides.insert(overrides.end(), t.overrides.begin(), t.overrides.end());  // the last of a param wins
    arms.push_back(MakeArm("advise/" + t.setting, base, Candidates(t), overrides, t.threads > 0 ? t.threads : s.threads));
    armed.push_back(&t);
  }
  std::vector<AdviceRow> rows = SkippedBaselineRows(plan);
  if (armed.empty()) {
    std::cerr << "advise: no setting can run here; nothing measured\n";
  } else {
    std::cerr << "advise: " << plan.baselines.size() << " baseline variant(s), " << plan.trials.size()
              << " setting(s), " << rounds << " rounds of " << arms.size() << " processes\n";
    RunRounds(*store, arms, rounds, vm["order-seed"].as<uint64_t>());
  }
  StoredRuns stored(*store);
  for (const auto& t : plan.trials) {
    const auto it = std::find(armed.begin(), armed.end(), &t);
    const Arm* arm = it == armed.end() ? nullptr : &arms[static_cast<size_t>(it - armed.begin()) + 1];
    for (const auto& tv : t.variants) rows.push_back(Judged(stored, t, tv, arms[0], arm, policy));
  }
  RankAdvice(rows);
  if (format == "json")
    std::cout << AdviceJson(rows, rounds).dump(2) << "\n";
  else
    std::cout << AdviceText(rows, rounds, format == "markdown");
  const bool failed = std::any_of(arms.begin(), arms.end(), [](const Arm& a) {
    return !a.runs.empty() && (!a.failure.empty() || a.failed_variants);
  });
  return failed ? kExitRuntime : kExitOk;
}

}  // namespace perfbench::cli
