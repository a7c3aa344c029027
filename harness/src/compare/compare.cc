#include "compare/compare.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "fingerprint.h"
#include "inference.h"
#include "statistics.h"

namespace perfbench {

Policy Policy::Default() {
  Policy p;
  p.defaults = {{"throughput*", {false, 0.05}}, {"step_time*", {false, 0.05}}, {"latency*", {false, 0.05}},
                {"peak_memory", {false, 0.02}}, {"peak_rss", {false, 0.05, true}},   {"model_bytes", {false, 0.02}},
                {"loss_delta", {true, 0.02}},   {"loss", {true, 0.05, true}},        {"accuracy*", {true, 0.01}},
                {"*", {false, 0.05}}};
  return p;
}

namespace {

Threshold ParseThreshold(const nlohmann::ordered_json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": expected {\"relative\": x} or {\"absolute\": x}");
  bool informational = false;
  if (j.contains("informational")) {
    if (!j["informational"].is_boolean()) throw std::invalid_argument(where + ".informational: expected true or false");
    informational = j["informational"].get<bool>();
  }
  const bool rel = j.contains("relative"), abs = j.contains("absolute");
  if (rel == abs) throw std::invalid_argument(where + ": give exactly one of \"relative\" or \"absolute\"");
  const auto& v = j.at(rel ? "relative" : "absolute");
  if (!v.is_number() || v.get<double>() < 0) throw std::invalid_argument(where + ": threshold must be a number >= 0");
  return {abs, v.get<double>(), informational};
}

}  // namespace

Policy Policy::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read policy file '" + path + "'");
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("policy file '" + path + "' is not valid JSON: " + e.what());
  }
  if (!j.is_object() || j.value("schema_version", 0) != 1)
    throw std::invalid_argument("policy file '" + path + "': expected an object with \"schema_version\": 1");
  Policy p = Default();
  p.alpha = j.value("alpha", p.alpha);
  p.confidence = j.value("confidence", p.confidence);
  p.min_samples = j.value("min_samples", p.min_samples);
  if (!(p.alpha > 0 && p.alpha < 1) || !(p.confidence > 0 && p.confidence < 1) || p.min_samples < 2)
    throw std::invalid_argument("policy file '" + path + "': alpha and confidence must be in (0, 1), min_samples >= 2");
  if (j.contains("defaults")) {
    std::vector<std::pair<std::string, Threshold>> d;
    for (auto it = j["defaults"].begin(); it != j["defaults"].end(); ++it)
      d.emplace_back(it.key(), ParseThreshold(it.value(), "defaults." + it.key()));
    // User defaults first; built-in ones still answer for names they leave out.
    d.insert(d.end(), p.defaults.begin(), p.defaults.end());
    p.defaults = std::move(d);
  }
  if (j.contains("overrides")) {
    if (!j["overrides"].is_array()) throw std::invalid_argument("policy: \"overrides\" must be an array");
    for (size_t i = 0; i < j["overrides"].size(); ++i) {
      const auto& o = j["overrides"][i];
      const std::string where = "overrides[" + std::to_string(i) + "]";
      if (!o.is_object() || !o.contains("match") || !o["match"].is_string())
        throw std::invalid_argument(where + ": needs \"match\": \"suite/workload/params/metric glob\"");
      nlohmann::ordered_json t = o;
      t.erase("match");
      p.overrides.emplace_back(o["match"].get<std::string>(), ParseThreshold(t, where));
    }
  }
  return p;
}

Threshold Policy::For(const ResultRecord& r) const {
  Threshold t{false, 0.05};
  for (const auto& [glob, th] : defaults) {
    if (fnmatch(glob.c_str(), r.metric.c_str(), 0) == 0) {
      t = th;
      break;
    }
  }
  const std::string key = r.suite + "/" + r.workload + "/" + r.params.Encode() + "/" + r.metric;
  for (const auto& [glob, th] : overrides)
    if (fnmatch(glob.c_str(), key.c_str(), 0) == 0) t = th;
  return t;
}

int Comparison::Count(const std::string& v) const {
  return static_cast<int>(std::count_if(metrics.begin(), metrics.end(), [&](const auto& m) { return m.verdict == v; }));
}

