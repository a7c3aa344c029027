#include "compare/compare.h"
#include "compare/detectable.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "fingerprint.h"
#include "inference.h"
#include "perfbench/statistics.h"
#include "signed_rank.h"
#include "two_level.h"

namespace perfbench {

namespace {

struct VerdictName {
  Verdict verdict;
  std::string_view name;
  int severity;  // report order, worst first
};
constexpr std::array<VerdictName, 9> kVerdicts = {{{Verdict::kRegression, "regression", 0},
                                                   {Verdict::kImprovement, "improvement", 4},
                                                   {Verdict::kUnchanged, "unchanged", 6},
                                                   {Verdict::kInconclusive, "inconclusive", 1},
                                                   {Verdict::kMissing, "missing", 2},
                                                   {Verdict::kNew, "new", 3},
                                                   {Verdict::kCompared, "compared", 5},
                                                   {Verdict::kInfo, "info", 7},
                                                   {Verdict::kSkipped, "skipped", 8}}};

const VerdictName& Entry(Verdict v) { return kVerdicts[static_cast<size_t>(v)]; }

}  // namespace

std::string_view ToString(Verdict v) { return Entry(v).name; }
int SeverityRank(Verdict v) { return Entry(v).severity; }
const std::vector<Verdict>& AllVerdicts() {
  static const std::vector<Verdict> all = [] {
    std::vector<Verdict> v;
    for (const auto& e : kVerdicts) v.push_back(e.verdict);
    return v;
  }();
  return all;
}

std::string_view ToString(Overall o) {
  switch (o) {
    case Overall::kPass: return "pass";
    case Overall::kRegression: return "regression";
    case Overall::kInconclusive: return "inconclusive";
    case Overall::kReport: return "report";
  }
  return "?";
}

std::string_view ToString(VerdictKind k) {
  switch (k) {
    case VerdictKind::kStoredRuns: return "stored_runs";
    case VerdictKind::kStoredBaseline: return "stored_baseline";
    case VerdictKind::kRolling: return "rolling_baseline";
    case VerdictKind::kInterleaved: return "interleaved";
  }
  return "?";
}

std::string KindNote(VerdictKind k) {
  // Each within a 120-column table line after "kind: ".
  switch (k) {
    case VerdictKind::kInterleaved:
      return "interleaved: the reference and the candidate ran now, in alternating processes (slow periods cancel)";
    case VerdictKind::kStoredBaseline:
      return "stored baseline: numbers stored earlier; a machine that moved since moves the verdict (see each mde)";
    case VerdictKind::kRolling:
      return "rolling baseline: this machine's last runs of a label; a machine that moved moves the verdict (see mde)";
    case VerdictKind::kStoredRuns:
      return "stored runs: two runs of different moments; a machine that moved between them moves the verdict (see mde)";
  }
  return "";
}

int Comparison::Count(Verdict v) const {
  return static_cast<int>(std::count_if(metrics.begin(), metrics.end(), [&](const auto& m) { return m.verdict == v; }));
}

std::vector<const MetricVerdict*> Comparison::Unresolved() const {
  std::vector<const MetricVerdict*> out;
  for (const auto& m : metrics)
    if (m.tested && !m.informational && !m.control && !m.Resolves()) out.push_back(&m);
  return out;
}

namespace {

std::string JsonText(const nlohmann::json& fp, const std::string& field) {
  if (!fp.contains(field)) return "-";
  const auto& v = fp.at(field);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

const std::vector<std::string>& SoftwareFields() {
  static const std::vector<std::string> f = {"torch_version", "cuda_runtime", "cuda_driver", "nvidia_driver",
                                             "cudnn_version", "cudnn_compiled", "nccl_version", "cuda_compiled", "math_mode_defaults", "compiler", "build_type",
                                             "perfbench_version", "git_sha", "intra_op_threads", "kernel", "os"};
  return f;
}

std::string Pct(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }
std::string Num(double v) { return fmt::format("{:+.3g}", v); }

// Change text "-7.9% [-9.4%, -6.1%]" (relative) or "+0.003 [-0.001, +0.007]" (absolute).
std::string ChangeText(const MetricVerdict& m) {
  if (m.absolute) return Num(m.difference) + " [" + Num(m.ci_low) + ", " + Num(m.ci_high) + "]";
  return Pct(m.ratio) + " [" + Pct(m.ci_low) + ", " + Pct(m.ci_high) + "]";
}

std::string Amount(const MetricVerdict& m, double v) {
  return !m.absolute ? fmt::format("{:.3g}%", v * 100)
                     : fmt::format("{:.3g}", v) + (m.unit == "1" || m.unit.empty() ? "" : " " + m.unit);
}

// "±8.2% (noise floor for 5 vs 3 processes, from 6 earlier runs; policy 5%)"
std::string LimitText(const MetricVerdict& m, double limit, double floor, bool scaled) {
  std::string t = "±" + Amount(m, limit);
  if (m.pairs > 0 && m.history_runs > 0)
    return t + fmt::format(" (policy; paired, so the run-to-run noise floor, {} from {} earlier runs, does not raise "
                           "it: that is what an unpaired comparison could resolve here)",
                           Amount(m, m.noise_floor), m.history_runs);
  if (floor > m.policy_threshold && limit == floor)
    t += fmt::format(" (noise floor{} from {} earlier runs; policy {})",
                     scaled ? fmt::format(" for {} vs {} processes,", m.processes_baseline, m.processes_candidate) : "",
                     m.history_runs, Amount(m, m.policy_threshold));
  else if (m.history_runs > 0)
    t += " (policy; the noise floor from history is below it)";
  else
    t += " (policy)";
  return t;
}
// The regression limit, and the equivalence margin.
std::string LimitText(const MetricVerdict& m) {
  return LimitText(m, m.threshold, m.floor_for_test, m.floor_for_test != m.noise_floor);
}
std::string MarginText(const MetricVerdict& m) { return LimitText(m, m.Margin(), m.noise_floor, false); }

std::string LevelText(const MetricVerdict& m) {
  if (m.pairs > 0) return fmt::format("{} pairs of processes, signed-rank", m.pairs);
  if (m.level == Level::kProcess)
    return fmt::format("{} vs {} processes", m.processes_baseline, m.processes_candidate) +
           (m.run_var > 0 && m.processes_baseline >= 2 && m.processes_candidate >= 2
                ? fmt::format(" and a run's moment (sd {:.1f}% from {} runs)", 100 * std::sqrt(m.run_var), m.run_var_runs)
                : std::string());
  return fmt::format("within-process samples only ({} vs {} process{})", m.processes_baseline,
                     m.processes_candidate, m.processes_baseline + m.processes_candidate > 2 ? "es" : "");
}

// The change and its interval, signed so that positive is better.
struct Oriented {
  double change, lo, hi;
};
Oriented Orient(const MetricVerdict& m, double low, double high) {
  Oriented o = m.absolute ? Oriented{m.difference, low, high}
                          : Oriented{m.ratio - 1, low - 1, high - 1};
  if (!m.higher_is_better) o = {-o.change, -o.hi, -o.lo};
  return o;
}

std::string IntervalText(const MetricVerdict& m, double low, double high) {
  return m.absolute ? "[" + Num(low) + ", " + Num(high) + "]" : "[" + Pct(low) + ", " + Pct(high) + "]";
}

}  // namespace

void Judge(MetricVerdict& m, double alpha) {
  const double t = m.threshold;
  const Oriented o = Orient(m, m.ci_low, m.ci_high);
  const Oriented eq = m.has_eq ? Orient(m, m.eq_low, m.eq_high) : o;
  const std::string what = m.metric + " " + ChangeText(m) + fmt::format(", q={:.3g}; ", m.q_value) + LevelText(m);
  const bool significant = m.q_value < alpha;
  if (m.between_unknown) {
    m.verdict = Verdict::kInconclusive;
    m.reason = what + ": one process on a side, between-process noise unknown (one process cannot tell the code "
                      "from the moment it ran in); measure both sides with `perfbench run --processes 3` (the "
                      "default) or judge against a label with 5 or more earlier runs";
  } else if (significant && o.change < -t) {
    m.verdict = Verdict::kRegression;
    m.reason = what + ", limit " + LimitText(m);
  } else if (significant && o.change > t) {
    m.verdict = Verdict::kImprovement;
    m.reason = what + ", limit " + LimitText(m);
  } else if (eq.lo >= -m.Margin() && eq.hi <= m.Margin()) {
    // Equivalence at the margin: the policy's limit, or the noise floor
    // history raised it to (then the reason says a smaller change could not
    // be told from the machine's run-to-run noise).
    m.verdict = Verdict::kUnchanged;
    m.reason = what + ": " +
               (m.has_eq ? fmt::format("{:g}% interval {} ", 100 * m.eq_confidence, IntervalText(m, m.eq_low, m.eq_high))
                         : std::string("interval ")) +
               "within " + MarginText(m);
  } else {
    m.verdict = Verdict::kInconclusive;
    if (!significant && std::fabs(o.change) > t)
      m.reason = what + ": change beyond " + LimitText(m) + fmt::format(" but not significant (q >= {:g})", alpha);
    else
      m.reason = what + ": interval crosses the " + MarginText(m) + " margin; more samples would decide";
  }
  if (m.moment_unknown && (m.verdict == Verdict::kRegression || m.verdict == Verdict::kImprovement)) {
    m.verdict = Verdict::kInconclusive;
    m.reason = what + ": one run a side and no earlier runs of it here to learn this machine's run-to-run spread "
               "from (5 needed), so the change cannot be told from the moment the runs happened in; resolve it "
               "interleaved (`perfbench ab`, `gate --reference-bin`) or with 5 runs a side (a label)";
  }
}

namespace {

std::map<std::string, ResultRecord> Index(const RunData& d) {
  std::map<std::string, ResultRecord> out;
  for (const auto& r : d.results) {
    auto [it, inserted] = out.emplace(ResultKey(r), r);
    if (!inserted) {  // pooled runs: each run's processes are further processes
      it->second.AppendProcesses(r);
      if (r.status != ResultStatus::kOk) {
        it->second.status = r.status;
        it->second.reason = r.reason;
      }
    }
  }
  return out;
}

// The math-mode flags (result attributes "math.*") of each variant.
std::map<std::string, std::map<std::string, std::string>> MathModes(const RunData& d) {
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const auto& r : d.results) {
    auto& flags = out[VariantKey(r.suite, r.workload, r.params)];
    for (const auto& [k, v] : r.attributes)
      if (k.rfind("math.", 0) == 0) flags.emplace(k, v);
  }
  return out;
}

// Variants present on both sides whose math flags differ, one row per
// (flag, before, after) with the number of variants: "math.cudnn_benchmark
// (3 variants)": off -> on.
std::vector<FieldDiff> MathModeChanges(const RunData& a, const RunData& b) {
  const auto ma = MathModes(a), mb = MathModes(b);
  std::map<std::tuple<std::string, std::string, std::string>, int> changes;
  for (const auto& [variant, flags] : ma) {
    auto it = mb.find(variant);
    if (it == mb.end()) continue;
    for (const auto& [flag, x] : flags) {
      auto jt = it->second.find(flag);
      const std::string y = jt == it->second.end() ? "-" : jt->second;
      if (x != y) ++changes[{flag, x, y}];
    }
  }
  // A side from before math modes were recorded: compared as before, but said.
  const auto recorded = [](const auto& modes) {
    return std::any_of(modes.begin(), modes.end(), [](const auto& kv) { return !kv.second.empty(); });
  };
  if (recorded(ma) != recorded(mb))
    changes[{"math modes", recorded(ma) ? "recorded" : "not recorded (library defaults)",
             recorded(mb) ? "recorded" : "not recorded (library defaults)"}] = static_cast<int>(ma.size());
  std::vector<FieldDiff> out;
  for (const auto& [key, n] : changes) {
    const auto& [flag, x, y] = key;
    out.push_back({fmt::format("{} ({} variant{})", flag, n, n == 1 ? "" : "s"), x, y});
  }
  return out;
}

// Variants present on both sides whose exported model file changed (the
// model suite's result attribute "model_sha1"): a new build of the model is
// what the comparison judges, so it is listed, not refused.
std::vector<FieldDiff> ModelChanges(const RunData& a, const RunData& b) {
  const auto hashes = [](const RunData& d) {
    std::map<std::string, std::string> out;
    for (const auto& r : d.results)
      if (auto it = r.attributes.find("model_sha1"); it != r.attributes.end())
        out.emplace(r.suite + "/" + r.workload + "/model:" + r.params.Get("model"), it->second);
    return out;
  };
  const auto ha = hashes(a), hb = hashes(b);
  std::vector<FieldDiff> out;
  for (const auto& [model, x] : ha)
    if (auto it = hb.find(model); it != hb.end() && it->second != x)
      out.push_back({model + " file (sha1)", x.substr(0, 12), it->second.substr(0, 12)});
  return out;
}

// Fingerprint and settings differences; throws when hardware differs and that is not allowed.
void Differences(const RunData& a, const RunData& b, Comparison& c) {
  for (const auto& f : HardwareFields()) {
    const std::string x = JsonText(a.run.fingerprint, f), y = JsonText(b.run.fingerprint, f);
    if (x != y) c.hardware.push_back({f, x, y});
  }
  if (!c.hardware.empty() && !c.across_hardware) {
    std::string fields;
    for (const auto& d : c.hardware) fields += (fields.empty() ? "" : "; ") + d.field + ": " + d.baseline + " vs " + d.candidate;
    throw IncomparableError("incomparable: the runs are on different hardware (" + fields +
                                "); use --across-hardware for a ratio-only comparison");
  }
  for (const auto& f : SoftwareFields()) {
    const std::string x = JsonText(a.run.fingerprint, f), y = JsonText(b.run.fingerprint, f);
    if (x != y) c.software.push_back({f, x, y});
  }
  for (const char* f : {"threads", "repetitions", "warmup_steps", "quick", "device", "seed"}) {
    const std::string x = JsonText(a.run.settings, f), y = JsonText(b.run.settings, f);
    if (x != y) c.software.push_back({std::string("settings.") + f, x, y});
  }
  for (auto& d : MathModeChanges(a, b)) c.software.push_back(std::move(d));
  for (auto& d : ModelChanges(a, b)) c.software.push_back(std::move(d));
}

MetricVerdict Describe(const ResultRecord* ra, const ResultRecord* rb, const Policy& policy) {
  const ResultRecord& r = ra ? *ra : *rb;
  MetricVerdict m;
  m.suite = r.suite;
  m.workload = r.workload;
  m.metric = r.metric;
  m.unit = r.unit;
  m.params = r.params;
  m.higher_is_better = r.higher_is_better;
  const Threshold th = policy.For(r);
  m.absolute = th.absolute;
  m.threshold = m.policy_threshold = th.value;
  m.policy_mde = th.Mde();
  m.informational = th.informational;
  m.control = r.suite == kControlSuite;
  m.n_baseline = ra ? ra->samples.size() : 0;
  m.n_candidate = rb ? rb->samples.size() : 0;
  if (m.n_baseline) m.baseline_median = stats::Median(ra->samples);
  if (m.n_candidate) m.candidate_median = stats::Median(rb->samples);
  return m;
}

}  // namespace

bool JudgePresence(MetricVerdict& m, const ResultRecord* ra, const ResultRecord* rb, int min_samples) {
  const bool baseline_empty = !ra || m.n_baseline == 0;
  const auto reason_of = [](const ResultRecord& r) {
    return std::string(ToString(r.status)) + (r.reason.empty() ? "" : ": " + r.reason);
  };
  if (rb && m.n_candidate == 0 && rb->status == ResultStatus::kSkipped && ra && baseline_empty &&
      ra->status == ResultStatus::kSkipped) {
    m.verdict = Verdict::kSkipped;  // skipped on both sides (e.g. needs a GPU): nothing to decide
    m.reason = "skipped in both: " + rb->reason;
  } else if (!rb || (m.n_candidate == 0 && rb->status == ResultStatus::kSkipped)) {
    m.verdict = Verdict::kMissing;
    m.reason = rb ? "skipped in the candidate: " + rb->reason : "not in the candidate";
  } else if (rb->status == ResultStatus::kFailed && m.n_baseline > 0) {
    // A workload that used to work and now fails is the worst regression.
    m.verdict = Verdict::kRegression;
    m.reason = "failed in the candidate: " + rb->reason;
  } else if (rb->status == ResultStatus::kFailed && m.n_candidate == 0) {
    m.verdict = Verdict::kMissing;  // no data on either side: cannot pass
    m.reason = "failed in the candidate: " + rb->reason +
               (ra ? "; no baseline samples either (" + std::string(ToString(ra->status)) + ")" : "");
  } else if (baseline_empty) {
    m.verdict = Verdict::kNew;
    m.reason = ra ? "no baseline samples (" + reason_of(*ra) + ")" : "not in the baseline";
  } else if (static_cast<int>(std::min(m.n_baseline, m.n_candidate)) < min_samples) {
    m.verdict = Verdict::kInconclusive;
    m.reason = fmt::format("{} vs {} samples, need >= {} per side", m.n_baseline, m.n_candidate, min_samples);
  } else {
    return false;
  }
  // An informational metric (e.g. the harness's own time, one sample per
  // process) that is missing or too short is reported, never undecided.
  if (m.informational && (m.verdict == Verdict::kInconclusive || m.verdict == Verdict::kMissing)) {
    m.verdict = Verdict::kInfo;
    m.reason += " (informational: not judged)";
  }
  return true;
}

namespace {

// The noise floor learned from history raises the limit.
// After Measure (the floor of a process-level comparison depends on its processes).
void ApplyNoiseFloor(MetricVerdict& m, const History& h, const std::string& key) {
  auto it = h.series.find(key);
  if (it == h.series.end() || m.absolute) return;  // relative changes of a near-zero difference mean nothing
  size_t runs = 0;
  double floor = NoiseFloor(it->second, &runs);
  if (runs < kMinHistoryRuns) return;
  m.history_runs = runs;
  m.noise_floor = m.floor_for_test = floor;
  if (m.level == Level::kProcess) {
    auto k = h.processes_per_run.find(key);
    const double per_run = k == h.processes_per_run.end() ? 1.0 : std::max(1.0, k->second);
    const double n_a = static_cast<double>(m.processes_baseline), n_b = static_cast<double>(m.processes_candidate);
    m.floor_for_test = floor * std::min(1.0, std::sqrt(per_run * (1 / n_a + 1 / n_b) / 2));
  }
  m.threshold = std::max(m.threshold, m.floor_for_test);
  m.margin = std::max(m.policy_threshold, m.noise_floor);
}

// A paired verdict (ab, advise): its pairs cancel the machine's slow
// periods, and the spread of the pairs' own ratios is in the signed-rank
// test and the interval; the run-to-run floor learned from history measures
// what pairing removes, so it is reported (noise_floor: what an unpaired
// comparison could resolve here) but does not raise the limit.
void ReportUnpairedFloor(MetricVerdict& m, const History& h, const std::string& key) {
  auto it = h.series.find(key);
  if (it == h.series.end() || m.absolute) return;
  size_t runs = 0;
  const double floor = NoiseFloor(it->second, &runs);
  if (runs < kMinHistoryRuns) return;
  m.history_runs = runs;
  m.noise_floor = floor;
  m.floor_for_test = 0;
}

// Every sample the same (a deterministic metric: bytes, a count): no
// moment of the machine moves it.
bool Constant(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
}

bool AllPositive(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
}

// Within-process level: Mann-Whitney p and the Hodges-Lehmann interval.
void MeasureWithin(MetricVerdict& m, const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  m.ratio = m.baseline_median != 0 ? m.candidate_median / m.baseline_median : 1.0;
  m.difference = m.candidate_median - m.baseline_median;
  m.p_value = stats::MannWhitneyU(a, b).p_value;
  if (!m.absolute && AllPositive(a) && AllPositive(b)) {
    const auto s = stats::HodgesLehmannShift(stats::Logs(a), stats::Logs(b), confidence);
    m.ci_low = std::exp(s.low);
    m.ci_high = std::exp(s.high);
    return;
  }
  const auto s = stats::HodgesLehmannShift(a, b, confidence);
  if (m.absolute) {
    m.ci_low = s.low;
    m.ci_high = s.high;
  } else {  // relative threshold on values that are not all positive
    const double scale = std::fabs(m.baseline_median) > 0 ? std::fabs(m.baseline_median) : 1.0;
    m.ci_low = 1 + s.low / scale;
    m.ci_high = 1 + s.high / scale;
  }
}

double Variance(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double sd = stats::StdDev(v);
  return sd * sd;
}

// The run moment's share of a process-level test: {variance, df}
// (run_var is set only from kMinHistoryRuns runs or more).
std::pair<double, double> MomentTerm(const MetricVerdict& m) {
  if (!(m.run_var > 0)) return {0, 1};
  const double baseline_runs = static_cast<double>(std::max<size_t>(1, m.baseline_runs));
  return {m.run_var * (1 + 1 / baseline_runs), static_cast<double>(m.run_var_runs) - 1};
}

// The standard error of the process-level estimate and its degrees of
// freedom, for the detectable effect.
void MeasureSpread(MetricVerdict& m, const std::vector<double>& a, const std::vector<double>& b, bool logs) {
  const auto va = logs ? stats::Logs(a) : a, vb = logs ? stats::Logs(b) : b;
  const auto [extra, extra_df] = logs ? MomentTerm(m) : std::pair<double, double>{0, 1};
  const StandardError e = DifferenceStandardError(Variance(va), va.size(), Variance(vb), vb.size(), extra, extra_df);
  m.se = e.se;
  m.df = e.df;
}

// The candidate run's moment from history, by its own processes' spread.
void SetRunMoment(MetricVerdict& m, const History& h, const std::string& key, const ResultRecord& rb) {
  const auto pb = stats::ProcessMedians(stats::Groups(rb.samples, rb.process));
  if (pb.size() < 2 || !AllPositive(pb)) return;
  size_t runs = 0;
  const double v = RunMomentVariance(h, key, Variance(stats::Logs(pb)), &runs);
  if (v > 0) {
    m.run_var = v;
    m.run_var_runs = runs;
  }
}

// Process level: Welch on the process medians (their logarithms for a ratio).
void MeasureProcesses(MetricVerdict& m, const std::vector<double>& a, const std::vector<double>& b,
                      double confidence) {
  m.level = Level::kProcess;
  const bool logs = !m.absolute && AllPositive(a) && AllPositive(b);
  MeasureSpread(m, a, b, logs);
  if (logs) {
    const auto [extra, extra_df] = MomentTerm(m);
    const auto w = std::min(a.size(), b.size()) >= 2 ? stats::WelchLogRatio(a, b, confidence, extra, extra_df)
                                                     : stats::OneVersusManyLogRatio(a, b, confidence);
    m.ratio = w.difference;
    m.ci_low = w.low;
    m.ci_high = w.high;
    m.p_value = w.p_value;
    return;
  }
  const auto w = stats::WelchT(a, b, confidence);
  m.p_value = w.p_value;
  const double scale = m.absolute ? 1.0 : (std::fabs(m.baseline_median) > 0 ? std::fabs(m.baseline_median) : 1.0);
  m.ratio = m.absolute ? (m.baseline_median != 0 ? m.candidate_median / m.baseline_median : 1.0)
                       : 1 + w.difference / scale;
  m.difference = w.difference;
  m.ci_low = m.absolute ? w.low : 1 + w.low / scale;
  m.ci_high = m.absolute ? w.high : 1 + w.high / scale;
}

// p-value and the interval of the ratio (or of the difference), at the
// process level when both sides have two processes or more.
void Measure(MetricVerdict& m, const ResultRecord& ra, const ResultRecord& rb, double confidence) {
  m.tested = true;
  const auto pa = stats::ProcessMedians(stats::Groups(ra.samples, ra.process));
  const auto pb = stats::ProcessMedians(stats::Groups(rb.samples, rb.process));
  m.processes_baseline = pa.size();
  m.processes_candidate = pb.size();
  const bool one_vs_many = !m.absolute && std::max(pa.size(), pb.size()) >= 2 && AllPositive(pa) && AllPositive(pb);
  if ((pa.size() >= 2 && pb.size() >= 2) || one_vs_many)
    MeasureProcesses(m, pa, pb, confidence);
  else
    MeasureWithin(m, ra.samples, rb.samples, confidence);
}

// The (1 - 2 alpha) interval for the equivalence claim (TOST at alpha).
template <typename MeasureFn>
void MeasureEquivalence(MetricVerdict& m, double alpha, MeasureFn measure) {
  MetricVerdict e = m;
  m.eq_confidence = std::clamp(1 - 2 * alpha, 0.5, 0.999);
  measure(e, m.eq_confidence);
  m.eq_low = e.ci_low;
  m.eq_high = e.ci_high;
  m.has_eq = true;
}

// Baseline order, then what only the candidate has.
std::vector<std::string> OrderedKeys(const RunData& a, const RunData& b) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto* d : {&a, &b})
    for (const auto& r : d->results)
      if (std::string k = ResultKey(r); seen.insert(k).second) keys.push_back(std::move(k));
  return keys;
}

