// The four renderings of a Comparison: table, markdown, JSON, JUnit XML.
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>
#include <sstream>

#include "compare/compare.h"
#include "report/format.h"

namespace perfbench {
namespace {

std::string Name(Verdict v) { return std::string(ToString(v)); }

bool Quiet(Verdict v) { return v == Verdict::kUnchanged || v == Verdict::kInfo || v == Verdict::kSkipped; }

// Worst first: by verdict, then by how far the change goes in the bad direction.
std::vector<const MetricVerdict*> Sorted(const Comparison& c, bool only_changed) {
  std::vector<const MetricVerdict*> out;
  for (const auto& m : c.metrics)
    if (!only_changed || !Quiet(m.verdict)) out.push_back(&m);
  auto badness = [](const MetricVerdict* m) {
    const double change = m->absolute ? m->candidate_median - m->baseline_median : m->ratio - 1;
    return m->higher_is_better ? -change : change;
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto* x, const auto* y) {
    if (x->verdict != y->verdict) return SeverityRank(x->verdict) < SeverityRank(y->verdict);
    return badness(x) > badness(y);
  });
  return out;
}

std::string RunName(const RunData& d) {
  std::string s = d.run.id ? "run " + std::to_string(d.run.id) : "";
  if (!d.source.empty()) s = d.source + (s.empty() ? "" : ", " + s);
  if (d.run_ids.size() > 1) s = std::to_string(d.run_ids.size()) + " runs pooled, newest " + std::to_string(d.run.id);
  if (!d.run.label.empty()) s += " (" + d.run.label + ")";
  return s;
}

std::string Summary(const Comparison& c) {
  std::ostringstream o;
  o << "verdict: " << ToString(c.verdict) << " - ";
  bool first = true;
  for (Verdict v : AllVerdicts()) {
    if (int n = c.Count(v)) {
      o << (first ? "" : ", ") << n << " " << ToString(v);
      first = false;
    }
  }
  return o.str();
}

std::string Median(const MetricVerdict& m, bool candidate) {
  const size_t n = candidate ? m.n_candidate : m.n_baseline;
  return n ? FormatValue(candidate ? m.candidate_median : m.baseline_median, m.unit) : "-";
}

std::string MdeText(const MetricVerdict& m) {
  if (!m.has_mde) return "-";
  return m.absolute ? fmt::format("{:.3g}", m.mde) : fmt::format("{:.1f}%", 100 * m.mde);
}

bool Judged(const MetricVerdict& m) { return m.tested && !m.informational && !m.control; }

}  // namespace

std::string DetectableHeadline(const Comparison& c, const std::string& who) {
  if (c.across_hardware) return "";
  for (const char* pattern : {"throughput*", "step_time*", "*"}) {
    std::vector<const MetricVerdict*> group;
    for (const auto& m : c.metrics)
      if (Judged(m) && !m.absolute && fnmatch(pattern, m.metric.c_str(), 0) == 0) group.push_back(&m);
    if (group.empty()) continue;
    const std::string name = std::string(pattern) == "*" ? "" : std::string(pattern).substr(0, std::strlen(pattern) - 1) + " ";
    const auto unknown = std::count_if(group.begin(), group.end(), [](const auto* m) { return !m->has_mde; });
    if (unknown > 0)
      return fmt::format("{} cannot state the {}regression it would catch: {} of {} metrics have {}", who, name, unknown,
                         group.size(),
                         std::any_of(group.begin(), group.end(), [](const auto* m) { return m->moment_unknown; })
                             ? "one run a side, no history"
                             : "one process on a side");
    const auto* worst = *std::max_element(group.begin(), group.end(), [](const auto* x, const auto* y) { return x->mde < y->mde; });
    return fmt::format("{} catches {}regressions of {:.1f}% or more ({:.0f}% power; the least sensitive of {} metrics)",
                       who, name, 100 * worst->mde, 100 * kMdePower, group.size());
  }
  return "";
}

std::string UnresolvedNote(const Comparison& c) {
  if (c.verdict != Overall::kPass) return "";
  const auto un = c.Unresolved();
  if (un.empty()) return "";
  const auto* worst = *std::max_element(un.begin(), un.end(), [](const auto* x, const auto* y) {
    return !x->has_mde ? false : !y->has_mde ? true : x->mde < y->mde;
  });
  const std::string what = worst->suite + "/" + worst->workload + "/" + worst->params.Encode() + " " + worst->metric;
  if (!worst->has_mde)
    return fmt::format("pass, but cannot resolve any change of {} ({})", what,
                       worst->moment_unknown ? "one run a side, no earlier runs here" : "one process on a side");
  return fmt::format("pass, but cannot resolve {}: {} of {} metrics have a detectable effect above the policy's mde "
                     "(worst: {}, policy mde {})",
                     MdeText(*worst), un.size(), c.metrics.size(), what,
                     worst->absolute ? fmt::format("{:.3g}", worst->policy_mde) : fmt::format("{:.1f}%", 100 * worst->policy_mde));
}

