// The runner with deterministic fake workloads and a fake backend.
#include "runner.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <memory>
#include <stdexcept>

namespace perfbench {
namespace {

// A backend whose memory counters the fake workloads move by hand.
class FakeBackend final : public DeviceBackend {
 public:
  std::string Name() const override { return "fake"; }
  bool Memory(const std::string&, int64_t* current, int64_t* peak) override {
    if (memory_throws) throw std::runtime_error("Invalid device argument 0: did you call init?");
    *current = current_;
    *peak = peak_;
    return true;
  }
  void ResetPeakMemory(const std::string&) override { peak_ = current_; }
  // A device fault that surfaces when the step's events are read, as a
  // CUDA device-side assert does.
  double EndStep(const std::string&) override {
    if (++end_steps == end_step_throws_at) throw std::runtime_error("CUDA error: device-side assert triggered");
    return -1;
  }
  double ControlBlock(const std::string&) override { return control_s; }
  double control_s = -1;  // the control block's seconds; negative: none
  int end_steps = 0, end_step_throws_at = -1;
  bool memory_throws = false;
  void Allocate(int64_t n) {
    current_ += n;
    peak_ = std::max(peak_, current_);
  }
  int64_t current_ = 0, peak_ = 0;
};

// Everything the scripted workloads did, in order.
struct Script {
  std::vector<std::string> log;  // "<variant>:<phase>"
  FakeBackend* backend = nullptr;
  int throw_at_step = -1;        // for variant "bad"
  bool skip_bad = false;
  // A fake clock: each step of a variant advances it by that variant's
  // seconds ("slow": slow_s, others fast_s); set-up costs nothing.
  double now = 0;
  double fast_s = 0, slow_s = 0;
  bool verify_fails = false;
  bool undeclared = false;
  double step_scale = 1;  // multiplies every step's seconds
};

class Scripted final : public Workload {
 public:
  explicit Scripted(Script* s) : s_(s) {}
  Status SetUp(const RunContext& ctx) override {
    name_ = ctx.params.Get("v");
    s_->log.push_back(name_ + ":setup");
    if (name_ == "bad" && s_->skip_bad) return Status::Skipped("not here");
    if (name_ == "setupfail") throw std::runtime_error("no device");
    if (s_->backend) s_->backend->Allocate(100);  // persistent: weights
    return Status::Ok();
  }
  Status RunStep(StepRecorder& rec) override {
    ++steps_;
    s_->log.push_back(name_ + ":step" + std::to_string(steps_));
    if (name_ == "bad" && steps_ == s_->throw_at_step) throw std::runtime_error("boom");
    s_->now += name_ == "slow" ? s_->slow_s : s_->fast_s;
    if (s_->backend) {
      s_->backend->Allocate(50);  // transient activations
      s_->backend->Allocate(-50);
    }
    // "ref" takes 2 ms per step, every other variant 1 ms.
    rec.SetStepSeconds((name_ == "ref" ? 2e-3 : 1e-3) * s_->step_scale);
    rec.SetItemsProcessed(10);
    rec.Add("step_index", steps_);
    rec.Add("loss", name_ == "ref" ? 1.0 : 1.25);
    if (s_->undeclared) rec.Add("nonsense", 1);
    return Status::Ok();
  }
  Status Verify(const VerifyContext&) override {
    s_->log.push_back(name_ + ":verify");
    return s_->verify_fails ? Status::Error("wrong answer") : Status::Ok();
  }
  void TearDown() override { s_->log.push_back(name_ + ":teardown"); }

