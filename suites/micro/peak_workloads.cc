// Achievable peaks (`perfbench peak`): what this device really reaches, for
// utilisation figures that are honest (MFU against a datasheet overstates
// the headroom; an H100/H200 reaches about 790 of its 989 dense bf16
// TFLOP/s). After Stas Bekman's MAMF finder (ml-engineering,
// compute/accelerator/benchmarks/mamf-finder.py): sweep shapes, take the
// best.
//
// peak/gemm       params dtype (fp32 | bf16 | fp16 | fp8 | int8; the last
//                 two in the TN layout, where the device runs them, else
//                 skipped with the reason). Shapes: PeakGemmShapes
//                 (peak_sweep.h; --quick caps the largest), operands made
//                 on the device, each product's edge rows and columns
//                 checked against fp64 after it is timed.
// peak/bandwidth  params op (copy | add): fp32 arrays of PeakBandwidthMiB.
// Each shape (or size) is its own Google Benchmark run: warm-up, then 5
// repetitions of at least 0.1 s (3 of 0.05 s with --quick). A shape's figure
// is its median; the variant's samples are the best shape's repetitions
// (MAMF's "median" line), and the attributes name it ("shape"), the largest
// sample of any shape ("max", "max_shape": MAMF's maximum achievable), the
// sweep ("sweep": each shape's median) and what was left out and why
// ("left_out").
//
// The sweep's time budget: `perfbench peak --budget S` (the run's
// `--param budget=S`, default 60 s; see peak_sweep.h) split into shares per
// variant (a GEMM dtype a quarter, a bandwidth op an eighth), each capped by
// `run --timeout`. Shapes are tried in order of work; one starts only while
// the time the variant has spent plus its projection stays within its share:
// before its set-up, its call at the previous shape's rate; after it, the
// kernel's own estimate (GEMM: from its first rows). The first that does not
// fit ends the sweep. It also ends after a shape that fails (out of memory,
// a wrong product: the best so far stands) or whose call takes over 1 s
// (0.25 s with --quick: a slow emulated dtype's next shape is slower still).
// A variant with no shape that fits is skipped, naming its budget.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "kernels.h"
#include "micro_workload.h"
#include "peak_sweep.h"
#include "perfbench/statistics.h"

