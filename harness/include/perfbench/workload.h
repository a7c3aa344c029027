// The workload plug-in contract.
//
// A workload is one file under suites/<suite>/ that calls
// PERFBENCH_REGISTER_WORKLOAD. The runner owns warm-up, timing, device
// synchronisation, memory accounting, interleaving, statistics and storage;
// the workload supplies set-up, one step and a correctness check.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "perfbench/backend.h"
#include "perfbench/metrics.h"
#include "perfbench/params.h"
#include "perfbench/settings.h"
#include "perfbench/status.h"

namespace perfbench {

// A metric the runner derives from a group's reference variant (the one
// whose compare_param equals reference_value), per repetition i, paired:
//   kReferenceOverVariant   metric_i = from_i(reference) / from_i(variant)
//                           (speedup = reference step_time / step_time)
//   kVariantOverScaledReference
//                           metric_i = from_i(variant) / (k * from_i(reference)),
//                           k = compare_param(variant) / compare_param(reference)
//                           (scaling_efficiency = T(N) / (N * T(1))); the
//                           reference itself gets 1
//   kAbsDifference          metric_i = |from_i(variant) - from_i(reference)|
//                           (loss_delta)
// The metric must be declared in WorkloadInfo::metrics.
struct DerivedMetric {
  enum class Kind { kReferenceOverVariant, kVariantOverScaledReference, kAbsDifference };
  std::string metric;
  std::string from;
  Kind kind = Kind::kReferenceOverVariant;
  // The reference variant's compare_param value; empty: the workload's
  // reference_value (amp's speedup is over fp32, speedup_tf32 over tf32).
  std::string reference_value;
};

class Workload;

// A workload measured by an engine of its own (the micro suite hands its
// kernels to Google Benchmark's iteration, repetition and interleaving
// logic) instead of the runner's warm-up and step loop. The runner sets every
// variant of a group up as usual, calls the engine once with the live ones,
// then derives, verifies, reads attributes and tears down as usual. The
// engine fills each variant's samples (declared metrics only, one value per
// repetition) or sets its status to an error.
struct EngineVariant {
  Workload* workload = nullptr;
  const Params* params = nullptr;
  std::map<std::string, std::vector<double>> samples;
  Status status = Status::Ok();
};
using GroupEngine = std::function<void(const RunSettings& settings, std::vector<EngineVariant>& variants)>;

// One of the first fixes `perfbench advise` measures on a workload (mixed
// precision, input workers and prefetch, gradient accumulation, channels-last):
// `defaults` is what a baseline runs with, each of `settings` one change tried
// against it, in separate processes. A param of `defaults` that the declared
// variants lack is optional: a variant without it runs at that default, and
// `--param KEY=V` adds it (a value equal to the default leaves it out, so the
// variant keeps its name).
struct Knob {
  std::string name;              // "precision", "gradient accumulation"
  Params defaults;               // "precision:fp32"; "accumulation:1"
  std::vector<Params> settings;  // "precision:bf16", "precision:fp16"
};

// What a workload *is*. Every field changes what the numbers mean, so none of
// them can be overridden by flags or environment variables.
struct WorkloadInfo {
  std::string suite;        // "amp"
  std::string name;         // "mlp"; full variant key "amp/mlp/precision:bf16/size:full"
  std::string description;  // one line for `perfbench list`
  // "cuda": variant skipped where unmet; "data": uses the dataset cache
  // (--data-dir, checked writable before the run).
  std::vector<std::string> needs;
  std::vector<MetricSpec> metrics;  // every metric a result may carry
  std::vector<Params> variants;        // default (realistic) sizes
  std::vector<Params> quick_variants;  // --quick sizes; empty: same as variants
  // Optional: variants that come from the run's settings instead (the model
  // suite's, one per --model-file and scenario); when set, variants and
  // quick_variants are not used. Must not throw: a file it cannot read still
  // gets a variant, whose set-up fails naming it.
  std::function<std::vector<Params>(const RunSettings&)> settings_variants;
  // Variants that differ only in `compare_param` form one group: they are set
  // up together and stepped interleaved (A B C A B C ...), so drift of the
  // machine hits all of them alike. Empty: every variant is its own group.
  std::string compare_param;
  // The value of compare_param the others are compared with (see DerivedMetric).
  std::string reference_value;
  std::vector<DerivedMetric> derived;
  // The param that sets the number of ranks, for multi-rank workloads
  // ("world_size"): --world-sizes overrides it, and a launched run (torchrun,
  // SLURM, manual) runs only workloads that have one, at the launch's size.
  std::string rank_param;
  // Optional: why a variant cannot run on `device` ("cpu"/"cuda"); "" if it can.
  std::function<std::string(const Params&, const std::string& device)> skip_reason;
  // Optional: a known cause for a slow variant on `device` ("no native bf16 on
  // this CPU"), named when the time budget cuts the variant short; "" if none.
  std::function<std::string(const Params&, const std::string& device)> slow_cause;
  // Suites marked hidden run only when named with --suite (self-tests, the
  // control, the peak sweep).
  bool hidden = false;
  // Optional: see EngineVariant. Empty: the runner's own step loop.
  GroupEngine engine;
  // What `perfbench advise` tries on this workload (see Knob).
  std::vector<Knob> knobs;
  // Optional params beyond the knobs' (see Knob): read by the workload, not
  // declared by its variants, with the default a variant without one runs
  // at. `--param KEY=V` adds one (a value equal to the default leaves it
  // out, so the variant keeps its name); a key that no selected workload
  // declares, takes as optional or as a run param is refused (exit 2).
  std::map<std::string, std::string> optional_params;
  // Optional: params the workload reads from the run's settings
  // (RunSettings::overrides) and no variant carries: the peak sweep's
  // `--param budget=S`. Not part of any variant's identity.
  std::vector<std::string> run_params;
  // Optional: params whose value depends on the device the run is on (a
  // per-device default batch: 256 images on a GPU, 32 on a CPU), added to
  // each declared variant that lacks them before --param overrides apply.
  // They are part of the variant's identity, like any declared param.
  std::function<Params(const Params& declared, const std::string& device)> device_params;
  // Optional: the math a variant runs under (strict IEEE fp32, no cuDNN
  // autotuning, when empty). The runner sets it before each of the variant's
  // calls (variants of a group interleave) and stores what the library then
  // holds as the result attribute "math_mode". A group measured by an engine
  // runs under its first live variant's mode; its variants must agree.
  std::function<MathMode(const Params&)> math_mode;