namespace {

// "1.23x [1.19, 1.27] slower" for a ratio metric; "+0.012 [-0.01, 0.03]" for an absolute one.
std::string ChangeText(const MetricVerdict& m) {
  if (m.absolute) return fmt::format("{:+.3g} [{:.3g}, {:.3g}]", m.difference, m.ci_low, m.ci_high);
  if (!(m.ratio > 0)) return FormatValue(m.candidate_median, m.unit);
  // How many times slower (worse) or faster (better): always >= 1.
  const bool worse = m.higher_is_better ? m.ratio < 1 : m.ratio > 1;
  const bool invert = m.ratio < 1;
  const double f = invert ? 1 / m.ratio : m.ratio;
  double lo = m.ci_low, hi = m.ci_high;
  if (invert) std::tie(lo, hi) = std::pair(hi > 0 ? 1 / hi : 0.0, lo > 0 ? 1 / lo : 0.0);
  const bool time_like = m.metric.find("time") != std::string::npos || m.metric.find("throughput") != std::string::npos;
  const char* word = time_like ? (worse ? "slower" : "faster") : (worse ? "worse" : "better");
  return fmt::format("{:.2f}x [{:.2f}, {:.2f}] {}", f, lo, hi, word);
}

const MetricVerdict* Headline(const std::vector<const MetricVerdict*>& ms) {
  for (const char* pattern : {"throughput*", "step_time*", "time*", "*"})
    for (const auto* m : ms)
      if (fnmatch(pattern, m->metric.c_str(), 0) == 0) return m;
  return nullptr;
}

}  // namespace

std::vector<std::string> WorkloadSummaries(const Comparison& c) {
  std::vector<std::string> keys;
  std::map<std::string, std::vector<const MetricVerdict*>> by;
  for (const auto& m : c.metrics) {
    if (!Judged(m)) continue;
    const std::string key = m.suite + "/" + m.workload + "\t" + m.params.Encode();
    if (by[key].empty()) keys.push_back(key);
    by[key].push_back(&m);
  }
  std::vector<std::string> out;
  for (const auto& key : keys) {
    const auto& ms = by[key];
    const MetricVerdict* head = Headline(ms);
    const MetricVerdict* worst = *std::min_element(ms.begin(), ms.end(), [](const auto* x, const auto* y) {
      return SeverityRank(x->verdict) < SeverityRank(y->verdict);
    });
    if (SeverityRank(worst->verdict) >= SeverityRank(head->verdict)) worst = head;
    std::string values;
    for (const auto& [k, v] : head->params.items()) values += (values.empty() ? "" : "/") + v;
    out.push_back(fmt::format("{}/{}{}{}: {} {}: {}{}", head->suite, head->workload, values.empty() ? "" : " ", values,
                              head->metric, ChangeText(*head), ToString(worst->verdict),
                              worst == head ? "" : " (" + worst->metric + ")"));
  }
  return out;
}

std::string MdCell(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '|' || ch == '\\') o += '\\';
    o += (ch == '\n' || ch == '\r') ? ' ' : ch;
  }
  return o;
}

namespace {

std::string Xml(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') o += ' ';
        else o += ch;
    }
  }
  return o;
}

}  // namespace

std::string ComparisonTable(const Comparison& c, const RunData& a, const RunData& b, bool color, bool only_changed) {
  std::ostringstream o;
  o << "baseline  " << RunName(a) << "  " << a.run.started_at << "\n"
    << "candidate " << RunName(b) << "  " << b.run.started_at << "\n";
  if (!c.hardware.empty()) {
    o << "different hardware (ratios only, no pass/fail):\n";
    for (const auto& d : c.hardware) o << "  " << d.field << ": " << d.baseline << " -> " << d.candidate << "\n";
  }
  if (c.software.empty()) {
    o << "same software and settings\n";
  } else {
    o << "differences:\n";
    for (const auto& d : c.software) o << "  " << d.field << ": " << d.baseline << " -> " << d.candidate << "\n";
  }
  for (const auto& change : c.machine_changes) o << change << "\n";
  o << "kind: " << KindNote(c.kind) << "\n\n";
  // Within the table width, the reason of a verdict that is not "unchanged"
  // goes on a line of its own under its row; --wide keeps the column.
  const bool inline_reasons = MaxTableWidth() == 0;
  std::vector<std::string> head = {"verdict", "variant", "metric", "baseline", "candidate", "mde"};
  if (inline_reasons) head.push_back("reason");
  TextTable t(head);
  for (const auto* m : Sorted(c, only_changed)) {
    std::string v = Name(m->verdict);
    if (color) {
      const char* code = m->verdict == Verdict::kRegression    ? "31"
                         : m->verdict == Verdict::kImprovement ? "32"
                         : m->verdict == Verdict::kInconclusive ? "33"
                                                                : nullptr;
      if (code) v = std::string("\033[") + code + "m" + v + "\033[0m";
    }
    std::vector<std::string> row = {v, m->suite + "/" + m->workload + " " + m->params.Encode(), m->metric,
                                    Median(*m, false), Median(*m, true), MdeText(*m)};
    const bool quiet = m->verdict == Verdict::kUnchanged || m->verdict == Verdict::kInfo ||
                       m->verdict == Verdict::kSkipped;
    if (inline_reasons) row.push_back(m->reason);
    t.AddRow(row, inline_reasons || quiet ? "" : m->reason);
  }
  t.Print(o);
  o << "\n" << Summary(c) << "\n";
  if (const std::string h = DetectableHeadline(c, "this comparison"); !h.empty()) o << h << "\n";
  if (const std::string u = UnresolvedNote(c); !u.empty()) o << u << "\n";
  if (const auto lines = WorkloadSummaries(c); !lines.empty()) {
    o << "\n";
    for (const auto& line : lines) o << line << "\n";
  }
  return o.str();
}