// An informational metric is reported with its change, never judged; true when it was one.
bool MarkInformational(MetricVerdict& m) {
  if (!m.informational) return false;
  m.q_value = m.p_value;
  m.verdict = Verdict::kInfo;
  m.reason = m.metric + " " + ChangeText(m) + " (informational: not judged)";
  return true;
}

// The detectable effect of a tested metric at the process level, in a
// family of `family` judged metrics (see detectable.h).
void SetDetectable(MetricVerdict& m, size_t family, double alpha) {
  if (m.level != Level::kProcess || m.between_unknown || m.moment_unknown || !(m.df > 0)) return;
  const double limit = m.absolute ? m.threshold : std::log1p(m.threshold);
  const double shift = DetectableShift(m.se, m.df, limit, family, alpha, kMdePower);
  m.mde = m.absolute ? shift : RelativeRegression(shift, m.higher_is_better);
  m.has_mde = true;
}

// q-values over the tested metrics, then a verdict for each.
void JudgeTested(Comparison& c, const std::vector<size_t>& tested, double alpha) {
  std::vector<double> ps;
  for (size_t i : tested) ps.push_back(c.metrics[i].p_value);
  const auto qs = stats::BenjaminiHochberg(ps);
  for (size_t j = 0; j < tested.size(); ++j) {
    auto& m = c.metrics[tested[j]];
    m.q_value = qs[j];
    SetDetectable(m, tested.size(), alpha);
    if (c.across_hardware) {
      m.verdict = Verdict::kCompared;
      m.reason = m.metric + " " + ChangeText(m) + " (different hardware: no pass/fail)";
    } else {
      Judge(m, alpha);
    }
  }
}