 private:
  Script* s_;
  std::string name_;
  int steps_ = 0;
};

RegisteredWorkload Make(Script* s, std::vector<std::string> names) {
  RegisteredWorkload w;
  w.info.suite = "t";
  w.info.name = "scripted";
  w.info.metrics = {{"step_time", "s", Better::kLower},     {"throughput", "samples/s", Better::kHigher},
                    {"step_index", "1", Better::kHigher},   {"loss", "1", Better::kLower},
                    {"loss_delta", "1", Better::kLower},    {"speedup", "ratio", Better::kHigher},
                    {"peak_memory", "bytes", Better::kLower}};
  w.info.variants = Params::Product({{"v", names}});
  w.info.compare_param = "v";
  w.info.reference_value = "ref";
  w.info.derived = {{"speedup", "step_time", DerivedMetric::Kind::kReferenceOverVariant},
                    {"loss_delta", "loss", DerivedMetric::Kind::kAbsDifference}};
  w.factory = [s] { return std::make_unique<Scripted>(s); };
  return w;
}

VariantGroup Group(const RegisteredWorkload& w) { return {&w, w.info.variants}; }

NowFn ClockOf(Script* s) {
  return [s] { return s->now; };
}

RunSettings Settings(int warmup, int reps) {
  RunSettings s;
  s.device = "cpu";
  s.warmup_steps = warmup;
  s.repetitions = reps;
  return s;
}

TEST(Runner, DiscardsWarmupAndRecordsEachRepetition) {
  Script s;
  auto w = Make(&s, {"ref"});
  FakeBackend backend;
  Runner runner(Settings(3, 5), backend);
  auto out = runner.RunGroup(Group(w));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, ResultStatus::kOk);
  // Steps 1..3 were warm-up; the recorded ones are 4..8.
  EXPECT_EQ(out[0].samples.at("step_index"), (std::vector<double>{4, 5, 6, 7, 8}));
  EXPECT_EQ(out[0].samples.at("step_time").size(), 5u);
  EXPECT_DOUBLE_EQ(out[0].samples.at("throughput")[0], 10 / 2e-3);
}

// The control block after each timed step (kThroughputPerControl): a machine
// that runs slower slows the step and the block alike and the metric stays;
// a slower step alone (the code) moves it.
TEST(Runner, TheControlBlockCancelsAMachineSlowdownButNotACodeSlowdown) {
  const auto run = [](double machine, double code, bool control) {
    Script s;
    s.step_scale = machine * code;
    FakeBackend backend;
    backend.control_s = 1e-3 * machine;
    auto w = Make(&s, {"ref"});
    w.info.metrics.push_back(kThroughputPerControl);
    RunSettings settings = Settings(1, 4);
    settings.control = control;
    Runner runner(settings, backend);
    return runner.RunGroup(Group(w))[0].samples;
  };
  const auto base = run(1, 1, true), slow_machine = run(1.5, 1, true), slow_code = run(1, 1.1, true);
  ASSERT_EQ(base.at("throughput_per_control").size(), 4u);
  EXPECT_DOUBLE_EQ(base.at("throughput_per_control")[0], 10 / 2e-3 * 1e-3);  // samples in one block's time
  EXPECT_NEAR(slow_machine.at("throughput")[0] / base.at("throughput")[0], 1 / 1.5, 1e-12);
  EXPECT_NEAR(slow_machine.at("throughput_per_control")[0] / base.at("throughput_per_control")[0], 1, 1e-12);
  EXPECT_NEAR(slow_code.at("throughput_per_control")[0] / base.at("throughput_per_control")[0], 1 / 1.1, 1e-12);
  EXPECT_EQ(run(1, 1, false).count("throughput_per_control"), 0u);  // --no-control: no blocks
}

TEST(Runner, InterleavesTheVariantsOfAGroup) {
  Script s;
  auto w = Make(&s, {"ref", "amp"});
  FakeBackend backend;
  Runner runner(Settings(1, 2), backend);
  runner.RunGroup(Group(w));
  const std::vector<std::string> expected = {
      "ref:setup", "amp:setup",  "ref:step1",  "amp:step1",    "ref:step2",    "amp:step2",
      "ref:step3", "amp:step3",  "ref:verify", "ref:teardown", "amp:verify",   "amp:teardown"};
  EXPECT_EQ(s.log, expected);
}

TEST(Runner, DerivesPairedSpeedupAndLossDeltaAgainstTheReference) {
  Script s;
  auto w = Make(&s, {"ref", "amp"});
  FakeBackend backend;
  Runner runner(Settings(0, 4), backend);
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].samples.count("speedup"), 0u);  // the reference has none
  ASSERT_EQ(out[1].samples.at("speedup").size(), 4u);
  EXPECT_DOUBLE_EQ(out[1].samples.at("speedup")[0], 2.0);
  EXPECT_DOUBLE_EQ(out[1].samples.at("loss_delta")[0], 0.25);
}