std::string ComparisonMarkdown(const Comparison& c, const RunData& a, const RunData& b, bool only_changed) {
  std::ostringstream o;
  o << "### perfbench: " << ToString(c.verdict) << "\n\n"
    << "Baseline " << RunName(a) << ", candidate " << RunName(b) << ". " << Summary(c) << ".\n\n"
    << "Kind: " << MdCell(KindNote(c.kind)) << ".\n\n";
  if (const std::string h = DetectableHeadline(c, "This comparison"); !h.empty()) o << h << ".\n\n";
  if (const std::string u = UnresolvedNote(c); !u.empty()) o << "**" << MdCell(u) << "**\n\n";
  for (const auto& change : c.machine_changes) o << "**" << MdCell(change) << "**\n\n";
  for (const auto& line : WorkloadSummaries(c)) o << "- " << MdCell(line) << "\n";
  if (!c.metrics.empty()) o << "\n";
  if (!c.software.empty() || !c.hardware.empty()) {
    o << "| differs | baseline | candidate |\n|---|---|---|\n";
    for (const auto* list : {&c.hardware, &c.software})
      for (const auto& d : *list)
        o << "| " << MdCell(d.field) << " | " << MdCell(d.baseline) << " | " << MdCell(d.candidate) << " |\n";
    o << "\n";
  }
  o << "| verdict | workload | params | metric | baseline | candidate | mde | reason |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto* m : Sorted(c, only_changed)) {
    const std::string icon = m->verdict == Verdict::kRegression    ? "🔴 "
                             : m->verdict == Verdict::kImprovement ? "🟢 "
                             : m->verdict == Verdict::kInconclusive ? "🟡 "
                                                                    : "";
    o << "| " << icon << Name(m->verdict) << " | " << MdCell(m->suite + "/" + m->workload) << " | "
      << MdCell(m->params.Encode()) << " | " << MdCell(m->metric) << " | " << MdCell(Median(*m, false)) << " | "
      << MdCell(Median(*m, true)) << " | " << MdeText(*m) << " | " << MdCell(m->reason) << " |\n";
  }
  return o.str();
}

namespace {

nlohmann::ordered_json Num(double v, bool present) {
  return present && std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

nlohmann::ordered_json MetricJson(const MetricVerdict& m) {
  auto num = Num;
    nlohmann::ordered_json j;
    j["suite"] = m.suite;
    j["workload"] = m.workload;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [k, v] : m.params.items()) params[k] = v;
    j["params"] = params;
    j["metric"] = m.metric;
    j["unit"] = m.unit;
    j["higher_is_better"] = m.higher_is_better;
    j["baseline_median"] = num(m.baseline_median, m.n_baseline > 0);
    j["candidate_median"] = num(m.candidate_median, m.n_candidate > 0);
    j["n_baseline"] = m.n_baseline;
    j["n_candidate"] = m.n_candidate;
    j["ratio"] = num(m.ratio, m.tested);
    j["interval_kind"] = m.absolute ? "difference" : "ratio";
    j["ci_low"] = num(m.ci_low, m.tested);
    j["ci_high"] = num(m.ci_high, m.tested);
    j["eq_low"] = num(m.eq_low, m.has_eq);
    j["eq_high"] = num(m.eq_high, m.has_eq);
    j["eq_confidence"] = num(m.eq_confidence, m.has_eq);
    j["p_value"] = num(m.p_value, m.tested);
    j["q_value"] = num(m.q_value, m.tested && !m.informational);
    j["threshold"] = m.threshold;
    j["policy_threshold"] = m.policy_threshold;
    j["margin"] = m.Margin();
    j["noise_floor"] = num(m.noise_floor, m.history_runs > 0 && m.tested);
    j["floor_for_test"] = num(m.floor_for_test, m.history_runs > 0 && m.tested);
    j["history_runs"] = m.history_runs;
    j["level"] = !m.tested ? nlohmann::ordered_json() : m.level == Level::kProcess ? "process" : "within-process";
    j["processes_baseline"] = m.processes_baseline;
    j["processes_candidate"] = m.processes_candidate;
    j["threshold_kind"] = m.informational ? "informational" : m.absolute ? "absolute" : "relative";
    j["control"] = m.control;
    j["mde"] = num(m.mde, m.has_mde);
    j["policy_mde"] = m.policy_mde;
    j["se"] = num(m.se, m.has_mde);
    j["df"] = num(m.df, m.has_mde);
    j["verdict"] = Name(m.verdict);
    j["reason"] = m.reason;
  return j;
}

}  // namespace