// Tested metrics go to the code's family or, for the control, to its own.
void AddTested(const Comparison& c, std::vector<size_t>* code, std::vector<size_t>* control) {
  (c.metrics.back().control ? control : code)->push_back(c.metrics.size() - 1);
}

// What a moved control says: the machine changed, unless the two sides ran
// with different settings (threads, device), or back to back (ab).
std::string ControlCause(const Comparison& c, bool paired) {
  std::string fields;
  for (const auto& d : c.software)
    if (d.field.rfind("settings.", 0) == 0 || d.field == "intra_op_threads") fields += (fields.empty() ? "" : ", ") + d.field;
  if (!fields.empty()) return "the control moved (the settings differ: " + fields + ")";
  return paired ? "the control moved between A and B" : "the machine changed";
}

// The control's metrics: judged in their own family, then turned into
// machine changes (see compare.h) and `info`.
void SettleControls(Comparison& c, const std::vector<size_t>& tested, double alpha, bool paired) {
  JudgeTested(c, tested, alpha);
  const std::string cause = ControlCause(c, paired);
  for (auto& m : c.metrics) {
    if (!m.control) continue;
    const bool moved = m.tested && (m.verdict == Verdict::kRegression || m.verdict == Verdict::kImprovement);
    if (moved && !c.across_hardware) {
      const std::string what = m.suite + "/" + m.workload + " " + m.metric + " " + ChangeText(m);
      c.machine_changes.push_back(cause + ": " + what);
      m.reason = cause + ": " + what + " (control: not a verdict on the code)";
    } else {
      m.reason = "control, " + std::string(ToString(m.verdict)) + ": " + m.reason;
    }
    m.verdict = Verdict::kInfo;
  }
}

}  // namespace