TEST(Runner, PeakMemoryIsOwnedBytesPlusTheStepsTransientPeak) {
  Script s;
  FakeBackend backend;
  s.backend = &backend;
  auto w = Make(&s, {"ref", "amp"});
  Runner runner(Settings(1, 3), backend);
  auto out = runner.RunGroup(Group(w));
  // Each variant holds 100 bytes and peaks 50 above that in a step; the other
  // variant's 100 bytes are not counted against it.
  for (const auto& o : out) EXPECT_EQ(o.samples.at("peak_memory"), (std::vector<double>{150, 150, 150}));
}

TEST(Runner, AFailingVariantIsRecordedAndTheOthersGoOn) {
  Script s;
  s.throw_at_step = 3;
  auto w = Make(&s, {"ref", "bad"});
  FakeBackend backend;
  Runner runner(Settings(1, 5), backend);
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kOk);
  EXPECT_EQ(out[0].samples.at("step_time").size(), 5u);
  EXPECT_EQ(out[1].status, ResultStatus::kFailed);
  EXPECT_EQ(out[1].reason, "step 2: boom");  // its third step is the second timed one
  EXPECT_EQ(out[1].samples.at("step_time").size(), 1u);
}

TEST(Runner, SetUpExceptionsAndSkipsAreRecorded) {
  Script s;
  s.skip_bad = true;
  auto w = Make(&s, {"ref", "bad", "setupfail"});
  FakeBackend backend;
  Runner runner(Settings(0, 2), backend);
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kOk);
  EXPECT_EQ(out[1].status, ResultStatus::kSkipped);
  EXPECT_EQ(out[1].reason, "set-up: not here");
  EXPECT_EQ(out[2].status, ResultStatus::kFailed);
  EXPECT_EQ(out[2].reason, "set-up: no device");
}

TEST(Runner, AFaultInTheBackendFailsTheVariantNotTheRun) {
  Script s1, s2;
  auto faulty = Make(&s1, {"ref"});
  auto next = Make(&s2, {"ref"});
  FakeBackend backend;
  backend.end_step_throws_at = 2;
  Runner runner(Settings(1, 3), backend);
  std::vector<VariantOutcome> seen;
  runner.RunAll({Group(faulty), Group(next)}, [&](const std::vector<VariantOutcome>& o) {
    seen.insert(seen.end(), o.begin(), o.end());
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].status, ResultStatus::kFailed);
  EXPECT_NE(seen[0].reason.find("device-side assert"), std::string::npos) << seen[0].reason;
  EXPECT_EQ(seen[1].status, ResultStatus::kOk);
}

TEST(Runner, AMemoryCounterThatThrowsAtSetUpFailsTheVariant) {
  Script s;
  auto w = Make(&s, {"ref"});
  FakeBackend backend;
  backend.memory_throws = true;
  Runner runner(Settings(0, 2), backend);
  auto out = runner.RunGroup(Group(w));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, ResultStatus::kFailed);
  EXPECT_EQ(out[0].reason, "set-up: Invalid device argument 0: did you call init?");
}

TEST(Runner, RunAllContinuesAfterAFailedGroup) {
  Script s1, s2;
  auto bad = Make(&s1, {"setupfail"});
  auto good = Make(&s2, {"ref"});
  FakeBackend backend;
  Runner runner(Settings(0, 2), backend);
  std::vector<ResultStatus> seen;
  runner.RunAll({Group(bad), Group(good)}, [&](const std::vector<VariantOutcome>& o) {
    for (const auto& v : o) seen.push_back(v.status);
  });
  EXPECT_EQ(seen, (std::vector<ResultStatus>{ResultStatus::kFailed, ResultStatus::kOk}));
}

TEST(Runner, AVariantOverItsBudgetFailsWithTheSamplesItHas) {
  Script s;
  s.fast_s = 0.03;
  auto w = Make(&s, {"ref"});
  FakeBackend backend;
  RunSettings settings = Settings(0, 1000);
  settings.timeout_s = 0.1;
  Runner runner(settings, backend, ClockOf(&s));
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kFailed);
  EXPECT_NE(out[0].reason.find("time limit of 0.1 s exceeded after 4 of 1000 repetitions"), std::string::npos)
      << out[0].reason;
  EXPECT_EQ(out[0].samples.at("step_time").size(), 4u);
}