nlohmann::ordered_json ComparisonJson(const Comparison& c, const RunData& a, const RunData& b, bool only_changed) {
  auto run = [](const RunData& d) {
    nlohmann::ordered_json j;
    j["source"] = d.source.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(d.source);
    j["id"] = d.run.id ? nlohmann::ordered_json(d.run.id) : nlohmann::ordered_json();
    j["run_ids"] = d.run_ids;
    j["label"] = d.run.label.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(d.run.label);
    j["started_at"] = d.run.started_at;
    j["profile_key"] = d.run.profile_key;
    j["fingerprint"] = d.run.fingerprint;
    j["settings"] = d.run.settings;
    return j;
  };
  nlohmann::ordered_json doc;
  // 2: per metric level, processes_*, policy_threshold, history_runs and the
  // equivalence interval eq_* (baseline_runs is gone: the floor is learned
  // from history). 3: machine_changes (the control), and `control` per metric.
  // 4: per metric mde, policy_mde, se, df (the detectable effect);
  // detectable (the headline) and unresolved (a pass that cannot resolve
  // its policy's mde; null otherwise). 5: kind (VerdictKind: interleaved,
  // stored_baseline, rolling_baseline, stored_runs).
  doc["schema_version"] = 5;
  doc["baseline"] = run(a);
  doc["candidate"] = run(b);
  doc["verdict"] = ToString(c.verdict);
  doc["kind"] = ToString(c.kind);
  nlohmann::ordered_json diffs = nlohmann::ordered_json::array();
  for (const auto* list : {&c.hardware, &c.software})
    for (const auto& d : *list) diffs.push_back({{"field", d.field}, {"baseline", d.baseline}, {"candidate", d.candidate}});
  doc["differences"] = diffs;
  doc["machine_changes"] = c.machine_changes;
  doc["detectable"] = DetectableHeadline(c, "this comparison");
  const std::string unresolved = UnresolvedNote(c);
  doc["unresolved"] = unresolved.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(unresolved);
  nlohmann::ordered_json ms = nlohmann::ordered_json::array();
  for (const auto* m : Sorted(c, only_changed)) {
    ms.push_back(MetricJson(*m));
  }
  doc["metrics"] = ms;
  return doc;
}

std::string ComparisonJunit(const Comparison& c, const RunData& a, const RunData& b) {
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\"perfbench compare\" tests=\"" << c.metrics.size() << "\" failures=\""
    << c.Count(Verdict::kRegression) << "\">\n";
  o << "  <testsuite name=\"" << Xml("perfbench " + RunName(a) + " vs " + RunName(b)) << "\" tests=\""
    << c.metrics.size() << "\" failures=\"" << c.Count(Verdict::kRegression) << "\" errors=\"0\" skipped=\""
    << c.Count(Verdict::kInconclusive) + c.Count(Verdict::kMissing) << "\">\n";
  o << "    <properties><property name=\"kind\" value=\"" << ToString(c.kind) << "\"/></properties>\n";
  for (const auto& m : c.metrics) {
    o << "    <testcase classname=\"" << Xml(m.suite + "." + m.workload + "." + m.params.Encode()) << "\" name=\""
      << Xml(m.metric) << "\">";
    if (m.verdict == Verdict::kRegression)
      o << "<failure message=\"" << Xml(m.reason) << "\" type=\"regression\"/>";
    else if (m.verdict == Verdict::kInconclusive || m.verdict == Verdict::kMissing)
      o << "<skipped message=\"" << Xml(Name(m.verdict) + ": " + m.reason) << "\"/>";
    else
      o << "<system-out>" << Xml(Name(m.verdict) + ": " + m.reason) << "</system-out>";
    o << "</testcase>\n";
  }
  o << "  </testsuite>\n</testsuites>\n";
  return o.str();
}

}  // namespace perfbench
