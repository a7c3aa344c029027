#include "profiling.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <memory>

namespace perfbench {
namespace {

class NullRecorder final : public StepRecorder {
 public:
  void SetStepSeconds(double) override {}
  void SetItemsProcessed(double) override {}
  void Add(std::string_view, double) override {}
};

// Runs `fn`, turning an exception into an error Status.
template <typename Fn>
Status Safely(const std::string& phase, Fn&& fn) {
  try {
    return fn().WithContext(phase);
  } catch (const std::exception& e) {
    std::string what = e.what();
    what.resize(std::min(what.find('\n'), what.size()));
    return Status::Error(phase + ": " + what);
  }
}

Status Steps(Workload& w, int count, DeviceBackend* profiling, const std::string& device) {
  NullRecorder rec;
  for (int i = 0; i < count; ++i) {
    if (profiling) profiling->ProfileStepBegin(i);
    Status st = w.RunStep(rec);
    if (profiling) {
      profiling->Synchronize(device);  // the step's device work inside its scope
      profiling->ProfileStepEnd();
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

void ProfileOne(ProfileOutcome& o, const RunSettings& s, DeviceBackend& backend, int steps, const std::string& dir) {
  const RunContext ctx{o.variant.params, s, 0, s.budget_s};  // --quick's soft budget
  // The math the runner measures this variant under (one variant at a time
  // here, so set once).
  const WorkloadInfo& info = o.variant.workload->info;
  backend.SetMathMode(info.math_mode ? info.math_mode(o.variant.params) : MathMode{});
  auto w = o.variant.workload->factory();
  Status st = Safely("set-up", [&] { return w->SetUp(ctx); });
  if (st.ok()) st = Safely("warm-up", [&] { return Steps(*w, s.warmup_steps, nullptr, s.device); });
  if (st.ok() && !backend.StartProfile(s.device)) st = Status::Error("this build cannot profile");
  if (st.ok()) {
    st = Safely("profiled step", [&] { return Steps(*w, steps, &backend, s.device); });
    std::string error;
    const std::string path = dir + "/" + TraceFileName(o.variant);
    if (!backend.StopProfile(path, &error) && st.ok()) st = Status::Error("writing the trace: " + error);
    if (st.ok()) o.trace = path, o.steps = steps;
  }
  Safely("tear-down", [&] {
    w->TearDown();
    return Status::Ok();
  });
  if (st.skipped()) o.status = ResultStatus::kSkipped, o.reason = st.message();
  if (!st.ok() && !st.skipped()) o.status = ResultStatus::kFailed, o.reason = st.message();
}

}  // namespace

std::string TraceFileName(const VariantRef& v) {
  std::string name = v.FullName();
  for (char& c : name) {
    if (c == '/') c = '_';
    else if (c == ':') c = '-';
    else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return name + ".json";
}

std::vector<ProfileOutcome> ProfileVariants(const std::vector<VariantRef>& variants, const RunSettings& settings,
                                            DeviceBackend& backend, int steps, const std::string& dir) {
  std::vector<ProfileOutcome> out;
  for (const auto& v : variants) {
    ProfileOutcome o;
    o.variant = v;
    if (std::string why = SkipReason(v, settings.device); !why.empty()) {
      o.status = ResultStatus::kSkipped, o.reason = why;
    } else if (v.workload->info.engine) {
      o.status = ResultStatus::kSkipped, o.reason = "measured by its own engine (Google Benchmark): not profiled";
    } else {
      ProfileOne(o, settings, backend, steps, dir);
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace perfbench