TEST(Runner, AVariantThatCannotFitItsRepetitionsRunsFewerAndItsSiblingAll) {
  Script s;
  s.fast_s = 0.001;
  s.slow_s = 1.0;
  auto w = Make(&s, {"ref", "slow"});
  FakeBackend backend;
  RunSettings settings = Settings(2, 10);
  settings.timeout_s = 8;  // slow: 2 s of warm-up, 6 of the 10 one-second steps fit
  Runner runner(settings, backend, ClockOf(&s));
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kOk);
  EXPECT_EQ(out[0].samples.at("step_time").size(), 10u);
  EXPECT_EQ(out[1].status, ResultStatus::kOk) << out[1].reason;
  EXPECT_EQ(out[1].samples.at("step_time").size(), 6u);
  EXPECT_EQ(out[1].samples.at("speedup").size(), 6u);  // paired with the reference's first 6
  EXPECT_NE(out[1].reason.find("6 of 10 repetitions: v:slow step 1 s"), std::string::npos) << out[1].reason;
}

TEST(Runner, TheQuickBudgetCutsASlowVariantsWarmUpAndRepetitionsAndSaysSo) {
  Script s;
  s.fast_s = 0.001;
  s.slow_s = 0.6;
  auto w = Make(&s, {"ref", "slow"});
  FakeBackend backend;
  RunSettings settings = Settings(2, 7);
  settings.budget_s = 1.5;  // slow: its first warm-up leaves 0.9 s, no room for a second and two steps
  Runner runner(settings, backend, ClockOf(&s));
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kOk);
  EXPECT_EQ(out[0].samples.at("step_time").size(), 7u);
  EXPECT_TRUE(out[0].reason.empty()) << out[0].reason;
  ASSERT_EQ(out[1].status, ResultStatus::kOk) << out[1].reason;
  EXPECT_EQ(out[1].samples.at("step_time").size(), 2u);
  // One warm-up step, then the two timed ones (step_index counts every step).
  EXPECT_EQ(out[1].samples.at("step_index"), (std::vector<double>{2, 3}));
  EXPECT_NE(out[1].reason.find("2 of 7 repetitions and 1 of 2 warm-up steps: v:slow step 0.6 s and the quick "
                               "budget of 1.5 s per variant"),
            std::string::npos)
      << out[1].reason;
}

TEST(Runner, TheQuickBudgetWaitsForTheSecondWarmUpWhereThereIsRoomForIt) {
  Script s;
  s.fast_s = 0.001;
  s.slow_s = 0.4;  // the first warm-up leaves 1.1 s: room for a second (the first may carry one-time costs)
  auto w = Make(&s, {"ref", "slow"});
  FakeBackend backend;
  RunSettings settings = Settings(2, 7);
  settings.budget_s = 1.5;
  Runner runner(settings, backend, ClockOf(&s));
  auto out = runner.RunGroup(Group(w));
  ASSERT_EQ(out[1].status, ResultStatus::kOk) << out[1].reason;
  EXPECT_EQ(out[1].samples.at("step_index"), (std::vector<double>{3, 4}));  // after both warm-ups
  EXPECT_NE(out[1].reason.find("2 of 7 repetitions and 2 of 2 warm-up steps"), std::string::npos) << out[1].reason;
}

TEST(Runner, TheQuickBudgetNeverCutsBelowTwoRepetitions) {
  Script s;
  s.fast_s = 0.001;
  s.slow_s = 5;
  auto w = Make(&s, {"ref", "slow"});
  FakeBackend backend;
  RunSettings settings = Settings(2, 3);
  settings.budget_s = 1.5;
  Runner runner(settings, backend, ClockOf(&s));
  auto out = runner.RunGroup(Group(w));
  ASSERT_EQ(out[1].status, ResultStatus::kOk) << out[1].reason;
  EXPECT_EQ(out[1].samples.at("step_time").size(), 2u);
  EXPECT_NE(out[1].reason.find("2 of 3 repetitions and 1 of 2 warm-up steps"), std::string::npos) << out[1].reason;
}

