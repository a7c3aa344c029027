#include "micro_workload.h"

namespace perfbench::micro {

Status MicroWorkload::Collect(const std::map<std::string, CaseResult>& by_case,
                              std::map<std::string, std::vector<double>>* samples) {
  if (by_case.size() != 1) return Status::Error("expected one Google Benchmark case, got " + std::to_string(by_case.size()));
  const CaseResult& r = by_case.begin()->second;
  if (!r.error.empty()) return Status::Error(r.error);
  *samples = r.samples;
  return Status::Ok();
}

Status MicroWorkload::RunStep(StepRecorder&) {
  return Status::Error("the micro suite is measured through Google Benchmark (WorkloadInfo::engine)");
}

EngineOptions OptionsFor(const RunSettings& settings) {
  EngineOptions o;
  o.repetitions = settings.repetitions;
  o.min_time_s = settings.quick ? 0.02 : 0.1;
  o.min_warmup_time_s = settings.quick ? 0.02 : 0.1;
  return o;
}

void RunMicroGroup(const EngineOptions& options, std::vector<EngineVariant>& variants) {
  std::vector<BenchCase> cases;
  std::vector<std::vector<std::string>> names(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    auto* w = dynamic_cast<MicroWorkload*>(variants[i].workload);
    if (w == nullptr) {
      variants[i].status = Status::Error("not a micro workload");
      continue;
    }
    for (BenchCase c : w->Cases()) {
      names[i].push_back(c.name);
      c.name = std::to_string(i) + ":" + c.name;  // unique across the group
      cases.push_back(std::move(c));
    }
  }
  if (cases.empty()) return;
  const auto results = RunCases(cases, options);
  for (size_t i = 0; i < variants.size(); ++i) {
    if (names[i].empty()) continue;
    std::map<std::string, CaseResult> mine;
    for (const auto& n : names[i]) {
      auto it = results.find(std::to_string(i) + ":" + n);
      CaseResult r = it != results.end() ? it->second : CaseResult{{}, "Google Benchmark reported nothing", 0};
      mine.emplace(n, std::move(r));
    }
    auto* w = static_cast<MicroWorkload*>(variants[i].workload);
    variants[i].status = w->Collect(mine, &variants[i].samples);
  }
}

GroupEngine MicroEngine() {
  return [](const RunSettings& settings, std::vector<EngineVariant>& variants) {
    RunMicroGroup(OptionsFor(settings), variants);
  };
}

}  // namespace perfbench::micro