namespace perfbench::micro {
namespace {

// The steady clock in seconds: the sweep budget's clock.
double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The run's sweep budget: its last --param budget=S, else kDefaultBudgetS.
// Throws std::invalid_argument unless S is one positive number of seconds.
double BudgetSeconds(const RunSettings& settings) {
  double budget = kDefaultBudgetS;
  for (const auto& o : settings.overrides) {
    if (o.param != kBudgetParam) continue;
    const std::string v = o.values.size() == 1 ? o.values[0] : "";
    size_t used = 0;
    try {
      budget = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (v.empty() || used != v.size() || !std::isfinite(budget) || budget <= 0) {
      std::string given;
      for (const auto& x : o.values) given += (given.empty() ? "" : ",") + x;
      throw std::invalid_argument(std::string("--param ") + kBudgetParam + "=" + given +
                                  ": expected one positive number of seconds");
    }
  }
  return budget;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// One shape (or array size) of a sweep: its label, its work per call (FLOP
// or bytes moved, the unit of the rate), and how to make its kernel.
struct Candidate {
  std::string label;
  double work = 0;
  std::function<Kernel()> make;
};

// Sweeps one variant's shapes within its share of the budget, keeping the
// best median of `metric_`.
class PeakWorkload : public MicroWorkload {
 public:
  Status SetUp(const RunContext& ctx) override {
    settings_ = &ctx.settings;
    params_ = ctx.params;
    if (std::string why = Unsupported(DeviceFor(ctx.settings.device)); !why.empty()) return Status::Skipped(why);
    return Status::Ok();
  }
  std::vector<BenchCase> Cases() override { return {}; }
  std::map<std::string, std::string> Attributes() const override { return attributes_; }

  // Runs the sweep; fills `out` with the best shape's samples.
  void Sweep(EngineVariant& out) {
    const torch::Device device = DeviceFor(settings_->device);
    const std::vector<Candidate> candidates = Candidates(device);
    std::vector<std::string> labels;
    for (const auto& c : candidates) labels.push_back(c.label);
    const double total = BudgetSeconds(*settings_);
    SweepBudget budget(labels, std::min(total * share_, settings_->timeout_s), SteadySeconds);
    const EngineOptions o = Options();
    double prev_work = 0, prev_call = 0;
    while (!budget.Done()) {
      const Candidate& c = candidates[budget.Index()];
      if (!budget.Fits(MeasureSeconds(ProjectCall(c.work, prev_work, prev_call), o.repetitions, o.min_time_s))) break;
      CaseResult r;
      if (!MeasureShape(c, device, budget, &r)) break;
      budget.Advance();
      if (!r.error.empty() || r.samples.count(metric_) == 0 || r.samples.count("time") == 0) {
        AddToSweep(c.label + " failed: " + FirstLine(r.error.empty() ? "Google Benchmark reported nothing" : r.error));
        budget.End(c.label + " failed");
        break;
      }
      Record(c.label, r, out);
      prev_work = c.work;
      prev_call = stats::Median(r.samples.at("time"));
      if (prev_call > SlowestCall())
        budget.End(fmt::format("{}'s call took {:.3g} s, over {:g} s", c.label, prev_call, SlowestCall()));
    }
    Finish(budget, total, out);
  }

 protected:
  virtual std::vector<Candidate> Candidates(const torch::Device& device) = 0;
  // "" when the device runs this variant's kernels, else why not (skipped).
  virtual std::string Unsupported(const torch::Device&) { return ""; }
  bool quick() const { return settings_->quick; }
  std::string metric_;
  double share_ = 0;  // of the sweep budget
  Params params_;

 private:
  // Google Benchmark's times per shape (see the top of this file).
  EngineOptions Options() const {
    EngineOptions o;
    o.repetitions = quick() ? 3 : 5;
    o.min_time_s = quick() ? 0.05 : 0.1;
    o.min_warmup_time_s = quick() ? 0.05 : 0.1;
    return o;
  }
  double SlowestCall() const { return quick() ? 0.25 : 1.0; }

  // Makes and measures one shape. False, measuring nothing, when its
  // kernel's own call estimate no longer fits the budget (which ends the
  // sweep). A failure (out of memory, a wrong product) is `r`'s error.
  bool MeasureShape(const Candidate& c, const torch::Device& device, SweepBudget& budget, CaseResult* r) {
    const EngineOptions o = Options();
    try {
      Kernel kernel = c.make();
      if (!budget.Fits(MeasureSeconds(EstimateCall(kernel, device), o.repetitions, o.min_time_s))) return false;
      auto results = RunCases({CaseFor(c.label, kernel, device)}, o);
      *r = std::move(results[c.label]);
      if (r->error.empty() && kernel.check) kernel.check();  // what the timed calls produced
    } catch (const std::exception& e) {
      r->error = e.what();
    }
    return true;
  }

  void AddToSweep(const std::string& entry) { sweep_ += (sweep_.empty() ? "" : ", ") + entry; }

  // A measured shape: into the sweep, the best median and the largest sample.
  void Record(const std::string& label, const CaseResult& r, EngineVariant& out) {
    const std::vector<double>& values = r.samples.at(metric_);
    const double median = stats::Median(values);
    const double max = *std::max_element(values.begin(), values.end());
    AddToSweep(fmt::format("{} {:.4g}", label, median));
    if (median > best_) {
      best_ = median;
      out.samples = r.samples;
      attributes_["shape"] = label;
    }
    if (max > max_) {
      max_ = max;
      attributes_["max"] = fmt::format("{:.6g}", max);
      attributes_["max_shape"] = label;
    }
  }

  // The sweep's attributes, and the variant's status when nothing was measured.
  void Finish(const SweepBudget& budget, double total, EngineVariant& out) {
    attributes_["sweep"] = sweep_;
    attributes_["budget"] = fmt::format("{} of {} (--budget), {} spent", SweepBudget::Seconds(budget.budget_s()),
                                        SweepBudget::Seconds(total), SweepBudget::Seconds(budget.Spent()));
    if (!budget.LeftOut().empty()) attributes_["left_out"] = budget.LeftOutText();
    if (best_ >= 0) return;
    if (sweep_.empty()) {
      out.status = Status::Skipped("no shape fits: " + budget.Why());
    } else {
      out.status = Status::Error("no shape could be measured: " + sweep_);
    }
  }

  const RunSettings* settings_ = nullptr;
  std::map<std::string, std::string> attributes_;
  std::string sweep_;
  double best_ = -1, max_ = -1;
};

class PeakGemm final : public PeakWorkload {
 public:
  PeakGemm() {
    metric_ = "flops";
    share_ = kGemmShare;
  }

 private:
  // fp8 and int8 where the device runs them (fp8: CUDA compute capability 8.9).
  std::string Unsupported(const torch::Device& device) override {
    const auto dtype = ParseDtype(params_.Get("dtype"));
    return dtype == torch::kInt8 || dtype == torch::kFloat8_e4m3fn ? GemmUnsupported(dtype, device) : "";
  }
  std::vector<Candidate> Candidates(const torch::Device& device) override {
    std::vector<Candidate> c;
    const auto dtype = ParseDtype(params_.Get("dtype"));
    for (const GemmShape& s : PeakGemmShapes(device.is_cuda(), quick()))
      c.push_back({s.Text(), s.Flop(), [=] { return Gemm(dtype, s.m, s.n, s.k, device); }});
    return c;
  }
};

class PeakBandwidth final : public PeakWorkload {
 public:
  PeakBandwidth() {
    metric_ = "bandwidth";
    share_ = kBandwidthShare;
  }

 private:
  std::vector<Candidate> Candidates(const torch::Device& device) override {
    std::vector<Candidate> c;
    const bool add = params_.Get("op") == "add";
    for (int64_t mib : PeakBandwidthMiB(device.is_cuda(), quick())) {
      const double moved = (add ? 3.0 : 2.0) * static_cast<double>(mib << 20);  // STREAM's counting
      c.push_back({fmt::format("{} MiB", mib), moved,
                   [=] { return add ? Add(mib << 20, device) : Copy(mib << 20, device); }});
    }
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
  info.run_params = {kBudgetParam};
  info.engine = PeakEngine;
  return info;
}

PERFBENCH_REGISTER_WORKLOAD(PeakGemm, Info("gemm", "achievable GEMM FLOP/s: best median over a shape sweep (MAMF)",
                                           {"flops", "FLOP/s", Better::kHigher}, "dtype", {"fp32", "bf16", "fp16", "fp8", "int8"}));
PERFBENCH_REGISTER_WORKLOAD(PeakBandwidth, Info("bandwidth", "achievable memory bandwidth: best median over array sizes",
                                                {"bandwidth", "B/s", Better::kHigher}, "op", {"copy", "add"}));

}  // namespace
}  // namespace perfbench::micro
