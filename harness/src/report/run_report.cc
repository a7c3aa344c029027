#include "report/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "report/format.h"
#include "perfbench/statistics.h"
#include "two_level.h"

namespace perfbench {

std::vector<ResultRecord> ToResultRecords(const VariantOutcome& outcome, int process) {
  const WorkloadInfo& info = outcome.variant.workload->info;
  std::vector<ResultRecord> out;
  const bool any_samples = !outcome.samples.empty();
  for (const auto& m : info.metrics) {
    auto it = outcome.samples.find(m.name);
    if (any_samples && it == outcome.samples.end()) continue;  // not produced by this variant
    ResultRecord r;
    r.suite = info.suite;
    r.workload = info.name;
    r.params = outcome.variant.params;
    r.metric = m.name;
    r.unit = m.unit;
    r.higher_is_better = HigherIsBetter(m);
    r.status = outcome.status;
    r.reason = outcome.reason;
    if (it != outcome.samples.end()) r.samples = it->second;
    if (process != 0) r.process.assign(r.samples.size(), process);
    r.attributes = outcome.attributes;
    out.push_back(std::move(r));
  }
  return out;
}

ProcessSpread Spread(const ResultRecord& r) {
  const auto c = stats::EstimateComponents(stats::Groups(r.samples, r.process));
  ProcessSpread out;
  out.processes = c.processes;
  const double mean = r.samples.empty() ? 0 : std::fabs(stats::Mean(r.samples));
  if (mean > 0 && c.has_within) out.within_cv = std::sqrt(c.within) / mean;
  if (mean > 0 && c.has_between) out.between_cv = std::sqrt(c.between) / mean;
  out.has_within = c.has_within;
  out.has_between = c.has_between;
  return out;
}

namespace {

nlohmann::ordered_json ComponentsJson(const ResultRecord& r) {
  const ProcessSpread p = Spread(r);
  nlohmann::ordered_json j;
  j["processes"] = p.processes;
  j["within_cv"] = p.has_within ? nlohmann::ordered_json(p.within_cv) : nlohmann::ordered_json();
  j["between_cv"] = p.has_between ? nlohmann::ordered_json(p.between_cv) : nlohmann::ordered_json();
  return j;
}

}  // namespace

nlohmann::ordered_json RunToJson(const RunRecord& run, const std::vector<ResultRecord>& results) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = kRunJsonSchemaVersion;
  nlohmann::ordered_json r;
  r["id"] = run.id;
  r["uuid"] = run.uuid;
  r["machine"] = run.machine;
  r["label"] = run.label.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(run.label);
  r["started_at"] = run.started_at;
  r["finished_at"] = run.finished_at.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(run.finished_at);
  r["status"] = ToString(run.status);
  r["hostname"] = run.hostname;
  r["command"] = run.command;
  r["profile_key"] = run.profile_key;
  r["settings"] = run.settings;
  r["fingerprint"] = run.fingerprint;
  doc["run"] = std::move(r);
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& res : results) {
    nlohmann::ordered_json j;
    j["suite"] = res.suite;
    j["workload"] = res.workload;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [k, v] : res.params.items()) params[k] = v;
    j["params"] = std::move(params);
    j["metric"] = res.metric;
    j["unit"] = res.unit;
    j["higher_is_better"] = res.higher_is_better;
    j["status"] = ToString(res.status);
    j["reason"] = res.reason;
    j["samples"] = res.samples;
    const auto s = stats::Summarize(res.samples);
    j["n"] = s.n;
    if (s.n > 0) {
      j["median"] = s.median;
      j["mean"] = s.mean;
      j["stddev"] = s.stddev;
      j["min"] = s.min;
      j["max"] = s.max;
      j["iqr_rel"] = s.iqr_rel;
    } else {
      for (const char* k : {"median", "mean", "stddev", "min", "max", "iqr_rel"}) j[k] = nullptr;
    }
    j["noisy"] = s.noisy;
    if (!res.process.empty()) {
      j["process"] = res.process;
      j["components"] = ComponentsJson(res);
    }
    j["attributes"] = res.attributes;
    arr.push_back(std::move(j));
  }
  doc["results"] = std::move(arr);
  return doc;
}

