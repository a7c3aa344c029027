// The control: a pinned, tiny GEMM and copy that every run measures at its
// start and end (RunSettings::control), so that compare and gate can tell a
// machine that moved from code that moved (Chromium runs a reference build
// beside every test for the same reason). Pinned: the same sizes,
// repetitions and Google Benchmark times whatever the run's flags, so only
// the machine (and --threads / --device) can change what it reads. About a
// second in all.
//
// control/gemm       fp32, n = 256: flops
// control/bandwidth  fp32 copy of 16 MiB: bandwidth (bytes read + written)
#include "kernels.h"
#include "micro_workload.h"

namespace perfbench::micro {
namespace {

class ControlGemm final : public KernelWorkload {
  bool Pinned() const override { return true; }
  Kernel Make(const Params&, const torch::Device& device) override { return Gemm(torch::kFloat32, 256, 256, 256, device); }
};

class ControlCopy final : public KernelWorkload {
  bool Pinned() const override { return true; }
  Kernel Make(const Params&, const torch::Device& device) override { return Copy(16LL << 20, device); }
};

// Pinned: 5 repetitions of at least 20 ms after 20 ms of warm-up.
void PinnedEngine(const RunSettings&, std::vector<EngineVariant>& variants) {
  EngineOptions o;
  o.repetitions = 5;
  o.min_time_s = 0.02;
  o.min_warmup_time_s = 0.02;
  RunMicroGroup(o, variants);
}

WorkloadInfo Info(const std::string& name, const std::string& description, const MetricSpec& rate,
                  const Params& params) {
  WorkloadInfo info;
  info.suite = "control";
  info.name = name;
  info.description = description;
  info.metrics = {{"time", "s", Better::kLower}, rate};
  info.variants = {params};
  info.hidden = true;
  info.engine = PinnedEngine;
  return info;
}

Params One(const std::string& key, const std::string& value) {
  Params p;
  p.Set(key, value);
  return p;
}

PERFBENCH_REGISTER_WORKLOAD(ControlGemm, Info("gemm", "pinned control: fp32 GEMM n=256, measured at a run's start and end",
                                              {"flops", "FLOP/s", Better::kHigher}, One("n", "256")));
PERFBENCH_REGISTER_WORKLOAD(ControlCopy, Info("bandwidth", "pinned control: 16 MiB fp32 copy, at a run's start and end",
                                              {"bandwidth", "B/s", Better::kHigher}, One("bytes", std::to_string(16LL << 20))));

}  // namespace
}  // namespace perfbench::micro
