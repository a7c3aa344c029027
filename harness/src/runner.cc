#include "runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <set>

#include "derived_metrics.h"
#include "energy.h"
#include "energy_window.h"
#include "gpu_monitor.h"
#include "host_memory.h"
#include "perfbench/statistics.h"

namespace perfbench {

double ProgressEvent::RemainingSeconds() const {
  const double before = elapsed_s - group_elapsed_s;  // the groups done
  const double per_group = group_index > 0 ? before / static_cast<double>(group_index) : -1;
  const double rest = static_cast<double>(group_count - group_index - 1);
  double left_here = -1;
  if (group_fraction > 0) left_here = group_elapsed_s * (1 - group_fraction) / group_fraction;
  else if (per_group >= 0) left_here = std::max(0.0, per_group - group_elapsed_s);
  if (left_here < 0) return -1;
  if (rest > 0 && per_group < 0) {  // no group done yet: this one's projected length stands for the others
    const double whole = group_elapsed_s + left_here;
    return left_here + rest * whole;
  }
  return left_here + rest * std::max(per_group, 0.0);
}

double SteadyNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {


class Recorder final : public StepRecorder {
 public:
  explicit Recorder(const WorkloadInfo& info) : info_(info) {}
  void SetStepSeconds(double seconds) override { manual_seconds_ = seconds; }
  void SetItemsProcessed(double items) override { items_ = items; }
  void Add(std::string_view metric, double value) override {
    if (info_.FindMetric(metric) == nullptr) {
      undeclared_ = std::string(metric);
      return;
    }
    values_.emplace_back(std::string(metric), value);
  }

  double manual_seconds_ = -1;
  double items_ = 0;
  std::string undeclared_;
  std::vector<std::pair<std::string, double>> values_;

 private:
  const WorkloadInfo& info_;
};

// Runs `fn`, turning exceptions into a Status with `phase` as context.
template <typename Fn>
Status Guarded(const std::string& phase, Fn&& fn) {
  try {
    return fn().WithContext(phase);
  } catch (const std::bad_alloc&) {
    return Status::Error(phase + ": out of memory");
  } catch (const std::exception& e) {
    std::string what = e.what();
    // c10::Error messages carry a multi-line C++ backtrace; keep the first line.
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    while (!what.empty() && std::isspace(static_cast<unsigned char>(what.back()))) what.pop_back();
    return Status::Error(phase + ": " + what);
  } catch (...) {
    return Status::Error(phase + ": unknown exception");
  }
}

// One variant's live state inside a group.
struct Live {
  VariantOutcome outcome;
  std::unique_ptr<Workload> workload;
  bool active = false;
  // Tensor bytes this variant holds between calls: the sum of the changes in
  // the backend's current allocation over its own SetUp and steps. Calls of
  // different variants never overlap, so each change is attributable.
  int64_t owned_bytes = 0;
  double spent_s = 0;                 // this variant's own set-up and step time
  std::vector<double> warmup_step_s;  // host time of each warm-up step
  int warmups = 0;                    // warm-up steps planned
  int target = 0;                     // timed repetitions planned
  int done = 0;                       // timed repetitions recorded
};

void Fail(Live& v, const std::string& reason) {
  v.outcome.status = ResultStatus::kFailed;
  v.outcome.reason = reason;
  v.active = false;
}

void Skip(Live& v, const std::string& reason) {
  v.outcome.status = ResultStatus::kSkipped;
  v.outcome.reason = reason;
  v.active = false;
}

// One group's run: set-up, warm-up with budget projection, interleaved timed
// steps, derived metrics, verification and tear-down.
class GroupRun {
 public:
  // `phases` accumulates the time of set-up, warm-up and timed steps; `process_seed` goes to RunContext.
  GroupRun(const RunSettings& settings, DeviceBackend& backend, const NowFn& now, const VariantGroup& group,
           uint64_t process_seed, PhaseTimes* phases, const Runner::EnergyMeterFactory& make_meter,
           std::function<void(double)> tick, double share_s, double process_budget_s)
      : s_(settings),
        backend_(backend),
        now_(now),
        info_(group.workload->info),
        live_(group.variants.size()),
        process_seed_(process_seed),
        phases_(phases),
        tick_(std::move(tick)),
        process_budget_s_(process_budget_s) {
    SetSoftBudget(share_s);
    if (info_.FindMetric("energy")) {
      const std::string bus = backend_.PciBusId(s_.device);  // the variant's own GPU, not GPU 0
      energy_ = make_meter ? make_meter(s_.device, bus) : MakeEnergyMeter(s_.device, bus);
    }
    if (s_.device == "cuda") monitor_ = MakeGpuMonitor(0, "libnvidia-ml.so.1", backend_.PciBusId(s_.device));
    for (size_t i = 0; i < group.variants.size(); ++i) {
      live_[i].outcome.variant = VariantRef{group.workload, group.variants[i]};
      live_[i].warmups = s_.warmup_steps;
      live_[i].target = s_.repetitions;
    }
  }

  std::vector<VariantOutcome> Run() {
    for (auto& v : live_) SetUp(v);
    if (info_.engine) {
      Measure();
    } else {
      StepLoop();
    }
    Derive();
    for (auto& v : live_) Finish(v);
    std::vector<VariantOutcome> out;
    for (auto& v : live_) out.push_back(std::move(v.outcome));
    return out;
  }

 private:
  void StepLoop() {
    for (int w = 0; w < s_.warmup_steps; ++w) {
      for (auto& v : live_)
        if (v.active && w < v.warmups) Step(v, /*record=*/false, "warm-up step " + std::to_string(w + 1));
      for (auto& v : live_)
        if (v.active && w < v.warmups) Project(v, v.warmups - w - 1);
    }
    if (monitor_) monitor_->Begin();  // what the GPU does during the timed steps
    while (AnyPending()) {
      for (auto& v : live_)
        if (v.active && v.done < v.target) Step(v, /*record=*/true, "step " + std::to_string(v.done + 1));
    }
    if (monitor_) activity_ = monitor_->End().Attributes();
    if (energy_)
      for (auto& v : live_)
        if (v.active) MeasureEnergy(v);
  }
  void MeasureEnergy(Live& v);
  bool AnyPending() const {
    return std::any_of(live_.begin(), live_.end(), [](const Live& v) { return v.active && v.done < v.target; });
  }
  // The variant's math mode (WorkloadInfo::math_mode), set before each of its calls.
  MathMode ModeOf(const Live& v) const {
    return info_.math_mode ? info_.math_mode(v.outcome.variant.params) : MathMode{};
  }
  Status ApplyMathMode(const Live& v, const std::string& phase) {
    return Guarded(phase, [&] {
      backend_.SetMathMode(ModeOf(v));
      return Status::Ok();
    });
  }
  void SetUp(Live& v);
  void Measure();
  void Accept(Live& v, EngineVariant& e);
  void Step(Live& v, bool record, const std::string& phase);
  struct StepMemory {
    int64_t current = 0, peak = 0, after = 0, step_peak = 0;
    bool ok = false;
  };
  Status MemoryBefore(StepMemory& m, const std::string& phase);
  Status MemoryAfter(StepMemory& m, const std::string& phase);
  Status TimedStep(Live& v, Recorder& rec, const std::string& phase, double* device_s);
  bool Check(Live& v, const Status& st, const Recorder& rec, const std::string& phase);
  void Record(Live& v, const Recorder& rec, double seconds, int64_t peak_bytes, bool mem_ok);
  void Project(Live& v, int warmups_left);
  bool Lockstep() const;
  void FitQuickBudget(Live& v, int warmups_left);
  void ControlBlock(Live& v, double throughput);
  void SetSoftBudget(double share_s);
  RunContext Context(const Live& v) const {
    return {v.outcome.variant.params, s_, process_seed_, soft_budget_s_, process_budget_s_};
  }
  std::string SlowText(const Live& v, double step_s) const;
  void Derive();
  // The group's variant whose compare_param is `value` (its reference_value
  // unless named), or null.
  const Live* Reference(const std::string& value) const;
  const Live* Reference() const { return Reference(info_.reference_value); }
  void Finish(Live& v);

  const RunSettings& s_;
  DeviceBackend& backend_;
  const NowFn& now_;
  const WorkloadInfo& info_;
  std::vector<Live> live_;
  uint64_t process_seed_;
  PhaseTimes* phases_;
  std::function<void(double)> tick_;  // progress: the group's fraction done, after each step
  // The soft budget of each variant's steps (the smaller of --quick's and the
  // variant's share of the run's budget; 0: none) and its words in a reason.
  double soft_budget_s_ = 0;
  std::string soft_budget_text_;
  double process_budget_s_ = 0;  // this process's share of the run's budget (Runner::set_budget); 0: none
  // Steps done / planned over the variants still running (warm-up and timed).
  double Fraction() const {
    double done = 0, planned = 0;
    for (const auto& v : live_) {
      if (!v.active) continue;
      done += static_cast<double>(v.warmup_step_s.size() + v.done);
      planned += static_cast<double>(v.warmups + v.target);
    }
    return planned > 0 ? done / planned : 0;
  }
  std::unique_ptr<EnergyMeter> energy_;  // when the workload declares `energy`
  std::map<const Live*, std::string> energy_notes_;  // "energy" attribute per variant
  std::unique_ptr<GpuMonitor> monitor_;  // on a GPU
  std::map<std::string, std::string> activity_;  // the monitor's attributes for every variant

 public:
  void set_known_skips(const std::map<std::string, std::string>* skips) { known_skips_ = skips; }

 private:
  const std::map<std::string, std::string>* known_skips_ = nullptr;  // Runner::set_known_skips
};

void GroupRun::SetUp(Live& v) {
  if (std::string why = SkipReason(v.outcome.variant, s_.device); !why.empty()) return Skip(v, why);
  if (known_skips_)
    if (auto it = known_skips_->find(v.outcome.variant.FullName()); it != known_skips_->end())
      return Skip(v, "skipped by an earlier process of this run: " + it->second);
  const double t0 = now_();
  int64_t before = 0, after = 0, peak = 0;
  const RunContext ctx = Context(v);
  // The backend's calls are guarded too: a device fault (a CUDA error, an
  // allocator assert) fails this variant, not the run.
  Status st = ApplyMathMode(v, "set-up");
  if (st.ok()) st = Guarded("set-up", [&] {
    backend_.Synchronize(s_.device);
    backend_.Memory(s_.device, &before, &peak);
    v.workload = v.outcome.variant.workload->factory();
    Status set_up = v.workload->SetUp(ctx);
    backend_.Synchronize(s_.device);
    if (backend_.Memory(s_.device, &after, &peak)) v.owned_bytes += after - before;
    return set_up;
  });
  const double setup_s = now_() - t0;
  v.spent_s += setup_s;
  phases_->setup_s += setup_s;
  if (st.skipped()) return Skip(v, st.message());
  if (!st.ok()) return Fail(v, st.message());
  v.active = true;
  if (tick_) tick_(Fraction());  // time moves on the progress line during long set-ups
}

// The backend's memory counters before a step (the device idle, the peak
// reset) and after it. Backend calls are guarded like the workload's: a
// device fault (a CUDA error, an allocator assert) fails the variant, not the run.
Status GroupRun::MemoryBefore(StepMemory& m, const std::string& phase) {
  return Guarded(phase, [&] {
    backend_.Synchronize(s_.device);
    m.ok = backend_.Memory(s_.device, &m.current, &m.peak);
    backend_.ResetPeakMemory(s_.device);
    return Status::Ok();
  });
}

Status GroupRun::MemoryAfter(StepMemory& m, const std::string& phase) {
  return Guarded(phase, [&] {
    m.ok = m.ok && backend_.Memory(s_.device, &m.after, &m.step_peak);
    return Status::Ok();
  });
}

// The timed part: the step between the backend's step brackets, then a
// synchronise before the clock is read (launches are asynchronous).
Status GroupRun::TimedStep(Live& v, Recorder& rec, const std::string& phase, double* device_s) {
  return Guarded(phase, [&] {
    backend_.BeginStep(s_.device);
    Status step = v.workload->RunStep(rec);
    *device_s = backend_.EndStep(s_.device);
    backend_.Synchronize(s_.device);
    return step;
  });
}

void GroupRun::Step(Live& v, bool record, const std::string& phase) {
  Recorder rec(info_);
  StepMemory mem;
  const double t_begin = now_();
  Status st = ApplyMathMode(v, phase);
  if (st.ok()) st = MemoryBefore(mem, phase);
  if (info_.FindMetric("peak_rss")) ResetPeakRss();
  // The device is idle here, so the clock starts with the step's first launch.
  const double t0 = now_();
  double device_s = -1;
  if (st.ok()) st = TimedStep(v, rec, phase, &device_s);
  const double t1 = now_();
  v.spent_s += t1 - t_begin;
  if (!Check(v, st, rec, phase) || !Check(v, MemoryAfter(mem, phase), rec, phase)) return;
  const int64_t transient = mem.ok ? std::max<int64_t>(0, mem.step_peak - mem.current) : 0;
  const int64_t peak_bytes = v.owned_bytes + transient;
  if (mem.ok) v.owned_bytes += mem.after - mem.current;
  const double host_s = t1 - t0;
  if (!record) {
    phases_->warmup_s += t1 - t_begin;
    v.warmup_step_s.push_back(host_s);
    if (tick_) tick_(Fraction());
    return;
  }
  const double seconds = rec.manual_seconds_ >= 0 ? rec.manual_seconds_ : device_s >= 0 ? device_s : host_s;
  phases_->timed_s += t1 - t_begin;
  Record(v, rec, seconds, peak_bytes, mem.ok);
  ControlBlock(v, rec.items_ > 0 && seconds > 0 ? rec.items_ / seconds : 0);
  if (tick_) tick_(Fraction());
  if (v.spent_s > s_.timeout_s && v.done < v.target)
    Fail(v, fmt::format("time limit of {:g} s exceeded after {} of {} repetitions", s_.timeout_s, v.done, v.target));
}

// The energy window (energy_window.h): the variant's own consecutive steps,
// untimed, after the interleaved timed ones; its time counts against its budget.
void GroupRun::MeasureEnergy(Live& v) {
  const double left = s_.timeout_s - v.spent_s;
  if (left <= 0) {
    energy_notes_[&v] = "unavailable: no time left in the variant's budget for an energy window";
    return;
  }
  EnergyWindowLimits limits;
  limits.max_seconds = std::min(limits.max_seconds, left);
  double items = 0;
  const auto step = [&]() {
    Recorder rec(info_);
    Status st = ApplyMathMode(v, "energy window");
    if (st.ok()) st = Guarded("energy window", [&] {
      Status s = v.workload->RunStep(rec);
      backend_.Synchronize(s_.device);
      return s;
    });
    items = rec.items_;
    if (tick_) tick_(1.0);
    return st;
  };
  const double t0 = now_();
  Status failed;
  const EnergyWindow w = MeasureEnergyWindow(step, *energy_, now_, limits, &failed);
  v.spent_s += now_() - t0;
  if (!failed.ok()) return Fail(v, failed.message());
  if (!w.unavailable.empty()) {
    energy_notes_[&v] = "unavailable: " + w.unavailable;
    return;
  }
  v.outcome.samples["energy"] = {w.joules_per_step};
  if (info_.FindMetric("energy_per_sample") && items > 0) v.outcome.samples["energy_per_sample"] = {w.joules_per_step / items};
  energy_notes_[&v] = fmt::format("{:.4g} J per step, {:.4g} W: {}", w.joules_per_step, w.watts, w.Text());
}

// WorkloadInfo::engine: one call measures every live variant of the group.
void GroupRun::Measure() {
  // One engine call measures the whole group under one math mode: its
  // first live variant's; a variant that asks for another fails.
  const Live* first = nullptr;
  for (auto& v : live_) {
    if (!v.active) continue;
    if (first == nullptr) {
      first = &v;
    } else if (!(ModeOf(v) == ModeOf(*first))) {
      Fail(v, "measure: math mode " + ModeOf(v).Text() + " differs from its group's " + ModeOf(*first).Text() +
                  " (an engine measures a group under one mode)");
    }
  }
  std::vector<EngineVariant> engine_variants;
  std::vector<Live*> owners;
  for (auto& v : live_) {
    if (!v.active) continue;
    engine_variants.push_back({v.workload.get(), &v.outcome.variant.params, {}, Status::Ok()});
    owners.push_back(&v);
  }
  if (owners.empty()) return;
  const double t0 = now_();
  Status st = ApplyMathMode(*owners[0], "measure");
  if (st.ok()) st = Guarded("measure", [&] {
    info_.engine(s_, engine_variants);
    return Status::Ok();
  });
  const double spent = now_() - t0;
  phases_->timed_s += spent;
  for (size_t i = 0; i < owners.size(); ++i) {
    owners[i]->spent_s += spent / static_cast<double>(owners.size());
    if (!st.ok()) {
      Fail(*owners[i], st.message());
    } else {
      Accept(*owners[i], engine_variants[i]);
    }
  }
}

// An engine's samples, held to the rules of the step loop: declared metrics,
// finite values, at least one repetition.
void GroupRun::Accept(Live& v, EngineVariant& e) {
  if (e.status.skipped()) return Skip(v, e.status.message());
  if (!e.status.ok()) return Fail(v, e.status.WithContext("measure").message());
  for (const auto& [metric, values] : e.samples) {
    if (info_.FindMetric(metric) == nullptr)
      return Fail(v, "measure: metric '" + metric + "' is not declared by " + info_.FullName());
    for (double x : values)
      if (!std::isfinite(x)) return Fail(v, "measure: metric '" + metric + "' is " + std::to_string(x));
  }
  if (e.samples.empty()) return Fail(v, "measure: the engine recorded no samples");
  v.outcome.samples = std::move(e.samples);
  v.done = static_cast<int>(v.outcome.samples.begin()->second.size());
}

// A failed step, an undeclared metric or a non-finite value fails the variant.
bool GroupRun::Check(Live& v, const Status& st, const Recorder& rec, const std::string& phase) {
  if (!st.ok()) {
    Fail(v, st.message());
    return false;
  }
  if (!rec.undeclared_.empty()) {
    Fail(v, phase + ": metric '" + rec.undeclared_ + "' is not declared by " + info_.FullName());
    return false;
  }
  for (const auto& [metric, value] : rec.values_) {
    if (!std::isfinite(value)) {
      Fail(v, phase + ": metric '" + metric + "' is " + std::to_string(value));
      return false;
    }
  }
  return true;
}

void GroupRun::Record(Live& v, const Recorder& rec, double seconds, int64_t peak_bytes, bool mem_ok) {
  auto& s = v.outcome.samples;
  if (info_.FindMetric("step_time")) s["step_time"].push_back(seconds);
  if (info_.FindMetric("throughput") && rec.items_ > 0 && seconds > 0)
    s["throughput"].push_back(rec.items_ / seconds);
  if (info_.FindMetric("peak_memory") && mem_ok) s["peak_memory"].push_back(static_cast<double>(peak_bytes));
  if (info_.FindMetric("peak_rss")) {
    if (int64_t rss = PeakRssBytes(); rss > 0) s["peak_rss"].push_back(static_cast<double>(rss));
  }
  for (const auto& [metric, value] : rec.values_) s[metric].push_back(value);
  ++v.done;
}

// kThroughputPerControl: the control block right after a timed step (not
// under a launcher's lockstep, nor with --no-control), and the step's
// throughput times the block's seconds. Outside the step's clock; its time
// counts against the variant's budget.
void GroupRun::ControlBlock(Live& v, double throughput) {
  if (!s_.control || Lockstep() || !(throughput > 0) || !info_.FindMetric(kThroughputPerControl.name)) return;
  const double t0 = now_();
  double block_s = -1;
  const Status st = Guarded("control block", [&] {
    block_s = backend_.ControlBlock(s_.device);
    return Status::Ok();
  });
  v.spent_s += now_() - t0;
  if (!st.ok()) return Fail(v, st.message());
  if (block_s > 0) v.outcome.samples[kThroughputPerControl.name].push_back(throughput * block_s);
}

std::string GroupRun::SlowText(const Live& v, double step_s) const {
  std::string text = fmt::format("{} step {:.3g} s", v.outcome.variant.params.Encode(), step_s);
  if (info_.slow_cause) {
    if (std::string cause = info_.slow_cause(v.outcome.variant.params, s_.device); !cause.empty())
      text += " (" + cause + ")";
  }
  return text;
}

// Under an external or manual launch every rank runs its own runner, and a
// step is a collective: counts cut by one rank's clock would leave the others
// waiting for a step that never comes (or one rank stepping alone). Such a
// group runs the planned counts on every rank; the time limit still fails it.
bool GroupRun::Lockstep() const { return s_.launch.Fixed() && s_.launch.world_size > 1; }

void GroupRun::Project(Live& v, int warmups_left) {
  if (v.warmup_step_s.empty() || Lockstep()) return;
  const double step_s = stats::Median(v.warmup_step_s);
  if (step_s <= 0) return;
  // Time for the energy window after the timed steps, where one can close
  // within its limit (20 steps for a 5% error, at least ~1 s of counter updates).
  const double window_s = std::max(1.0, 21 * step_s);
  const double reserve_s = energy_ && energy_->Unavailable().empty() && window_s <= EnergyWindowLimits{}.max_seconds
                               ? window_s : 0;
  // Under a run's budget a variant other than its group's reference (amp's
  // fp32) may take at most a quarter of the process's share: one whose
  // set-up, first warm-up step and fewest repetitions need more (an emulated
  // precision at full size) is hopeless here, skipped after that step, and
  // the later processes of the run skip it before its set-up. (Against the
  // whole share, not what is left: a variant late in a process that overran
  // is cut to its fewest steps, not skipped for where it came.)
  if (v.warmup_step_s.size() == 1 && &v != Reference() &&
      Context(v).Hopeless(v.spent_s + step_s * RunSettings::kQuickMinRepetitions))
    return Skip(v, fmt::format("{}: set-up, a warm-up step and {} repetitions do not fit in a quarter of this "
                               "process's {:.3g} s share of the run's budget (--run-budget)",
                               SlowText(v, step_s), RunSettings::kQuickMinRepetitions, process_budget_s_));
  const std::string budget = fmt::format("the {:g} s budget per variant", s_.timeout_s);
  const double left_s = s_.timeout_s - v.spent_s - reserve_s;
  // In double: a sub-microsecond step over a long budget overflows an int.
  const double fits_d = std::floor(left_s / step_s) - warmups_left;
  if (fits_d >= v.target) return FitQuickBudget(v, warmups_left);  // only ever lowers the counts
  const int fits = static_cast<int>(std::max(fits_d, -1.0));
  if (fits < RunSettings::kMinRepetitions)
    return Skip(v, fmt::format("{}: {} repetitions do not fit in {} (at least {} needed)", SlowText(v, step_s),
                               v.target, budget, RunSettings::kMinRepetitions));
  v.outcome.reason = fmt::format("{} of {} repetitions: {} and {}", fits, s_.repetitions, SlowText(v, step_s), budget);
  v.target = fits;
  FitQuickBudget(v, warmups_left);
}

// The soft budget: --quick's per variant (RunSettings::budget_s) or the
// variant's share of the run's budget (RunSettings::run_budget_s), whichever
// is smaller.
void GroupRun::SetSoftBudget(double share_s) {
  const bool quick = s_.budget_s > 0, share = share_s > 0 && (!quick || share_s < s_.budget_s);
  if (share) {
    soft_budget_s_ = share_s;
    soft_budget_text_ = fmt::format("its share of the run's budget ({:.3g} s a variant)", share_s);
  } else if (quick) {
    soft_budget_s_ = s_.budget_s;
    soft_budget_text_ = fmt::format("the quick budget of {:g} s per variant", s_.budget_s);
  }
}

// A variant whose steps do not fit the soft budget warms up no further and
// runs the repetitions that fit, at least kQuickMinRepetitions, saying so in
// its reason.
void GroupRun::FitQuickBudget(Live& v, int warmups_left) {
  if (!(soft_budget_s_ > 0) || v.warmup_step_s.empty()) return;
  double spent = 0;
  for (double x : v.warmup_step_s) spent += x;
  const double left_s = soft_budget_s_ - spent;
  // The fastest warm-up step: the first carries one-time costs (kernel
  // selection, JIT, cold caches). While more warm-up is planned and there is
  // room for it, the decision waits for the next step.
  const double step_s = *std::min_element(v.warmup_step_s.begin(), v.warmup_step_s.end());
  if (warmups_left > 0 && 2 * step_s < left_s) return;
  if (step_s * (warmups_left + v.target) <= left_s) return;
  const int fits = static_cast<int>(std::clamp(std::floor(left_s / step_s), 0.0, static_cast<double>(v.target)));
  const int reps = std::max(std::min(RunSettings::kQuickMinRepetitions, v.target), fits);
  const int warmed = static_cast<int>(v.warmup_step_s.size());
  if (reps == v.target && warmups_left == 0) return;
  const std::string why = fmt::format("{} of {} repetitions and {} of {} warm-up steps: {} and {}", reps, v.target,
                                      warmed, v.warmups, SlowText(v, step_s), soft_budget_text_);
  v.outcome.reason = v.outcome.reason.empty() ? why : v.outcome.reason + "; then " + why;
  v.warmups = warmed;
  v.target = reps;
}

void GroupRun::Derive() {
  if (info_.compare_param.empty() || info_.derived.empty()) return;
  std::set<std::string> references;  // amp: fp32, and tf32 where it ran
  for (const auto& d : info_.derived) references.insert(ReferenceOf(info_, d));
  for (const auto& value : references) {
    const Live* ref = Reference(value);
    if (ref == nullptr || !ref->active) continue;
    // A copy: the reference's own samples grow when it derives from itself.
    const auto ref_samples = ref->outcome.samples;
    for (auto& v : live_) {
      if (!v.active) continue;
      Status st = Guarded("derived metrics", [&] {
        DeriveMetrics(info_, ref->outcome.variant.params, ref_samples, v.outcome.variant.params, v.outcome.samples,
                      /*is_reference=*/&v == ref);
        return Status::Ok();
      });
      if (!st.ok()) Fail(v, st.message());
    }
  }
}

const Live* GroupRun::Reference(const std::string& value) const {
  if (info_.compare_param.empty()) return nullptr;
  for (const auto& v : live_)
    if (v.outcome.variant.params.Get(info_.compare_param) == value) return &v;
  return nullptr;
}

void GroupRun::Finish(Live& v) {
  if (v.workload && v.active) {
    if (Status st = ApplyMathMode(v, "verify"); !st.ok()) Fail(v, st.message());
  }
  if (v.active) {
    const Live* ref = Reference();
    const bool usable = ref && ref != &v && ref->outcome.status == ResultStatus::kOk && !ref->outcome.samples.empty();
    VerifyContext vctx{v.outcome.samples, usable ? &ref->outcome.samples : nullptr};
    Status st = Guarded("verify", [&] { return v.workload->Verify(vctx); });
    // Keep the samples: a wrong answer is worth seeing next to its speed.
    if (!st.ok()) Fail(v, st.message());
  }
  if (!v.workload) return;
  Guarded("attributes", [&] {
    v.outcome.attributes = v.workload->Attributes();
    if (auto it = energy_notes_.find(&v); it != energy_notes_.end()) v.outcome.attributes["energy"] = it->second;
    v.outcome.attributes.insert(activity_.begin(), activity_.end());
    for (const auto& [flag, value] : backend_.MathModeInEffect()) v.outcome.attributes["math." + flag] = value;
    if (auto it = v.outcome.attributes.find(kQuickBoundAttribute);
        it != v.outcome.attributes.end() && v.outcome.status == ResultStatus::kOk)
      v.outcome.reason = v.outcome.reason.empty() ? it->second : v.outcome.reason + "; " + it->second;
    return Status::Ok();
  });
  Guarded("tear-down", [&] {
    v.workload->TearDown();
    return Status::Ok();
  });
  v.workload.reset();
}

}  // namespace

std::vector<VariantOutcome> Runner::RunGroup(const VariantGroup& group, double share_s, double process_budget_s) {
  PhaseTimes phases;
  const double t0 = now_();
  GroupRun run(settings_, backend_, now_, group, process_seed_, &phases, make_meter_, group_tick_, share_s,
               process_budget_s);
  run.set_known_skips(&known_skips_);
  auto outcomes = run.Run();
  phases.wall_s = now_() - t0;
  phases.other_s = std::max(0.0, phases.wall_s - phases.setup_s - phases.warmup_s - phases.timed_s);
  timed_s_ += phases.timed_s;
  phase_times_[group.workload->info.suite].Add(phases);
  return outcomes;
}

void Runner::RunAll(const std::vector<VariantGroup>& groups,
                    const std::function<void(const std::vector<VariantOutcome>&)>& sink) {
  const double start = now_();
  size_t variants_left = 0;
  for (const auto& g : groups) variants_left += g.variants.size();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double group_start = now_();
    // Each variant's share of the process's budget: the time left over the
    // variants left, so what a fast group leaves flows to the later ones.
    const double left_s = budget_s_ > 0 ? std::max(budget_s_ - (group_start - start), 1e-3) : 0;
    const double share_s = left_s / static_cast<double>(std::max<size_t>(variants_left, 1));
    variants_left -= groups[i].variants.size();
    ProgressEvent e{i, groups.size(), GroupName(groups[i]), group_start - start, 0, 0};
    if (progress_) {
      progress_(e);
      group_tick_ = [&](double fraction) {
        e.elapsed_s = now_() - start;
        e.group_elapsed_s = now_() - group_start;
        e.group_fraction = fraction;
        progress_(e);
      };
    }
    struct Reset {
      std::function<void(double)>& tick;
      ~Reset() { tick = nullptr; }
    } reset{group_tick_};  // also when sink throws: the tick refers to this frame
    sink(RunGroup(groups[i], share_s, budget_s_));
  }
}

}  // namespace perfbench