namespace {

using Json = nlohmann::ordered_json;

const Json& Field(const Json& obj, const char* key, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) throw std::invalid_argument(where + ": missing \"" + key + "\"");
  return obj.at(key);
}

std::string Str(const Json& obj, const char* key, const std::string& where, bool nullable = false) {
  const auto& v = Field(obj, key, where);
  if (nullable && v.is_null()) return "";
  if (!v.is_string()) throw std::invalid_argument(where + "." + key + ": expected a string");
  return v.get<std::string>();
}

}  // namespace

namespace {

RunRecord RunFromJsonObject(const Json& r) {
  RunRecord out;
  out.label = Str(r, "label", "run", true);
  out.started_at = Str(r, "started_at", "run");
  out.finished_at = Str(r, "finished_at", "run", true);
  const auto status = ParseRunStatus(Str(r, "status", "run"));
  if (!status) throw std::invalid_argument("run.status: expected running, complete, aborted or imported");
  out.status = *status;
  out.hostname = r.value("hostname", "");
  out.uuid = r.contains("uuid") ? Str(r, "uuid", "run", /*nullable=*/true) : "";
  if (!out.uuid.empty() && (out.uuid.size() > 64 || out.uuid.find_first_not_of("0123456789abcdef-") != std::string::npos))
    throw std::invalid_argument("run.uuid: expected hexadecimal digits");
  out.machine = r.contains("machine") ? Str(r, "machine", "run", /*nullable=*/true) : out.hostname;
  out.command = r.value("command", "");
  out.profile_key = Str(r, "profile_key", "run");
  const Json& fingerprint = Field(r, "fingerprint", "run");
  if (!fingerprint.is_object()) throw std::invalid_argument("run.fingerprint: expected an object");
  out.fingerprint = nlohmann::json::parse(fingerprint.dump());
  const Json settings = r.value("settings", Json::object());
  if (!settings.is_object()) throw std::invalid_argument("run.settings: expected an object");
  out.settings = nlohmann::json::parse(settings.dump());
  if (!r.contains("uuid")) out.uuid = DerivedRunUuid(out);  // a run from before identities: every copy alike
  return out;
}

// A JSON object of strings, in order; `where` names it in errors.
std::vector<std::pair<std::string, std::string>> StringObject(const Json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": expected an object");
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_string()) throw std::invalid_argument(where + "." + it.key() + ": expected a string");
    out.emplace_back(it.key(), it.value().get<std::string>());
  }
  return out;
}

std::vector<double> Samples(const Json& samples, const std::string& where) {
  if (!samples.is_array()) throw std::invalid_argument(where + ".samples: expected an array of numbers");
  std::vector<double> out;
  for (const auto& s : samples) {
    if (!s.is_number() || !std::isfinite(s.get<double>()))
      throw std::invalid_argument(where + ".samples: expected an array of finite numbers");
    out.push_back(s.get<double>());
  }
  return out;
}

std::vector<int> Processes(const Json& p, size_t n, const std::string& where) {
  if (!p.is_array() || p.size() != n)
    throw std::invalid_argument(where + ".process: expected one process index per sample");
  std::vector<int> out;
  for (const auto& v : p) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000)
      throw std::invalid_argument(where + ".process: expected non-negative integers");
    out.push_back(v.get<int>());
  }
  return out;
}

ResultRecord ResultFromJson(const Json& j, const std::string& where) {
  ResultRecord res;
  res.suite = Str(j, "suite", where);
  res.workload = Str(j, "workload", where);
  res.metric = Str(j, "metric", where);
  res.unit = Str(j, "unit", where);
  const auto& hib = Field(j, "higher_is_better", where);
  if (!hib.is_boolean()) throw std::invalid_argument(where + ".higher_is_better: expected true or false");
  res.higher_is_better = hib.get<bool>();
  const auto status = ParseResultStatus(Str(j, "status", where));
  if (!status) throw std::invalid_argument(where + ".status: expected ok, failed or skipped");
  res.status = *status;
  res.reason = j.value("reason", "");
  for (const auto& [k, v] : StringObject(Field(j, "params", where), where + ".params")) res.params.Set(k, v);
  res.samples = Samples(Field(j, "samples", where), where);
  if (j.contains("process")) res.process = Processes(j.at("process"), res.samples.size(), where);
  if (j.contains("attributes"))
    for (const auto& [k, v] : StringObject(j.at("attributes"), where + ".attributes")) res.attributes[k] = v;
  return res;
}

}  // namespace

