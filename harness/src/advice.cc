#include "advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <tuple>

#include "report/format.h"

namespace perfbench {

namespace {

const MetricVerdict* Find(const Comparison& c, const VariantRef& v, const std::string& metric) {
  for (const auto& m : c.metrics)
    if (m.metric == metric && m.suite == v.workload->info.suite && m.workload == v.workload->info.name &&
        m.params == v.params)
      return &m;
  return nullptr;
}

void ReadPrimary(AdviceRow& row, const MetricVerdict& m) {
  row.unit = m.unit;
  row.higher_is_better = m.higher_is_better;
  row.verdict = m.verdict;
  row.pairs = m.pairs;
  row.baseline_median = m.baseline_median;
  row.candidate_median = m.candidate_median;
  if (!m.tested || !(m.ratio > 0)) {
    row.note = m.reason;
    return;
  }
  row.ratio = m.ratio;
  row.ci_low = m.ci_low;
  row.ci_high = m.ci_high;
  row.gain = m.higher_is_better ? m.ratio : 1 / m.ratio;
  // The reason repeats the change and interval the row shows: keep what follows.
  const size_t cut = m.reason.find("; ");
  if (m.verdict == Verdict::kInconclusive) row.note = cut == std::string::npos ? m.reason : m.reason.substr(cut + 2);
}

void ReadMemory(AdviceRow& row, const MetricVerdict& m) {
  row.memory_verdict = m.verdict;
  if (!m.tested || !(m.ratio > 0)) return;
  row.memory_ratio = m.ratio;
  row.memory_low = m.ci_low;
  row.memory_high = m.ci_high;
}

}  // namespace

std::vector<AdviceRow> AdviceRows(const Trial& trial, const Comparison& c) {
  std::vector<AdviceRow> rows;
  for (const auto& tv : trial.variants) {
    const WorkloadInfo& info = tv.baseline.workload->info;
    AdviceRow row;
    row.variant = tv.baseline.FullName();
    row.knob = trial.knob;
    row.setting = trial.setting;
    row.metric = PrimaryMetric(info);
    row.memory_metric = MemoryMetric(info);
    if (const MetricSpec* spec = info.FindMetric(row.metric)) row.higher_is_better = spec->better == Better::kHigher;
    if (!tv.skip.empty()) {
      row.verdict = Verdict::kSkipped;
      row.note = "skipped here: " + tv.skip;
    } else if (const MetricVerdict* m = Find(c, tv.baseline, row.metric)) {
      ReadPrimary(row, *m);
      if (const MetricVerdict* mem = Find(c, tv.baseline, row.memory_metric)) ReadMemory(row, *mem);
    } else {
      row.verdict = Verdict::kMissing;
      row.note = "not measured (the trial's processes stored no result for it)";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<AdviceRow> SkippedBaselineRows(const AdvicePlan& plan) {
  std::vector<AdviceRow> rows;
  for (const auto& [variant, why] : plan.skipped) {
    AdviceRow row;
    row.variant = variant.FullName();
    row.knob = row.setting = "-";
    row.metric = PrimaryMetric(variant.workload->info);
    row.verdict = Verdict::kSkipped;
    row.note = "baseline skipped here: " + why;
    rows.push_back(std::move(row));
  }
  return rows;
}

void RankAdvice(std::vector<AdviceRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const AdviceRow& a, const AdviceRow& b) {
    if (a.Measured() != b.Measured()) return a.Measured();
    if (!a.Measured()) return false;
    if (a.gain != b.gain) return a.gain > b.gain;
    return std::tie(a.variant, a.setting) < std::tie(b.variant, b.setting);
  });
}

namespace {

std::string Percent(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }

std::string Change(const AdviceRow& r) {
  if (!r.Measured()) return "-";
  return fmt::format("{} {} [{}, {}]", r.metric, Percent(r.ratio), Percent(r.ci_low), Percent(r.ci_high));
}

std::string Memory(const AdviceRow& r) {
  if (r.memory_metric.empty()) return "-";
  if (!(r.memory_ratio > 0)) return r.memory_metric + " not measured";
  return fmt::format("{} {} [{}, {}] {}", r.memory_metric, Percent(r.memory_ratio), Percent(r.memory_low),
                     Percent(r.memory_high), ToString(r.memory_verdict));
}

std::vector<std::vector<std::string>> Cells(const std::vector<AdviceRow>& rows) {
  std::vector<std::vector<std::string>> out;
  int rank = 0;
  for (const auto& r : rows) {
    out.push_back({r.Measured() ? std::to_string(++rank) : "-", r.variant, r.knob, r.setting, Change(r),
                   r.Measured() ? fmt::format("{:.3g}x", r.gain) : "-", std::string(ToString(r.verdict)),
                   Memory(r), OneLine(r.note)});
  }
  return out;
}

// The first line of the reading: the best improvement, or that none was found.
std::string Summary(const std::vector<AdviceRow>& rows) {
  for (const auto& r : rows)
    if (r.Measured() && r.verdict == Verdict::kImprovement)
      return fmt::format("Best here: {} on {} ({} {}, gain {:.3g}x).", r.setting, r.variant, r.metric,
                         Percent(r.ratio), r.gain);
  return "No setting measured better than its baseline here.";
}

const std::vector<std::string> kHeader{"rank", "variant",  "knob",   "setting", "change [95% CI]",
                                       "gain", "verdict", "memory", "note"};

}  // namespace

std::string AdviceText(const std::vector<AdviceRow>& rows, int rounds, bool markdown) {
  std::ostringstream o;
  const std::string how = fmt::format(
      "Each setting against its baseline over {} rounds of paired processes (Wilcoxon signed-rank, "
      "Hodges-Lehmann interval, Benjamini-Hochberg per row); gain > 1 is better; adopt an "
      "`improvement` whose memory change you can afford.",
      rounds);
  if (markdown) {
    o << "## perfbench advise\n\n" << Summary(rows) << " " << how << "\n\n|";
    for (const auto& h : kHeader) o << " " << h << " |";
    o << "\n|";
    for (size_t i = 0; i < kHeader.size(); ++i) o << " --- |";
    o << "\n";
    for (const auto& row : Cells(rows)) {
      o << "|";
      for (const auto& cell : row) o << " " << MdCell(cell) << " |";
      o << "\n";
    }
    return o.str();
  }
  if (MaxTableWidth() == 0) {  // --wide: every column
    TextTable t(kHeader);
    for (auto& row : Cells(rows)) t.AddRow(std::move(row));
    t.Print(o);
  } else {  // the variant and the note on a line under each row; the setting names its knob
    TextTable t({"rank", "setting", "change [95% CI]", "gain", "verdict", "memory"});
    size_t i = 0;
    for (auto& row : Cells(rows)) {
      const AdviceRow& r = rows[i++];
      t.AddRow({row[0], row[3], row[4], row[5], row[6], row[7]}, r.variant + (r.note.empty() ? "" : ": " + OneLine(r.note)));
    }
    t.Print(o);
  }
  o << "\n" << Summary(rows) << "\n" << how << "\n";
  return o.str();
}

nlohmann::json AdviceJson(const std::vector<AdviceRow>& rows, int rounds) {
  nlohmann::json out{{"schema_version", 1}, {"rounds", rounds}, {"rows", nlohmann::json::array()}};
  int rank = 0;
  const auto number = [](bool ok, double x) { return ok ? nlohmann::json(x) : nlohmann::json(nullptr); };
  for (const auto& r : rows) {
    const bool m = r.Measured(), mem = r.memory_ratio > 0;
    nlohmann::json memory = nullptr;
    if (!r.memory_metric.empty())
      memory = {{"metric", r.memory_metric},       {"ratio", number(mem, r.memory_ratio)},
                {"ci_low", number(mem, r.memory_low)}, {"ci_high", number(mem, r.memory_high)},
                {"verdict", ToString(r.memory_verdict)}};
    out["rows"].push_back({{"rank", m ? ++rank : 0},
                           {"variant", r.variant},
                           {"knob", r.knob},
                           {"setting", r.setting},
                           {"metric", r.metric},
                           {"unit", r.unit},
                           {"higher_is_better", r.higher_is_better},
                           {"baseline_median", number(m, r.baseline_median)},
                           {"candidate_median", number(m, r.candidate_median)},
                           {"ratio", number(m, r.ratio)},
                           {"ci_low", number(m, r.ci_low)},
                           {"ci_high", number(m, r.ci_high)},
                           {"gain", number(m, r.gain)},
                           {"verdict", ToString(r.verdict)},
                           {"pairs", r.pairs},
                           {"memory", memory},
                           {"note", r.note},
                           {"baseline_runs", r.baseline_runs},
                           {"candidate_runs", r.candidate_runs}});
  }
  return out;
}

}  // namespace perfbench