namespace {

std::string Key(const ResultRecord& r) {
  std::string k = r.suite + "\x1f" + r.workload + "\x1f" + r.metric;
  for (const auto& [name, value] : r.params.AsMap()) k += "\x1f" + name + "=" + value;
  return k;
}

std::string JsonText(const nlohmann::json& fp, const std::string& field) {
  if (!fp.contains(field)) return "-";
  const auto& v = fp.at(field);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

const std::vector<std::string>& SoftwareFields() {
  static const std::vector<std::string> f = {"torch_version", "cuda_runtime", "cuda_driver", "cudnn_version",
                                             "nccl_version", "cuda_compiled", "compiler", "build_type",
                                             "perfbench_version", "git_sha", "intra_op_threads", "kernel", "os"};
  return f;
}

std::string Pct(double ratio) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", (ratio - 1) * 100);
  return b;
}
std::string Num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.3g", v);
  return b;
}
std::string Fixed(const char* fmt, double v) {
  char b[32];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

// Change text "-7.9% [-9.4%, -6.1%]" (relative) or "+0.003 [-0.001, +0.007]" (absolute).
std::string ChangeText(const MetricVerdict& m) {
  if (m.absolute) return Num(m.candidate_median - m.baseline_median) + " [" + Num(m.ci_low) + ", " + Num(m.ci_high) + "]";
  return Pct(m.ratio) + " [" + Pct(m.ci_low) + ", " + Pct(m.ci_high) + "]";
}

std::string LimitText(const MetricVerdict& m) {
  std::string t = !m.absolute ? "±" + Fixed("%.3g", m.threshold * 100) + "%"
                              : "±" + Fixed("%.3g", m.threshold) + (m.unit == "1" || m.unit.empty() ? "" : " " + m.unit);
  if (m.noise_floor > 0 && m.noise_floor >= m.threshold)
    t += " (run-to-run noise of " + std::to_string(m.baseline_runs) + " baseline runs)";
  return t;
}

void Judge(MetricVerdict& m, double alpha) {
  const double t = m.threshold;
  // Signed change, positive = better.
  double change, lo, hi;
  if (m.absolute) {
    change = m.candidate_median - m.baseline_median;
    lo = m.ci_low;
    hi = m.ci_high;
  } else {
    change = m.ratio - 1;
    lo = m.ci_low - 1;
    hi = m.ci_high - 1;
  }
  if (!m.higher_is_better) {
    change = -change;
    std::swap(lo, hi);
    lo = -lo;
    hi = -hi;
  }
  const std::string what = m.metric + " " + ChangeText(m) + ", q=" + Fixed("%.3g", m.q_value);
  const bool significant = m.q_value < alpha;
  if (significant && change < -t) {
    m.verdict = "regression";
    m.reason = what + ", limit " + LimitText(m);
  } else if (significant && change > t) {
    m.verdict = "improvement";
    m.reason = what + ", limit " + LimitText(m);
  } else if (lo >= -m.policy_threshold && hi <= m.policy_threshold) {
    // Equivalence is claimed at the policy's limit only, never at a noise-raised one.
    m.verdict = "unchanged";
    MetricVerdict policy_only = m;
    policy_only.threshold = m.policy_threshold;
    policy_only.noise_floor = 0;
    m.reason = what + ": interval within " + LimitText(policy_only);
  } else {
    m.verdict = "inconclusive";
    if (!significant && std::fabs(change) > t)
      m.reason = what + ": change beyond " + LimitText(m) + " but not significant (q >= " + Fixed("%g", alpha) + ")";
    else
      m.reason = what + ": interval crosses the " + LimitText(m) + " limit; more samples would decide";
  }
}

// Medians of each run's samples, per key (a run holds one row per key).
std::map<std::string, std::vector<double>> RunMedians(const RunData& d) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& r : d.results)
    if (!r.samples.empty()) out[Key(r)].push_back(stats::Median(r.samples));
  return out;
}

std::map<std::string, ResultRecord> Index(const RunData& d) {
  std::map<std::string, ResultRecord> out;
  for (const auto& r : d.results) {
    auto [it, inserted] = out.emplace(Key(r), r);
    if (!inserted) {  // pooled runs: concatenate samples, keep a failure visible
      it->second.samples.insert(it->second.samples.end(), r.samples.begin(), r.samples.end());
      if (r.status != "ok") {
        it->second.status = r.status;
        it->second.reason = r.reason;
      }
    }
  }
  return out;
}

}  // namespace