// See compare.h. A pass is "no regression, and every judged metric's detectable effect is
// known": a metric whose interval merely crosses its margin passes with its
// mde stated (UnresolvedNote says when that exceeds the policy's); one whose
// between-process noise is unknown (or with too few samples) cannot pass.
Overall OverallVerdict(const Comparison& c) {
  if (c.across_hardware) return Overall::kReport;
  if (c.Count(Verdict::kRegression)) return Overall::kRegression;
  if (c.Count(Verdict::kMissing)) return Overall::kInconclusive;
  for (const auto& m : c.metrics)
    if (m.verdict == Verdict::kInconclusive && !m.has_mde) return Overall::kInconclusive;
  return Overall::kPass;
}

double RunMomentVariance(const History& h, const std::string& key, double process_var, size_t* runs) {
  if (runs) *runs = 0;
  const auto it = h.series.find(key);
  if (it == h.series.end()) return 0;
  std::vector<double> logs;  // the newest kMaxHistoryRuns, as NoiseFloor takes them
  for (auto s = it->second.rbegin(); s != it->second.rend() && logs.size() < kMaxHistoryRuns; ++s)
    for (auto v = s->rbegin(); v != s->rend() && logs.size() < kMaxHistoryRuns; ++v) {
      if (!(*v > 0)) return 0;
      logs.push_back(std::log(*v));
    }
  if (logs.size() < kMinHistoryRuns) return 0;
  if (runs) *runs = logs.size();
  const auto k = h.processes_per_run.find(key);
  const double per_run = k == h.processes_per_run.end() ? 1.0 : std::max(1.0, k->second);
  const auto within = h.process_var.find(key);
  const double explained = (within == h.process_var.end() ? process_var : within->second) / per_run;
  // The sample variance of the runs within 4 robust sd (1.4826 MAD) of the
  // median: efficient on clean history, blind to a wild run or two.
  const double center = stats::Median(logs);
  std::vector<double> deviations;
  for (double x : logs) deviations.push_back(std::fabs(x - center));
  const double fence = 4 * 1.4826 * stats::Median(deviations);
  std::vector<double> kept;
  for (double x : logs)
    if (!(fence > 0) || std::fabs(x - center) <= fence) kept.push_back(x);
  return std::max(0.0, Variance(kept) - explained);
}

