// Runner: executes variant groups with warm-up, interleaved timed repetitions,
// memory accounting, a time budget per variant, derived metrics and
// verification.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

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

struct ProgressEvent {
  size_t group_index = 0;  // 0-based
  size_t group_count = 0;
  std::string name;        // workload and shared params
  double elapsed_s = 0;    // since the runner started
};

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
  // RunContext::process_seed for the workloads this runner sets up.
  void set_process_seed(uint64_t seed) { process_seed_ = seed; }
  // Seconds spent in timed repetitions so far (all variants): with the
  // process's wall time, the costs the Kalibera-Jones allocation needs.
  double timed_s() const { return timed_s_; }

  // Runs one group. Never throws for workload errors: they become outcomes.
  std::vector<VariantOutcome> RunGroup(const VariantGroup& group);

  // Runs every group in order; `sink` gets each group's outcomes as soon as
  // the group finishes (so they can be stored before the next one starts).
  void RunAll(const std::vector<VariantGroup>& groups,
              const std::function<void(const std::vector<VariantOutcome>&)>& sink);

 private:
  RunSettings settings_;
  DeviceBackend& backend_;
  NowFn now_;
  ProgressFn progress_;
  uint64_t process_seed_ = 0;
  double timed_s_ = 0;
};

}  // namespace perfbench
