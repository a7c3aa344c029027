// Runner: executes variant groups with warm-up, interleaved timed repetitions,
// memory accounting, a time budget per variant, derived metrics and
// verification.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "energy.h"
#include "perfbench/backend.h"
#include "perfbench/settings.h"
#include "registry.h"
#include "store/records.h"

namespace perfbench {

// Everything measured for one variant.
struct VariantOutcome {
  VariantRef variant;
  ResultStatus status = ResultStatus::kOk;
  // Why failed or skipped; for an ok variant cut short by its time budget,
  // what was cut and why. Empty otherwise.
  std::string reason;
  std::map<std::string, std::vector<double>> samples;  // metric -> one value per repetition
  std::map<std::string, std::string> attributes;
};

// Where a process's time went in one suite (or in all): its variants'
// set-up, their warm-up steps, their timed steps (an engine's whole
// measurement counts as timed), and the rest of the suite's groups
// (energy windows, derived metrics, verification, tear-down). wall_s is the
// groups' wall time, so other_s = wall_s - the three.
struct PhaseTimes {
  double setup_s = 0, warmup_s = 0, timed_s = 0, other_s = 0, wall_s = 0;
  void Add(const PhaseTimes& o) {
    setup_s += o.setup_s;
    warmup_s += o.warmup_s;
    timed_s += o.timed_s;
    other_s += o.other_s;
    wall_s += o.wall_s;
  }
};

// Sent when a group starts and after each step of it, so that a long group
// shows time moving.
struct ProgressEvent {
  size_t group_index = 0;  // 0-based
  size_t group_count = 0;
  std::string name;        // workload and shared params
  double elapsed_s = 0;    // since the runner started
  double group_elapsed_s = 0;  // since this group started
  // Steps done / steps planned in this group (warm-up and timed, of the
  // variants still running); 0 at its start.
  double group_fraction = 0;
  // Seconds left: this group's by its fraction, the others' at the mean of
  // the groups done; negative while nothing is known yet.
  double RemainingSeconds() const;
};

// Energy: after the timed steps (which interleave the variants), each
// variant that declares `energy` runs an untimed window of its own steps
// (energy_window.h) on its device's counter; energy is one sample, joules
// per step (energy_per_sample divides by the step's items), or the
// attribute "energy" says "unavailable: <why>".
//
// Time budget (RunSettings::timeout_s) per variant: the variant's own set-up
// and steps count, not its siblings'. After each warm-up round the runner
// projects the variant's remaining time from its median warm-up step; when
// the planned repetitions do not fit, it runs as many as fit (never fewer
// than RunSettings::kMinRepetitions; the reason says so) or skips the
// variant before timing it, naming the step time and the workload's known
// cause (WorkloadInfo::slow_cause). A variant that still overruns is
// recorded as failed with the samples it has; its siblings go on.
// Seconds on a monotonic clock (std::chrono::steady_clock); tests inject their own.
using NowFn = std::function<double()>;
double SteadyNow();

class Runner {
 public:
  using ProgressFn = std::function<void(const ProgressEvent&)>;

  Runner(RunSettings settings, DeviceBackend& backend, NowFn now = SteadyNow)
      : settings_(std::move(settings)), backend_(backend), now_(std::move(now)) {}
  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }
  // The energy counters (default MakeEnergyMeter); tests install a stand-in.
  using EnergyMeterFactory =
      std::function<std::unique_ptr<EnergyMeter>(const std::string& device, const std::string& pci_bus_id)>;
  void set_energy_meters(EnergyMeterFactory make) { make_meter_ = std::move(make); }
  // RunContext::process_seed for the workloads this runner sets up.
  void set_process_seed(uint64_t seed) { process_seed_ = seed; }
  // Variants (VariantRef::FullName) an earlier process of the same run
  // skipped, with its reason: skipped again before their set-up, so a step
  // too slow for the budget is paid once per run, not once per process.
  void set_known_skips(std::map<std::string, std::string> skips) { known_skips_ = std::move(skips); }
  // Seconds spent in timed repetitions so far (all variants): with the
  // process's wall time, the costs the Kalibera-Jones allocation needs.
  double timed_s() const { return timed_s_; }
  // Where this runner's time went so far, by suite.
  const std::map<std::string, PhaseTimes>& phase_times() const { return phase_times_; }

  // This process's share of the run's budget (RunSettings::run_budget_s), in
  // seconds from RunAll's start; 0: none. RunAll gives each group's variants
  // the time left over the variants left as their soft budget.
  void set_budget(double seconds) { budget_s_ = seconds; }

  // Runs one group. Never throws for workload errors: they become outcomes.
  // `share_s`: each variant's share of the run's budget; `process_budget_s`:
  // this process's share (0: none; see RunSettings::kRunBudgetS).
  std::vector<VariantOutcome> RunGroup(const VariantGroup& group, double share_s = 0, double process_budget_s = 0);

  // Runs every group in order; `sink` gets each group's outcomes as soon as
  // the group finishes (so they can be stored before the next one starts).
  void RunAll(const std::vector<VariantGroup>& groups,
              const std::function<void(const std::vector<VariantOutcome>&)>& sink);

 private:
  RunSettings settings_;
  DeviceBackend& backend_;
  NowFn now_;
  ProgressFn progress_;
  EnergyMeterFactory make_meter_;
  std::function<void(double)> group_tick_;  // RunAll's progress inside the running group
  uint64_t process_seed_ = 0;
  double budget_s_ = 0;
  double timed_s_ = 0;
  std::map<std::string, PhaseTimes> phase_times_;
  std::map<std::string, std::string> known_skips_;
};

}  // namespace perfbench