double NoiseFloor(const std::vector<std::vector<double>>& series, size_t* runs) {
  std::vector<double> changes;
  size_t used = 0;
  for (auto it = series.rbegin(); it != series.rend() && used < kMaxHistoryRuns; ++it) {
    const auto& s = *it;
    const size_t take = std::min(s.size(), kMaxHistoryRuns - used);
    for (size_t i = s.size() - take + 1; i < s.size(); ++i)
      if (s[i] != 0) changes.push_back(std::fabs(s[i] - s[i - 1]) / std::fabs(s[i]));
    used += take;
  }
  if (runs) *runs = used;
  if (used < kMinHistoryRuns || changes.size() < 2) return 0;
  std::sort(changes.begin(), changes.end());
  const size_t half = changes.size() / 2;
  const std::vector<double> lower(changes.begin(), changes.begin() + static_cast<long>(half));
  const std::vector<double> upper(changes.end() - static_cast<long>(half), changes.end());
  const double q1 = stats::Median(lower), q3 = stats::Median(upper);
  return q3 + 3 * (q3 - q1);
}

// The math-mode flags (attributes "math.*") in which two records differ,
// "math.cudnn_benchmark off -> on"; "" when either side has none (a run
// from before they were recorded) or they agree.
std::string MathModeChange(const ResultRecord& a, const ResultRecord& b) {
  const auto flags = [](const ResultRecord& r) {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : r.attributes)
      if (k.rfind("math.", 0) == 0) out.emplace(k, v);
    return out;
  };
  const auto fa = flags(a), fb = flags(b);
  if (fa.empty() || fb.empty()) return "";
  std::string out;
  for (const auto& [k, v] : fa) {
    const auto it = fb.find(k);
    const std::string w = it == fb.end() ? "-" : it->second;
    if (v != w) out += (out.empty() ? "" : ", ") + k + " " + v + " -> " + w;
  }
  return out;
}

