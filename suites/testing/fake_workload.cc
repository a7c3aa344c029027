// selftest/fake: a deterministic workload without torch, for CLI tests and
// smoke runs of the harness itself (hidden: runs only with --suite selftest).
//
//   mode:ok      step time 1 ms + 0.1% per step, 64 items per step
//   mode:throw   throws from its third timed step
//   mode:skip    reports itself as skipped at set-up
//   mode:slow    really sleeps 50 ms per step (for --timeout)
//
// selftest/paced: variants step_ms 1 (the reference) and 200 (mode:sleep, a
// second param for tests of param order) in one
// interleaved group, each really sleeping its step time: a budget (--timeout)
// that only the slow one exceeds shows the slow variant cut short or skipped
// while its sibling is kept; speedup is derived from step_time.
//
// selftest/noisy: a synthetic step time with two levels of noise, for the
// statistics of processes as replicates, reproducible (no clock involved):
// 10 ms times a per-process offset exp(b z) drawn from
// RunContext::process_seed, times exp(w z) per step, z standard normal;
// b and w are the params `between` and `within` (sd of log time), part of
// the variant's name, with defaults equal to what `run --suite amp --quick
// --filter mlp` showed on the 2-core EPYC (docs/verdicts.md): a test that
// lowers the noise says so in its variant. Times
// (1 + $PERFBENCH_SELFTEST_SLOWDOWN) when set: a planted slowdown that keeps
// the variant's identity, so that a gate or ab can be asked to find it.
// Its optional param step_scale (default 1; advise tries 0.5 and 2)
// multiplies the step time.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <stdexcept>
#include <thread>

#include "perfbench/workload.h"

namespace perfbench {
namespace {

class FakeWorkload final : public Workload {
 public:
  Status SetUp(const RunContext& ctx) override {
    mode_ = ctx.params.Get("mode");
    if (mode_ == "skip") return Status::Skipped("selftest variant that always skips");
    return Status::Ok();
  }
  Status RunStep(StepRecorder& rec) override {
    ++steps_;
    if (mode_ == "throw" && steps_ >= 3) throw std::runtime_error("selftest failure on purpose");
    if (mode_ == "slow") {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } else {
      rec.SetStepSeconds(1e-3 * (1.0 + 0.001 * steps_));
    }
    rec.SetItemsProcessed(64);
    rec.Add("checksum", static_cast<double>(steps_));
    return Status::Ok();
  }

 private:
  std::string mode_;
  int steps_ = 0;
};

WorkloadInfo Info() {
  WorkloadInfo info;
  info.suite = "selftest";
  info.name = "fake";
  info.description = "deterministic fake workload for testing the harness";
  info.metrics = {{"step_time", "s", Better::kLower},
                  {"throughput", "samples/s", Better::kHigher},
                  {"checksum", "1", Better::kHigher}};
  info.variants = Params::Product({{"mode", {"ok", "throw", "skip", "slow"}}});
  info.hidden = true;
  return info;
}

PERFBENCH_REGISTER_WORKLOAD(FakeWorkload, Info());

class PacedWorkload final : public Workload {
 public:
  Status SetUp(const RunContext& ctx) override {
    step_ = std::chrono::milliseconds(ctx.params.GetInt("step_ms", 1));
    return Status::Ok();
  }
  Status RunStep(StepRecorder& rec) override {
    std::this_thread::sleep_for(step_);
    rec.SetItemsProcessed(1);
    return Status::Ok();
  }

