// Runner: executes variant groups with warm-up, interleaved timed repetitions,
// memory accounting, derived metrics and verification.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "perfbench/backend.h"
#include "perfbench/settings.h"
#include "registry.h"

namespace perfbench {

enum class OutcomeStatus { kOk, kFailed, kSkipped };
const char* ToString(OutcomeStatus s);

// Everything measured for one variant.
struct VariantOutcome {
  VariantRef variant;
  OutcomeStatus status = OutcomeStatus::kOk;
  std::string reason;  // why failed or skipped; empty when ok
  std::map<std::string, std::vector<double>> samples;  // metric -> one value per repetition
  std::map<std::string, std::string> attributes;
};

struct ProgressEvent {
  size_t group_index = 0;  // 0-based
  size_t group_count = 0;
  std::string name;        // workload and shared params
  double elapsed_s = 0;    // since the runner started
};

class Runner {
 public:
  using ProgressFn = std::function<void(const ProgressEvent&)>;

  Runner(RunSettings settings, DeviceBackend& backend) : settings_(std::move(settings)), backend_(backend) {}
  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }

  // Runs one group. Never throws for workload errors: they become outcomes.
  std::vector<VariantOutcome> RunGroup(const VariantGroup& group);

  // Runs every group in order; `sink` gets each group's outcomes as soon as
  // the group finishes (so they can be stored before the next one starts).
  void RunAll(const std::vector<VariantGroup>& groups,
              const std::function<void(const std::vector<VariantOutcome>&)>& sink);

 private:
  RunSettings settings_;
  DeviceBackend& backend_;
  ProgressFn progress_;
};

}  // namespace perfbench