Comparison Compare(const RunData& a, const RunData& b, const Policy& policy, bool across_hardware) {
  Comparison c;
  c.across_hardware = across_hardware;
  for (const auto& f : HardwareFields()) {
    const std::string x = JsonText(a.run.fingerprint, f), y = JsonText(b.run.fingerprint, f);
    if (x != y) c.hardware.push_back({f, x, y});
  }
  if (!c.hardware.empty() && !across_hardware) {
    std::string fields;
    for (const auto& d : c.hardware) fields += (fields.empty() ? "" : "; ") + d.field + ": " + d.baseline + " vs " + d.candidate;
    throw std::invalid_argument("incomparable: the runs are on different hardware (" + fields +
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

  const auto base = Index(a), cand = Index(b);
  const auto base_runs = RunMedians(a);
  // Baseline order, then what only the candidate has; a set keeps this linear.
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto* d : {&a, &b})
    for (const auto& r : d->results)
      if (std::string k = Key(r); seen.insert(k).second) keys.push_back(std::move(k));

  std::vector<size_t> tested;
  for (const auto& k : keys) {
    const ResultRecord* ra = base.count(k) ? &base.at(k) : nullptr;
    const ResultRecord* rb = cand.count(k) ? &cand.at(k) : nullptr;
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
    m.threshold = th.value;
    m.policy_threshold = th.value;
    m.informational = th.informational;
    m.n_baseline = ra ? ra->samples.size() : 0;
    m.n_candidate = rb ? rb->samples.size() : 0;
    if (m.n_baseline) m.baseline_median = stats::Median(ra->samples);
    if (m.n_candidate) m.candidate_median = stats::Median(rb->samples);
    const bool baseline_empty = !ra || m.n_baseline == 0;
    if (rb && m.n_candidate == 0 && rb->status == "skipped" && ra && baseline_empty && ra->status == "skipped") {
      m.verdict = "skipped";  // skipped on both sides (e.g. needs a GPU): nothing to decide
      m.reason = "skipped in both: " + rb->reason;
    } else if (!rb || (m.n_candidate == 0 && rb->status == "skipped")) {
      m.verdict = "missing";
      m.reason = rb ? "skipped in the candidate: " + rb->reason : "not in the candidate";
    } else if (rb->status == "failed" && m.n_baseline > 0) {
      // A workload that used to work and now fails is the worst regression.
      m.verdict = "regression";
      m.reason = "failed in the candidate: " + rb->reason;
    } else if (rb->status == "failed" && m.n_candidate == 0) {
      m.verdict = "missing";  // no data on either side: cannot pass
      m.reason = "failed in the candidate: " + rb->reason + (ra ? "; no baseline samples either (" + ra->status + ")" : "");
    } else if (baseline_empty) {
      m.verdict = "new";
      m.reason = ra ? "no baseline samples (" + ra->status + (ra->reason.empty() ? "" : ": " + ra->reason) + ")"
                    : "not in the baseline";
    } else if (static_cast<int>(std::min(m.n_baseline, m.n_candidate)) < policy.min_samples) {
      m.verdict = "inconclusive";
      m.reason = std::to_string(m.n_baseline) + " vs " + std::to_string(m.n_candidate) +
                 " samples, need >= " + std::to_string(policy.min_samples) + " per side";
    } else {
      m.tested = true;
      m.ratio = m.baseline_median != 0 ? m.candidate_median / m.baseline_median : 1.0;
      if (auto it = base_runs.find(k); it != base_runs.end() && it->second.size() >= 2) {
        const auto [lo, hi] = std::minmax_element(it->second.begin(), it->second.end());
        m.baseline_runs = it->second.size();
        m.noise_floor = m.absolute ? *hi - *lo
                                   : (m.baseline_median != 0 ? (*hi - *lo) / std::fabs(m.baseline_median) : 0.0);
        m.threshold = std::max(m.threshold, m.noise_floor);
      }
      m.p_value = stats::MannWhitneyU(ra->samples, rb->samples).p_value;
      const bool positive = std::all_of(ra->samples.begin(), ra->samples.end(), [](double x) { return x > 0; }) &&
                            std::all_of(rb->samples.begin(), rb->samples.end(), [](double x) { return x > 0; });
      if (!m.absolute && positive) {
        std::vector<double> la, lb;
        for (double x : ra->samples) la.push_back(std::log(x));
        for (double x : rb->samples) lb.push_back(std::log(x));
        const auto s = stats::HodgesLehmannShift(la, lb, policy.confidence);
        m.ci_low = std::exp(s.low);
        m.ci_high = std::exp(s.high);
      } else {
        const auto s = stats::HodgesLehmannShift(ra->samples, rb->samples, policy.confidence);
        if (m.absolute) {
          m.ci_low = s.low;
          m.ci_high = s.high;
        } else {  // relative threshold on values that are not all positive
          const double scale = std::fabs(m.baseline_median) > 0 ? std::fabs(m.baseline_median) : 1.0;
          m.ci_low = 1 + s.low / scale;
          m.ci_high = 1 + s.high / scale;
        }
      }
      if (m.informational) {
        m.q_value = m.p_value;
        m.verdict = "info";
        m.reason = m.metric + " " + ChangeText(m) + " (informational: not judged)";
      } else {
        tested.push_back(c.metrics.size());
      }
    }
    c.metrics.push_back(std::move(m));
  }

  std::vector<double> ps;
  for (size_t i : tested) ps.push_back(c.metrics[i].p_value);
  const auto qs = stats::BenjaminiHochberg(ps);
  for (size_t j = 0; j < tested.size(); ++j) {
    auto& m = c.metrics[tested[j]];
    m.q_value = qs[j];
    if (across_hardware) {
      m.verdict = "compared";
      m.reason = m.metric + " " + ChangeText(m) + " (different hardware: no pass/fail)";
    } else {
      Judge(m, policy.alpha);
    }
  }
  if (across_hardware)
    c.verdict = "report";
  else if (c.Count("regression"))
    c.verdict = "regression";
  else if (c.Count("inconclusive") || c.Count("missing"))
    c.verdict = "inconclusive";
  else
    c.verdict = "pass";
  return c;
}

}  // namespace perfbench