// A variant whose math mode changed is another variant: the baseline's is
// missing and the candidate's new, never a regression or an improvement.
void AddIdentityChange(Comparison& c, const ResultRecord* ra, const ResultRecord* rb, const Policy& policy,
                       const std::string& change) {
  MetricVerdict gone = Describe(ra, nullptr, policy);
  JudgePresence(gone, ra, nullptr, policy.min_samples);
  gone.reason = "math mode changed (" + change + "): not the same variant";
  c.metrics.push_back(std::move(gone));
  MetricVerdict fresh = Describe(nullptr, rb, policy);
  JudgePresence(fresh, nullptr, rb, policy.min_samples);
  fresh.reason = "math mode changed (" + change + "): not the same variant";
  c.metrics.push_back(std::move(fresh));
}

Comparison Compare(const RunData& a, const RunData& b, const Policy& policy, bool across_hardware,
                   const History& history, bool require_known_moment) {
  const size_t runs_a = std::max(a.run_count, a.run_ids.size()), runs_b = std::max(b.run_count, b.run_ids.size());
  Comparison c;
  c.across_hardware = across_hardware;
  Differences(a, b, c);
  const auto base = Index(a), cand = Index(b);
  std::vector<size_t> tested, controls;
  for (const auto& k : OrderedKeys(a, b)) {
    const ResultRecord* ra = base.count(k) ? &base.at(k) : nullptr;
    const ResultRecord* rb = cand.count(k) ? &cand.at(k) : nullptr;
    if (ra && rb) {
      if (const std::string change = MathModeChange(*ra, *rb); !change.empty()) {
        AddIdentityChange(c, ra, rb, policy, change);
        continue;
      }
    }
    MetricVerdict m = Describe(ra, rb, policy);
    bool pending = false;
    if (!JudgePresence(m, ra, rb, policy.min_samples)) {
      if (!m.absolute && !m.control) SetRunMoment(m, history, k, *rb);
      m.baseline_runs = std::max(a.run_count, a.run_ids.size());
      Measure(m, *ra, *rb, policy.confidence);
      MeasureEquivalence(m, policy.alpha, [&](MetricVerdict& e, double conf) { Measure(e, *ra, *rb, conf); });
      ApplyNoiseFloor(m, history, k);
      // The control measures the machine's moment itself: judged as before.
      m.between_unknown =
          !m.control && std::min(m.processes_baseline, m.processes_candidate) < 2 && m.history_runs == 0;
      m.moment_unknown = require_known_moment && !m.control && !m.between_unknown && m.level == Level::kProcess &&
                         std::min(runs_a, runs_b) < 2 && !(m.run_var > 0) && m.history_runs == 0 &&
                         !(Constant(ra->samples) && Constant(rb->samples));
      pending = !MarkInformational(m);
    }
    c.metrics.push_back(std::move(m));
    if (pending) AddTested(c, &tested, &controls);
  }
  JudgeTested(c, tested, policy.alpha);
  SettleControls(c, controls, policy.alpha, /*paired=*/false);
  c.verdict = OverallVerdict(c);
  return c;
}