void RunFromJson(const nlohmann::ordered_json& doc, RunRecord* run, std::vector<ResultRecord>* results) {
  if (!doc.is_object()) throw std::invalid_argument("top level: expected a JSON object");
  const auto& version = Field(doc, "schema_version", "top level");
  if (!version.is_number_integer() || (version.get<int>() != 1 && version.get<int>() != kRunJsonSchemaVersion))
    throw std::invalid_argument("schema_version: expected 1 or " + std::to_string(kRunJsonSchemaVersion) +
                                ", got " + version.dump());
  RunRecord out = RunFromJsonObject(Field(doc, "run", "top level"));
  const auto& arr = Field(doc, "results", "top level");
  if (!arr.is_array()) throw std::invalid_argument("results: expected an array");
  std::vector<ResultRecord> rs;
  for (size_t i = 0; i < arr.size(); ++i) rs.push_back(ResultFromJson(arr[i], "results[" + std::to_string(i) + "]"));
  *run = std::move(out);
  *results = std::move(rs);
}

namespace {

// "3: ±1.1% / ±4.0%": processes, then the within- and between-process
// coefficients of variation.
std::string ProcessText(const ResultRecord& r) {
  const ProcessSpread p = Spread(r);
  if (p.processes < 2) return "1";
  auto cv = [](bool has, double v) { return has ? fmt::format("±{:.1f}%", 100 * v) : std::string("-"); };
  return fmt::format("{}: {} / {}", p.processes, cv(p.has_within, p.within_cv), cv(p.has_between, p.between_cv));
}

}  // namespace

void PrintResultsTable(const std::vector<ResultRecord>& results, std::ostream& out) {
  const bool processes = std::any_of(results.begin(), results.end(), [](const auto& r) { return !r.process.empty(); });
  // Within the table width, a reason goes on a line of its own under its
  // variant's first row; --wide keeps it in the status column.
  const bool inline_reasons = MaxTableWidth() == 0;
  std::vector<std::string> head = {"variant", "metric", "median", "spread", "n", "status"};
  if (processes) head.insert(head.begin() + 5, "k: within / between");
  TextTable t(head);
  std::string last_variant;
  for (const auto& r : results) {
    if (r.suite == kHarnessSuite) continue;  // the run's own time: PhaseSummary, history --suite harness
    const std::string key = r.suite + "/" + r.workload + " " + r.params.Encode();
    const bool first_row = key != last_variant;
    last_variant = key;
    const std::string status_text(ToString(r.status));
    std::string status = status_text, detail;
    if (!r.reason.empty() && inline_reasons) status += ": " + r.reason;
    if (!r.reason.empty() && !inline_reasons && first_row) detail = status_text + ": " + r.reason;
    if (r.status != ResultStatus::kOk && r.samples.empty()) {  // failed or skipped without samples: one row
      if (!first_row) continue;
      std::vector<std::string> row = {key, "-", "-", "-", "0", status};
      if (processes) row.insert(row.begin() + 5, "-");
      t.AddRow(row, detail);
      continue;
    }
    const auto s = stats::Summarize(r.samples);
    std::string median = s.n ? FormatValue(s.median, r.unit) : "-";
    const std::string spread = s.n > 1 ? fmt::format("±{:.1f}%{}", 100 * s.iqr_rel / 2, s.noisy ? " noisy" : "") : "-";
    std::vector<std::string> row = {key, r.metric + (r.higher_is_better ? " ↑" : " ↓"), median, spread,
                                    std::to_string(s.n), status};
    if (processes) row.insert(row.begin() + 5, ProcessText(r));
    t.AddRow(row, detail);
  }
  t.Print(out);
}

}  // namespace perfbench