// Under torchrun or SLURM every rank runs its own runner and a step is a
// collective: one rank's clock must not cut the counts (CI once saw rank 0
// wait for a step its follower had cut).
TEST(Runner, RanksOfAnExternalLaunchRunThePlannedStepsWhateverTheirClocksSay) {
  Script s;
  s.fast_s = 0.001;
  s.slow_s = 0.6;
  auto w = Make(&s, {"ref", "slow"});
  FakeBackend backend;
  RunSettings settings = Settings(2, 7);
  settings.budget_s = 1.5;  // alone, this cuts slow to 2 repetitions (above)
  settings.timeout_s = 4;   // alone, this cuts slow to 5
  settings.launch.mode = DistributedLaunch::Mode::kExternal;
  settings.launch.source = "torchrun";
  settings.launch.world_size = 2;
  settings.launch.rank = 1;
  Runner runner(settings, backend, ClockOf(&s));
  auto out = runner.RunGroup(Group(w));
  ASSERT_EQ(out[1].status, ResultStatus::kFailed) << out[1].reason;  // the limit still holds
  EXPECT_NE(out[1].reason.find("time limit of 4 s exceeded after 5 of 7 repetitions"), std::string::npos)
      << out[1].reason;
  settings.timeout_s = 60;
  Runner roomy(settings, backend, ClockOf(&s));
  out = roomy.RunGroup(Group(w));
  ASSERT_EQ(out[1].status, ResultStatus::kOk) << out[1].reason;
  EXPECT_EQ(out[1].samples.at("step_index"), (std::vector<double>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(out[1].reason.empty()) << out[1].reason;
}

// The run's budget (--run-budget): each group's variants get the time left
// over the variants left, so a fast group's leftover goes to the next; a slow
// variant is cut, and skipped only where even its fewest steps would take more
// than a quarter of the process's share (never its group's reference).
TEST(Runner, TheRunsBudgetIsSharedByTheVariantsLeftAndCutsSlowOnes) {
  Script s;
  s.fast_s = 0.001;
  s.slow_s = 0.6;
  auto fast = Make(&s, {"ref", "x"});
  auto slow = Make(&s, {"ref", "slow"});
  FakeBackend backend;
  Runner runner(Settings(2, 7), backend, ClockOf(&s));
  runner.set_budget(8);  // 2 s a variant at the start; ~4 s each for the second group
  std::vector<VariantOutcome> seen;
  runner.RunAll({Group(fast), Group(slow)}, [&](const auto& o) { seen.insert(seen.end(), o.begin(), o.end()); });
  ASSERT_EQ(seen.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(seen[i].samples.at("step_time").size(), 7u) << i;
    EXPECT_TRUE(seen[i].reason.empty()) << seen[i].reason;
  }
  ASSERT_EQ(seen[3].status, ResultStatus::kOk) << seen[3].reason;
  EXPECT_EQ(seen[3].samples.at("step_time").size(), 4u);
  // Room for the second warm-up (the share is ~4 s, not the first group's 2 s), then 4 steps.
  EXPECT_EQ(seen[3].samples.at("step_index"), (std::vector<double>{3, 4, 5, 6}));
  EXPECT_NE(seen[3].reason.find("4 of 7 repetitions and 2 of 2 warm-up steps: v:slow step 0.6 s and its share of "
                                "the run's budget (3.99 s a variant)"),
            std::string::npos)
      << seen[3].reason;

  s.slow_s = 20;  // hopeless: 60 s for a warm-up and 2 steps, against a quarter of the process's 8 s
  Runner hopeless(Settings(2, 7), backend, ClockOf(&s));
  hopeless.set_budget(8);
  seen.clear();
  hopeless.RunAll({Group(slow)}, [&](const auto& o) { seen.insert(seen.end(), o.begin(), o.end()); });
  EXPECT_EQ(seen[0].status, ResultStatus::kOk);  // the reference
  ASSERT_EQ(seen[1].status, ResultStatus::kSkipped);
  EXPECT_NE(seen[1].reason.find("v:slow step 20 s: set-up, a warm-up step and 2 repetitions do not fit in a quarter "
                                "of this process's 8 s share of the run's budget"),
            std::string::npos)
      << seen[1].reason;

  // Far over its share (within --timeout), with no process budget to be hopeless against: measured, at the fewest.
  Runner tight(Settings(2, 7), backend, ClockOf(&s));
  auto out = tight.RunGroup(Group(slow), 0.5);
  ASSERT_EQ(out[1].status, ResultStatus::kOk) << out[1].reason;
  EXPECT_EQ(out[1].samples.at("step_time").size(), 2u);

  RunSettings quick = Settings(2, 7);  // --quick's budget applies where it is the smaller
  quick.budget_s = 1.5;
  s.slow_s = 0.6;
  Runner both(quick, backend, ClockOf(&s));
  out = both.RunGroup(Group(slow), 100);
  EXPECT_NE(out[1].reason.find("and the quick budget of 1.5 s per variant"), std::string::npos) << out[1].reason;
}

TEST(Runner, PhaseTimesSayWhereEachSuitesTimeWent) {
  Script s;
  s.fast_s = 0.01;
  auto w = Make(&s, {"ref", "x"});
  FakeBackend backend;
  Runner runner(Settings(2, 3), backend, ClockOf(&s));
  runner.RunGroup(Group(w));
  runner.RunGroup(Group(w));
  ASSERT_EQ(runner.phase_times().size(), 1u);
  const PhaseTimes& t = runner.phase_times().at("t");
  EXPECT_NEAR(t.setup_s, 0, 1e-12);                 // set-up costs nothing on this clock
  EXPECT_NEAR(t.warmup_s, 2 * 2 * 2 * 0.01, 1e-9);  // 2 groups x 2 variants x 2 warm-up steps
  EXPECT_NEAR(t.timed_s, 2 * 2 * 3 * 0.01, 1e-9);
  EXPECT_NEAR(t.wall_s, t.setup_s + t.warmup_s + t.timed_s + t.other_s, 1e-9);
  EXPECT_NEAR(runner.timed_s(), t.timed_s, 1e-12);
}

TEST(Runner, AVeryFastStepUnderALongBudgetRunsEveryRepetition) {
  Script s;
  s.fast_s = 1e-10;  // budget / step far beyond the range of an int
  auto w = Make(&s, {"ref"});
  FakeBackend backend;
  RunSettings settings = Settings(2, 10);
  settings.timeout_s = 3600;
  Runner runner(settings, backend, ClockOf(&s));
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kOk) << out[0].reason;
  EXPECT_EQ(out[0].samples.at("step_time").size(), 10u);
}

TEST(Runner, AVariantFarOverItsBudgetIsSkippedUpFrontNamingItsStepTime) {
  Script s;
  s.fast_s = 0.001;
  s.slow_s = 1.0;
  auto w = Make(&s, {"ref", "slow"});
  w.info.slow_cause = [](const Params& p, const std::string& device) {
    return p.Get("v") == "slow" ? "no native slowness on this " + device : std::string();
  };
  FakeBackend backend;
  RunSettings settings = Settings(2, 10);
  settings.timeout_s = 5;  // 3 s left after warm-up: fewer than the 5 repetitions a verdict needs
  Runner runner(settings, backend, ClockOf(&s));
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kOk);
  EXPECT_EQ(out[0].samples.at("step_time").size(), 10u);
  EXPECT_EQ(out[1].status, ResultStatus::kSkipped);
  EXPECT_NE(out[1].reason.find("v:slow step 1 s (no native slowness on this cpu)"), std::string::npos)
      << out[1].reason;
  EXPECT_EQ(out[1].samples.count("step_time"), 0u);
  // Its warm-up steps were the only ones: 2, then no timed step.
  EXPECT_EQ(std::count(s.log.begin(), s.log.end(), "slow:step3"), 0);
}