namespace {

// Medians per result key of one run's results.
std::map<std::string, double> Medians(const std::vector<ResultRecord>& results) {
  std::map<std::string, double> out;
  for (const auto& r : results)
    if (!r.samples.empty()) out[ResultKey(r)] = stats::Median(r.samples);
  return out;
}

// The per-pair changes of one metric, and the test on them.
void MeasurePairs(MetricVerdict& m, const std::vector<double>& d, double confidence) {
  m.tested = true;
  m.level = Level::kProcess;
  m.pairs = m.processes_baseline = m.processes_candidate = d.size();
  m.p_value = stats::WilcoxonSignedRank(d).p_value;
  if (d.size() >= 2) {  // the mean pair change's standard error (a t approximation of the signed-rank test)
    m.se = std::sqrt(Variance(d) / static_cast<double>(d.size()));
    m.df = static_cast<double>(d.size() - 1);
  }
  const auto hl = stats::HodgesLehmannPaired(d, confidence);
  if (m.absolute) {
    m.ratio = m.baseline_median != 0 ? m.candidate_median / m.baseline_median : 1.0;
    m.difference = hl.estimate;
    m.ci_low = hl.low;
    m.ci_high = hl.high;
  } else {
    m.ratio = std::exp(hl.estimate);
    m.ci_low = std::exp(hl.low);
    m.ci_high = std::exp(hl.high);
  }
}

std::vector<double> PairChanges(const std::string& key, bool absolute, const std::vector<std::map<std::string, double>>& a,
                                const std::vector<std::map<std::string, double>>& b) {
  std::vector<double> d;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    auto x = a[i].find(key), y = b[i].find(key);
    if (x == a[i].end() || y == b[i].end()) continue;
    if (absolute) {
      d.push_back(y->second - x->second);
    } else if (x->second > 0 && y->second > 0) {
      d.push_back(std::log(y->second / x->second));
    }
  }
  return d;
}

}  // namespace

