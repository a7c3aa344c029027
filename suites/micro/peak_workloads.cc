// Achievable peaks (`perfbench peak`): what this device really reaches, for
// utilisation figures that are honest (MFU against a datasheet overstates
// the headroom; an H100/H200 reaches about 790 of its 989 dense bf16
// TFLOP/s). After Stas Bekman's MAMF finder (ml-engineering,
// compute/accelerator/benchmarks/mamf-finder.py): sweep shapes, take the
// best.
//
// peak/gemm       params dtype (fp32 | bf16 | fp16). Shapes: on a GPU square
//                 n = 1024..16384 and (m, 4096, 4096) for m = 2048..20480 step
//                 2048 (MAMF's quick m-sweep); on the CPU square n = 128..2048.
//                 Each shape is its own Google Benchmark run (warm-up, then
//                 repetitions of at least min time); its figure is the
//                 median over repetitions; the achievable peak is the best
//                 shape's (MAMF's "median" line). Shapes are tried in order of
//                 work and the sweep stops after the first whose call takes
//                 longer than 1 s (0.25 s with --quick): a slow emulated dtype
//                 does not hold the run for minutes.
// peak/bandwidth  params op (copy | add): fp32 arrays of 256 MiB and 1 GiB
//                 (and 4 GiB on a GPU; STREAM's rule: far beyond the caches),
//                 best median. A shape or size that fails ends the sweep with
//                 the best so far (the sweep attribute says why it stopped).
// The result's samples are the best shape's repetitions; attributes name it
// ("shape": "4096x4096x4096") and list the sweep.
#include <fmt/format.h>

#include <algorithm>

#include "kernels.h"
#include "micro_workload.h"
#include "perfbench/statistics.h"

namespace perfbench::micro {
namespace {

struct Shape {
  int64_t m, n, k;
  std::string Text() const { return fmt::format("{}x{}x{}", m, n, k); }
};

std::vector<Shape> GemmShapes(bool cuda) {
  std::vector<Shape> s;
  if (!cuda) {
    for (int64_t n : {128, 256, 384, 512, 768, 1024, 1536, 2048}) s.push_back({n, n, n});
    return s;
  }
  for (int64_t n : {1024, 2048, 4096, 8192, 16384}) s.push_back({n, n, n});
  for (int64_t m = 2048; m <= 20480; m += 2048) s.push_back({m, 4096, 4096});
  std::sort(s.begin(), s.end(), [](const Shape& a, const Shape& b) { return a.m * a.n * a.k < b.m * b.n * b.k; });
  return s;
}

// Sweeps one variant's shapes, keeping the best median of `metric`.
class PeakWorkload : public MicroWorkload {
 public:
  Status SetUp(const RunContext& ctx) override {
    settings_ = &ctx.settings;
    params_ = ctx.params;
    return Status::Ok();
  }
  std::vector<BenchCase> Cases() override { return {}; }
  std::map<std::string, std::string> Attributes() const override { return attributes_; }

  // Runs the sweep; fills `out` with the best shape's samples.
  void Sweep(EngineVariant& out) {
    const torch::Device device = DeviceFor(settings_->device);
    EngineOptions o;
    o.repetitions = settings_->quick ? 3 : 5;
    o.min_time_s = settings_->quick ? 0.05 : 0.2;
    o.min_warmup_time_s = settings_->quick ? 0.05 : 0.2;
    const double slowest = settings_->quick ? 0.25 : 1.0;
    double best = -1;
    std::string sweep;
    for (const auto& [label, make] : Candidates(device)) {
      // A shape that fails (out of memory, a wrong product) ends the sweep;
      // the best so far stands, and the sweep says why it stopped.
      std::map<std::string, CaseResult> results;
      try {
        results = RunCases({CaseFor(label, make(), device)}, o);
      } catch (const std::exception& e) {
        results[label].error = e.what();
      }
      const CaseResult& r = results[label];
      if (!r.error.empty() || r.samples.count(metric_) == 0) {
        sweep += fmt::format("{}{} failed: {}", sweep.empty() ? "" : ", ", label, r.error.substr(0, r.error.find('\n')));
        break;
      }
      const double value = stats::Median(r.samples.at(metric_));
      sweep += fmt::format("{}{} {:.4g}", sweep.empty() ? "" : ", ", label, value);
      if (value > best) {
        best = value;
        out.samples = r.samples;
        attributes_["shape"] = label;
      }
      if (stats::Median(r.samples.at("time")) > slowest) break;
    }
    attributes_["sweep"] = sweep;
    if (best < 0) out.status = Status::Error("no shape could be measured: " + sweep);
  }

 protected:
  using Candidate = std::pair<std::string, std::function<Kernel()>>;
  virtual std::vector<Candidate> Candidates(const torch::Device& device) = 0;
  std::string metric_;
  Params params_;

 private:
  const RunSettings* settings_ = nullptr;
  std::map<std::string, std::string> attributes_;
};

class PeakGemm final : public PeakWorkload {
 public:
  PeakGemm() { metric_ = "flops"; }

 private:
  std::vector<Candidate> Candidates(const torch::Device& device) override {
    std::vector<Candidate> c;
    const auto dtype = ParseDtype(params_.Get("dtype"));
    for (const Shape& s : GemmShapes(device.is_cuda()))
      c.push_back({s.Text(), [=] { return Gemm(dtype, s.m, s.n, s.k, device); }});
    return c;
  }
};

class PeakBandwidth final : public PeakWorkload {
 public:
  PeakBandwidth() { metric_ = "bandwidth"; }

 private:
  std::vector<Candidate> Candidates(const torch::Device& device) override {
    std::vector<Candidate> c;
    const bool add = params_.Get("op") == "add";
    std::vector<int64_t> sizes = {256, 1024};
    if (device.is_cuda()) sizes.push_back(4096);  // far beyond an H200's 50 MB L2
    for (int64_t mib : sizes)
      c.push_back({fmt::format("{} MiB", mib), [=] { return add ? Add(mib << 20, device) : Copy(mib << 20, device); }});
    return c;
  }
};

void PeakEngine(const RunSettings&, std::vector<EngineVariant>& variants) {
  for (auto& v : variants) {
    try {
      static_cast<PeakWorkload*>(v.workload)->Sweep(v);
    } catch (const std::exception& e) {
      v.status = Status::Error(e.what());
    }
  }
}

WorkloadInfo Info(const std::string& name, const std::string& description, const MetricSpec& rate,
                  const std::string& key, const std::vector<std::string>& values) {
  WorkloadInfo info;
  info.suite = "peak";
  info.name = name;
  info.description = description;
  info.metrics = {{"time", "s", Better::kLower}, rate};
  for (const auto& v : values) {
    Params p;
    p.Set(key, v);
    info.variants.push_back(p);
  }
  info.hidden = true;
  info.engine = PeakEngine;
  return info;
}

PERFBENCH_REGISTER_WORKLOAD(PeakGemm, Info("gemm", "achievable GEMM FLOP/s: best median over a shape sweep (MAMF)",
                                           {"flops", "FLOP/s", Better::kHigher}, "dtype", {"fp32", "bf16", "fp16"}));
PERFBENCH_REGISTER_WORKLOAD(PeakBandwidth, Info("bandwidth", "achievable memory bandwidth: best median over array sizes",
                                                {"bandwidth", "B/s", Better::kHigher}, "op", {"copy", "add"}));

}  // namespace
}  // namespace perfbench::micro