TEST(Runner, VerifyFailureKeepsTheSamples) {
  Script s;
  s.verify_fails = true;
  auto w = Make(&s, {"ref"});
  FakeBackend backend;
  Runner runner(Settings(0, 3), backend);
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kFailed);
  EXPECT_EQ(out[0].reason, "verify: wrong answer");
  EXPECT_EQ(out[0].samples.at("step_time").size(), 3u);
}

TEST(Runner, AnUndeclaredMetricFailsTheVariant) {
  Script s;
  s.undeclared = true;
  auto w = Make(&s, {"ref"});
  FakeBackend backend;
  Runner runner(Settings(0, 3), backend);
  auto out = runner.RunGroup(Group(w));
  EXPECT_EQ(out[0].status, ResultStatus::kFailed);
  EXPECT_NE(out[0].reason.find("'nonsense' is not declared"), std::string::npos);
}

}  // namespace
}  // namespace perfbench

namespace perfbench {
namespace {

// 5 ms steps on a fake clock that also drives the stand-in NVML's counter
// (one move of 30 J every 100 ms): energy comes from a window of the
// variant's own steps after the timed ones, never from a per-step delta
// (which would be 0 for most steps and 30 J for a few).
class FiveMsSteps final : public Workload {
 public:
  explicit FiveMsSteps(double* now) : now_(now) {}
  Status SetUp(const RunContext&) override { return Status::Ok(); }
  Status RunStep(StepRecorder& rec) override {
    *now_ += 0.005;
    static auto* set_clock = reinterpret_cast<void (*)(double)>(
        dlsym(dlopen(PERFBENCH_FAKE_NVML, RTLD_NOW | RTLD_LOCAL), "fake_nvml_set_clock_ms"));
    set_clock(*now_ * 1e3);
    rec.SetItemsProcessed(10);
    return Status::Ok();
  }

