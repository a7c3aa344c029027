#include "runner.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <new>
#include <sstream>

#include "host_memory.h"

namespace perfbench {

const char* ToString(OutcomeStatus s) {
  switch (s) {
    case OutcomeStatus::kOk: return "ok";
    case OutcomeStatus::kFailed: return "failed";
    case OutcomeStatus::kSkipped: return "skipped";
  }
  return "failed";
}

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

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

// One variant's live state inside a group.
struct Live {
  VariantOutcome outcome;
  std::unique_ptr<Workload> workload;
  bool active = false;
  // Tensor bytes this variant holds between calls: the sum of the changes in
  // the backend's current allocation over its own SetUp and steps. Calls of
  // different variants never overlap, so each change is attributable.
  int64_t owned_bytes = 0;
};

void Fail(Live& v, const std::string& reason) {
  v.outcome.status = OutcomeStatus::kFailed;
  v.outcome.reason = reason;
  v.active = false;
}

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

}  // namespace

std::vector<VariantOutcome> Runner::RunGroup(const VariantGroup& group) {
  const WorkloadInfo& info = group.workload->info;
  const std::string& dev = settings_.device;
  const bool want_mem = info.FindMetric("peak_memory") != nullptr;
  const bool want_rss = info.FindMetric("peak_rss") != nullptr;
  const bool want_step = info.FindMetric("step_time") != nullptr;
  const bool want_tput = info.FindMetric("throughput") != nullptr;

  std::vector<Live> live(group.variants.size());
  for (size_t i = 0; i < group.variants.size(); ++i) {
    live[i].outcome.variant = VariantRef{group.workload, group.variants[i]};
  }

  // Set-up, one variant after the other.
  for (auto& v : live) {
    const Params& params = v.outcome.variant.params;
    for (const auto& need : info.needs) {
      if (need == "cuda" && dev != "cuda") {
        v.outcome.status = OutcomeStatus::kSkipped;
        v.outcome.reason = "needs cuda; running on " + dev;
      }
    }
    if (v.outcome.status == OutcomeStatus::kOk && info.skip_reason) {
      if (std::string why = info.skip_reason(params, dev); !why.empty()) {
        v.outcome.status = OutcomeStatus::kSkipped;
        v.outcome.reason = why;
      }
    }
    if (v.outcome.status != OutcomeStatus::kOk) continue;
    int64_t before = 0, peak = 0;
    backend_.Synchronize(dev);
    backend_.Memory(dev, &before, &peak);
    RunContext ctx{params, dev, settings_.seed, settings_.quick, settings_.threads, settings_.data_dir, settings_.launch};
    Status st = Guarded("set-up", [&] {
      v.workload = group.workload->factory();
      return v.workload->SetUp(ctx);
    });
    backend_.Synchronize(dev);
    int64_t after = 0;
    if (backend_.Memory(dev, &after, &peak)) v.owned_bytes += after - before;
    if (st.skipped()) {
      v.outcome.status = OutcomeStatus::kSkipped;
      v.outcome.reason = st.message();
    } else if (!st.ok()) {
      Fail(v, st.message());
    } else {
      v.active = true;
    }
  }

  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(settings_.timeout_s));

  auto step = [&](Live& v, bool record, const std::string& phase) {
    Recorder rec(info);
    int64_t current = 0, peak = 0;
    backend_.Synchronize(dev);
    const bool have_mem = backend_.Memory(dev, &current, &peak);
    backend_.ResetPeakMemory(dev);
    if (want_rss) ResetPeakRss();
    // The device is idle here, so the clock starts with the step's first launch.
    const auto t0 = Clock::now();
    backend_.BeginStep(dev);
    Status st = Guarded(phase, [&] { return v.workload->RunStep(rec); });
    const double device_s = backend_.EndStep(dev);
    // Synchronise before reading the clock: launches are asynchronous.
    backend_.Synchronize(dev);
    const auto t1 = Clock::now();
    if (!st.ok()) {
      Fail(v, st.message());
      return;
    }
    if (!rec.undeclared_.empty()) {
      Fail(v, phase + ": metric '" + rec.undeclared_ + "' is not declared by " + info.FullName());
      return;
    }
    for (const auto& [metric, value] : rec.values_) {
      if (!std::isfinite(value)) {
        Fail(v, phase + ": metric '" + metric + "' is " + std::to_string(value));
        return;
      }
    }
    int64_t after = 0, step_peak = 0;
    const bool mem_ok = have_mem && backend_.Memory(dev, &after, &step_peak);
    const int64_t transient = mem_ok ? std::max<int64_t>(0, step_peak - current) : 0;
    const int64_t owned_before = v.owned_bytes;
    if (mem_ok) v.owned_bytes += after - current;
    if (!record) return;
    const double seconds = rec.manual_seconds_ >= 0 ? rec.manual_seconds_
                           : device_s >= 0          ? device_s
                                                    : Seconds(t1 - t0);
    auto& s = v.outcome.samples;
    if (want_step) s["step_time"].push_back(seconds);
    if (want_tput && rec.items_ > 0 && seconds > 0) s["throughput"].push_back(rec.items_ / seconds);
    if (want_mem && mem_ok) s["peak_memory"].push_back(static_cast<double>(owned_before + transient));
    if (want_rss) {
      if (int64_t rss = PeakRssBytes(); rss > 0) s["peak_rss"].push_back(static_cast<double>(rss));
    }
    for (auto& [metric, value] : rec.values_) s[metric].push_back(value);
  };

  auto over_time = [&](int done) {
    if (Clock::now() <= deadline) return false;
    std::ostringstream why;
    why << "time limit of " << settings_.timeout_s << " s exceeded after " << done << " of "
        << settings_.repetitions << " repetitions";
    for (auto& v : live)
      if (v.active) Fail(v, why.str());
    return true;
  };

  // Warm-up and timed repetitions, interleaved across the group: A B A B ...
  bool timed_out = false;
  for (int w = 0; w < settings_.warmup_steps && !timed_out; ++w) {
    for (auto& v : live)
      if (v.active) step(v, /*record=*/false, "warm-up step " + std::to_string(w + 1));
    timed_out = over_time(0);
  }
  for (int r = 0; r < settings_.repetitions && !timed_out; ++r) {
    for (auto& v : live)
      if (v.active) step(v, /*record=*/true, "step " + std::to_string(r + 1));
    timed_out = over_time(r + 1);
  }

  // Derived, paired metrics against the reference variant of the group.
  Live* ref = nullptr;
  if (!info.compare_param.empty()) {
    for (auto& v : live)
      if (v.outcome.variant.params.Get(info.compare_param) == info.reference_value) ref = &v;
  }
  if (ref != nullptr && ref->active) {
    const auto& rs = ref->outcome.samples;
    if (info.FindMetric("scaling_efficiency") && rs.count("throughput")) {
      // T(1) / (1 * T(1)) = 1 by definition (std::map inserts keep rs valid).
      ref->outcome.samples["scaling_efficiency"].assign(rs.at("throughput").size(), 1.0);
    }
    for (auto& v : live) {
      if (&v == ref || !v.active) continue;
      auto& s = v.outcome.samples;
      if (info.FindMetric("speedup") && rs.count("step_time") && s.count("step_time")) {
        const auto& a = rs.at("step_time");
        const auto& b = s.at("step_time");
        for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) s["speedup"].push_back(a[i] / b[i]);
      }
      if (info.FindMetric("scaling_efficiency") && rs.count("throughput") && s.count("throughput")) {
        const double k = std::stod(v.outcome.variant.params.Get(info.compare_param)) /
                         std::stod(ref->outcome.variant.params.Get(info.compare_param));
        const auto& a = rs.at("throughput");
        const auto& b = s.at("throughput");
        for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) s["scaling_efficiency"].push_back(b[i] / (k * a[i]));
      }
      if (info.FindMetric("loss_delta") && rs.count("loss") && s.count("loss")) {
        const auto& a = rs.at("loss");
        const auto& b = s.at("loss");
        for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
          s["loss_delta"].push_back(std::fabs(b[i] - a[i]));
      }
    }
  }

  for (auto& v : live) {
    if (v.active) {
      VerifyContext vctx{v.outcome.samples};
      Status st = Guarded("verify", [&] { return v.workload->Verify(vctx); });
      if (!st.ok()) {
        // Keep the samples: a wrong answer is worth seeing next to its speed.
        v.outcome.status = OutcomeStatus::kFailed;
        v.outcome.reason = st.message();
      }
    }
    if (v.workload) {
      Guarded("attributes", [&] {
        v.outcome.attributes = v.workload->Attributes();
        return Status::Ok();
      });
      Guarded("tear-down", [&] {
        v.workload->TearDown();
        return Status::Ok();
      });
      v.workload.reset();
    }
  }

  std::vector<VariantOutcome> out;
  out.reserve(live.size());
  for (auto& v : live) out.push_back(std::move(v.outcome));
  return out;
}

void Runner::RunAll(const std::vector<VariantGroup>& groups,
                    const std::function<void(const std::vector<VariantOutcome>&)>& sink) {
  const auto start = Clock::now();
  for (size_t i = 0; i < groups.size(); ++i) {
    if (progress_) {
      const auto& g = groups[i];
      std::string name = g.workload->info.FullName();
      Params shared = g.variants.front().Without(g.workload->info.compare_param);
      if (!shared.empty()) {
        name += '/';
        name += shared.Encode();
      }
      progress_({i, groups.size(), name, Seconds(Clock::now() - start)});
    }
    sink(RunGroup(groups[i]));
  }
}

}  // namespace perfbench