 private:
  std::chrono::milliseconds step_{1};
};

WorkloadInfo PacedInfo() {
  WorkloadInfo info;
  info.suite = "selftest";
  info.name = "paced";
  info.description = "a fast and a slow variant in one group, for time budgets";
  info.metrics = {{"step_time", "s", Better::kLower},
                  {"throughput", "samples/s", Better::kHigher},
                  {"speedup", "ratio", Better::kHigher}};
  info.variants = Params::Product({{"step_ms", {"1", "200"}}, {"mode", {"sleep"}}});
  info.compare_param = "step_ms";
  info.reference_value = "1";
  info.derived = {{"speedup", "step_time", DerivedMetric::Kind::kReferenceOverVariant}};
  info.slow_cause = [](const Params& p, const std::string&) -> std::string {
    return p.Get("step_ms") == "1" ? "" : "it sleeps on purpose";
  };
  info.hidden = true;
  return info;
}

PERFBENCH_REGISTER_WORKLOAD(PacedWorkload, PacedInfo());

// A number from the environment, or `fallback`; nullopt when malformed.
std::optional<double> EnvNumber(const char* name, double fallback) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  char* end = nullptr;
  const double v = std::strtod(e, &end);
  if (*end != 0 || !(v > -1 && v < 10)) return std::nullopt;
  return v;
}

// Measured on the 2-core EPYC, 20 default runs of `run --suite amp --quick
// --filter mlp` (3 processes of 3 repetitions each): sd of log process
// medians inside a run 15.8% (fp32), 14.0% (bf16), 1.8% (fp16); of log
// repetitions inside a process 7.5%, 6.7%, 1.6%. The defaults are the
// median metric's, bf16's (docs/verdicts.md).
constexpr const char* kBetween = "0.14";
constexpr const char* kWithin = "0.07";

class NoisyWorkload final : public Workload {
 public:
  static constexpr double kStepS = 0.010;
  Status SetUp(const RunContext& ctx) override {
    const double between = std::stod(ctx.params.Get("between", kBetween));
    within_ = std::stod(ctx.params.Get("within", kWithin));
    const auto slowdown = EnvNumber("PERFBENCH_SELFTEST_SLOWDOWN", 0.0);
    if (!slowdown) return Status::Error("PERFBENCH_SELFTEST_SLOWDOWN: expected a number in (-1, 10)");
    if (!(between >= 0 && between < 1) || !(within_ >= 0 && within_ < 1))
      return Status::Error("between and within: standard deviations of log time in [0, 1)");
    rng_.seed(ctx.process_seed);
    offset_ = std::exp(between * std::normal_distribution<double>()(rng_)) * (1 + *slowdown);
    const double scale = std::stod(ctx.params.Get("step_scale", "1"));
    if (!(scale > 0)) return Status::Error("step_scale must be positive");
    offset_ *= scale;
    return Status::Ok();
  }
  Status RunStep(StepRecorder& rec) override {
    rec.SetStepSeconds(kStepS * offset_ * std::exp(within_ * std::normal_distribution<double>()(rng_)));
    rec.SetItemsProcessed(32);
    return Status::Ok();
  }

 private:
  std::mt19937_64 rng_;
  double offset_ = 1, within_ = 0;
};

WorkloadInfo NoisyInfo() {
  WorkloadInfo info;
  info.suite = "selftest";
  info.name = "noisy";
  info.description = "synthetic step time: log-normal noise between processes and within, optional planted slowdown";
  info.metrics = {{"step_time", "s", Better::kLower}, {"throughput", "samples/s", Better::kHigher}};
  info.variants = Params::Product({{"model", {"synthetic"}}, {"between", {kBetween}}, {"within", {kWithin}}});
  // For advise's tests: an optional param that scales the step time.
  info.knobs = {{"step_scale", {{"step_scale", "1"}}, {{{"step_scale", "0.5"}}, {{"step_scale", "2"}}}}};
  info.hidden = true;
  return info;
}

PERFBENCH_REGISTER_WORKLOAD(NoisyWorkload, NoisyInfo());

// selftest/compute: real work on one CPU thread, timed by the runner's
// clock: a chain of kIterations dependent multiply-adds (about 5 ms on the
// 2-core Xeon), times (1 + $PERFBENCH_SELFTEST_SLOWDOWN), a planted code
// slowdown; a busy neighbour is a planted machine slowdown. It declares
// throughput_per_control, so the control block runs after each step: the
// tests of kThroughputPerControl through the real binary.
class ComputeWorkload final : public Workload {
 public:
  static constexpr int64_t kIterations = 3'000'000;
  Status SetUp(const RunContext&) override {
    const auto slowdown = EnvNumber("PERFBENCH_SELFTEST_SLOWDOWN", 0.0);
    if (!slowdown) return Status::Error("PERFBENCH_SELFTEST_SLOWDOWN: expected a number in (-1, 10)");
    iterations_ = static_cast<int64_t>(static_cast<double>(kIterations) * (1 + *slowdown));
    return Status::Ok();
  }
  Status RunStep(StepRecorder& rec) override {
    double x = x_;
    for (int64_t i = 0; i < iterations_; ++i) x = x * 0.999999 + 1e-6;
    x_ = x;  // kept: the chain cannot be optimised away
    rec.SetItemsProcessed(1);
    return Status::Ok();
  }

 private:
  int64_t iterations_ = kIterations;
  double x_ = 1;
};

WorkloadInfo ComputeInfo() {
  WorkloadInfo info;
  info.suite = "selftest";
  info.name = "compute";
  info.description = "real single-threaded CPU work, optional planted slowdown, with the control block after each step";
  info.metrics = {{"step_time", "s", Better::kLower}, {"throughput", "samples/s", Better::kHigher}, kThroughputPerControl};
  info.variants = Params::Product({{"work", {"fma3m"}}});
  info.hidden = true;
  return info;
}

PERFBENCH_REGISTER_WORKLOAD(ComputeWorkload, ComputeInfo());

}  // namespace
}  // namespace perfbench