 private:
  double* now_;
};

TEST(Runner, EnergyIsMeasuredOverAWindowOfTheVariantsOwnSteps) {
  double now = 100;
  RegisteredWorkload w;
  w.info.suite = "t";
  w.info.name = "energy";
  w.info.metrics = {{"step_time", "s", Better::kLower},
                    {"energy", "J", Better::kLower},
                    {"energy_per_sample", "J/sample", Better::kLower}};
  w.info.variants = {Params{{"v", "a"}}};
  w.factory = [&now] { return std::make_unique<FiveMsSteps>(&now); };
  FakeBackend backend;
  RunSettings s = Settings(2, 15);
  s.device = "cuda";  // the NVML path; the fake backend runs nothing
  Runner runner(s, backend, [&now] { return now; });
  runner.set_energy_meters([](const std::string&, const std::string& bus) {
    return MakeNvmlMeter(0, PERFBENCH_FAKE_NVML, bus);
  });
  const auto out = runner.RunGroup({&w, w.info.variants});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].status, ResultStatus::kOk) << out[0].reason;
  ASSERT_EQ(out[0].samples.at("energy").size(), 1u) << "one window, one figure";
  EXPECT_NEAR(out[0].samples.at("energy")[0], 1.5, 0.075);  // 300 W x 5 ms, within 5%
  EXPECT_NEAR(out[0].samples.at("energy_per_sample")[0], 0.15, 0.0075);
  EXPECT_EQ(out[0].samples.at("step_time").size(), 15u);
  EXPECT_NE(out[0].attributes.at("energy").find("counter updates"), std::string::npos) << out[0].attributes.at("energy");
}

}  // namespace
}  // namespace perfbench

namespace perfbench {
namespace {

TEST(Progress, TheRemainingTimeMovesWithinAGroupAndUsesTheGroupsDone) {
  ProgressEvent first{0, 3, "g", 10, 10, 0.5};
  EXPECT_DOUBLE_EQ(first.RemainingSeconds(), 10 + 2 * 20);  // this one's 20 s stands for the other two
  ProgressEvent last{2, 3, "g", 100, 10, 0.25};
  EXPECT_DOUBLE_EQ(last.RemainingSeconds(), 30);
  ProgressEvent starting{1, 3, "g", 50, 0, 0};
  EXPECT_DOUBLE_EQ(starting.RemainingSeconds(), 100);  // 50 s per group done
  ProgressEvent unknown{0, 3, "g", 0, 0, 0};
  EXPECT_LT(unknown.RemainingSeconds(), 0);
}

TEST(Runner, ProgressIsReportedAfterEveryStepOfALongGroup) {
  Script s;
  s.fast_s = 1;
  auto w = Make(&s, {"ref", "amp"});
  FakeBackend backend;
  Runner runner(Settings(1, 3), backend, ClockOf(&s));
  std::vector<ProgressEvent> events;
  runner.set_progress([&](const ProgressEvent& e) { events.push_back(e); });
  runner.RunAll({Group(w)}, [](const auto&) {});
  // The start, then after each set-up and each step: 2 variants x (1 + 1 warm-up + 3 timed).
  ASSERT_EQ(events.size(), 1u + 2 * 5);
  EXPECT_DOUBLE_EQ(events.front().group_fraction, 0);
  EXPECT_DOUBLE_EQ(events.back().group_fraction, 1);
  EXPECT_DOUBLE_EQ(events.back().elapsed_s, 8);  // 8 steps of 1 s on the fake clock
  for (size_t i = 1; i < events.size(); ++i) EXPECT_GE(events[i].group_fraction, events[i - 1].group_fraction);
}

}  // namespace
}  // namespace perfbench