Comparison ComparePaired(const PairedData& d, const Policy& policy, const History& history) {
  Comparison c;
  c.kind = VerdictKind::kInterleaved;
  Differences(d.a, d.b, c);
  const auto base = Index(d.a), cand = Index(d.b);
  std::vector<std::map<std::string, double>> ma, mb;
  for (const auto& r : d.a_pairs) ma.push_back(Medians(r));
  for (const auto& r : d.b_pairs) mb.push_back(Medians(r));
  std::vector<size_t> tested, controls;
  for (const auto& k : OrderedKeys(d.a, d.b)) {
    const ResultRecord* ra = base.count(k) ? &base.at(k) : nullptr;
    const ResultRecord* rb = cand.count(k) ? &cand.at(k) : nullptr;
    MetricVerdict m = Describe(ra, rb, policy);
    bool pending = false;
    if (!JudgePresence(m, ra, rb, policy.min_samples)) {
      const auto changes = PairChanges(k, m.absolute, ma, mb);
      if (changes.size() < kMinPairs) {
        m.verdict = Verdict::kInconclusive;
        m.reason = fmt::format("{} pair(s) with samples on both sides, need >= {}", changes.size(), kMinPairs);
      } else {
        MeasurePairs(m, changes, policy.confidence);
        MeasureEquivalence(m, policy.alpha, [&](MetricVerdict& e, double conf) { MeasurePairs(e, changes, conf); });
        ReportUnpairedFloor(m, history, k);
        pending = !MarkInformational(m);
      }
    }
    c.metrics.push_back(std::move(m));
    if (pending) AddTested(c, &tested, &controls);
  }
  JudgeTested(c, tested, policy.alpha);
  SettleControls(c, controls, policy.alpha, /*paired=*/true);
  c.verdict = OverallVerdict(c);
  return c;
}

}  // namespace perfbench