  std::string FullName() const { return suite + "/" + name; }
  const MetricSpec* FindMetric(std::string_view metric) const;
  // The default of an optional param (see Knob), or nullptr when `param` is
  // not one.
  const std::string* OptionalDefault(const std::string& param) const;
};

// Everything a workload may read about the run it is part of.
struct RunContext {
  const Params& params;          // this variant's values
  const RunSettings& settings;   // the run's settings, device resolved ("cpu" or "cuda")
  // Differs between the processes of a run and between runs (a hash of the
  // run's id and the process index): for workloads that simulate what varies
  // from process to process (selftest/noisy). Workloads that seed weights
  // and data use settings.seed, the same in every process.
  uint64_t process_seed = 0;
  // The soft budget of this variant's steps: --quick's per variant
  // (RunSettings::budget_s) or its share of the run's budget, whichever is
  // smaller; 0: none. A workload bounds what else a slow variant would spend
  // in set-up (a calibration) by it.
  double budget_s = 0;
  // This process's share of the run's budget (RunSettings::kRunBudgetS); 0:
  // none. A variant whose fewest steps would take more than a quarter of it
  // is hopeless here: the runner skips such a variant after its first
  // warm-up step (never its group's reference), an engine's workload (micro)
  // at set-up from its estimate.
  double process_budget_s = 0;
  // The rule above, in one place: `seconds` of a variant's fewest steps
  // exceed a quarter of this process's share.
  bool Hopeless(double seconds) const { return process_budget_s > 0 && seconds > process_budget_s / 4; }
};

// Receives one timed step's measurements.
class StepRecorder {
 public:
  virtual ~StepRecorder() = default;
  // Overrides the runner's clock for this step (e.g. a time the workload
  // measured itself); seconds.
  virtual void SetStepSeconds(double seconds) = 0;
  // Items (samples, images, tokens) processed by this step. The runner turns
  // it into `throughput` = items / step_time when that metric is declared.
  virtual void SetItemsProcessed(double items) = 0;
  // `metric` must be declared in WorkloadInfo::metrics.
  virtual void Add(std::string_view metric, double value) = 0;
};

// Read-only view of one variant's recorded samples, for Verify, and of its
// group's reference variant's (the one whose compare_param is
// reference_value; null for the reference itself, or when it recorded
// nothing): a reduced precision checks its loss against fp32's.
struct VerifyContext {
  const std::map<std::string, std::vector<double>>& samples;
  const std::map<std::string, std::vector<double>>* reference = nullptr;
};

// Lifecycle, called by the runner in this order:
//   SetUp; RunStep x warmup_steps (discarded); RunStep x repetitions
//   (recorded); Verify; TearDown.
// Exceptions thrown from any of them are caught and recorded as a failure.
// An attribute a workload sets on a variant that --quick ran smaller than
// asked, by time (fewer queries, samples or calibration batches for an
// emulated precision): the runner also appends it to the reason of a result
// that ran (ok), so the table shows it beside the runner's own quick-budget cuts.
inline constexpr char kQuickBoundAttribute[] = "quick_bound";

class Workload {
 public:
  virtual ~Workload() = default;
  // Untimed. Build model, data, optimiser. Status::Skipped if it cannot run here.
  virtual Status SetUp(const RunContext& ctx) = 0;
  // Timed. Need not synchronise the device: the runner does before reading
  // the clock.
  virtual Status RunStep(StepRecorder& rec) = 0;
  // Untimed. Correctness of what was measured (loss parity, accuracy).
  virtual Status Verify(const VerifyContext& ctx) {
    (void)ctx;
    return Status::Ok();
  }
  // Facts about the result worth storing with it ("qengine": "x86").
  virtual std::map<std::string, std::string> Attributes() const { return {}; }
  virtual void TearDown() {}
};

using WorkloadFactory = std::function<std::unique_ptr<Workload>()>;

// A hidden subcommand a suite provides (e.g. the ddp suite's rank worker,
// which perfbench starts as `perfbench __ddp-worker ...`). Returns the exit code.
using InternalCommand = std::function<int(const std::vector<std::string>& args)>;
bool RegisterInternalCommand(const std::string& name, InternalCommand command);
const InternalCommand* FindInternalCommand(const std::string& name);

// Adds a workload to the process-wide registry; returns true. Called from
// static initialisers, so it must not depend on other statics.
bool RegisterWorkload(WorkloadInfo info, WorkloadFactory factory);

}  // namespace perfbench

#define PERFBENCH_CONCAT_INNER_(a, b) a##b
#define PERFBENCH_CONCAT_(a, b) PERFBENCH_CONCAT_INNER_(a, b)

// PERFBENCH_REGISTER_WORKLOAD(MyWorkload, MakeInfo()) in exactly one .cc file.
#define PERFBENCH_REGISTER_WORKLOAD(Type, info)                                      \
  [[maybe_unused]] static const bool PERFBENCH_CONCAT_(perfbench_registered_, Type) = \
      ::perfbench::RegisterWorkload((info), []() -> std::unique_ptr<::perfbench::Workload> { \
        return std::make_unique<Type>();                                             \
      })
