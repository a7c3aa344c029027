#include "sources.h"

#include "report/format.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "cli.h"
#include "common.h"
#include "gate/window.h"
#include "report/gbench_import.h"
#include "perfbench/statistics.h"
#include "report/run_report.h"
#include "two_level.h"

namespace perfbench::cli {

nlohmann::ordered_json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read '" + path + "'");
  try {
    return nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("'" + path + "' is not valid JSON (" + std::string(e.what()) + ")");
  }
}

size_t RunDocument::ResultCount() const {
  size_t n = 0;
  for (const auto& r : runs) n += r.results.size();
  return n;
}

namespace {

// The runs of a baseline document: version 1 holds one, version 2 a list.
void BaselineRunsFromJson(const nlohmann::ordered_json& doc, RunDocument* d) {
  const auto& version = doc.contains("schema_version") ? doc["schema_version"] : nlohmann::ordered_json();
  if (version == 1) {
    d->runs.emplace_back();
    RunFromJson(doc, &d->runs.back().run, &d->runs.back().results);
    return;
  }
  if (version != kBaselineJsonSchemaVersion)
    throw std::invalid_argument("schema_version: expected 1 or " + std::to_string(kBaselineJsonSchemaVersion) +
                                ", got " + version.dump());
  const auto& runs = doc.contains("runs") ? doc["runs"] : nlohmann::ordered_json();
  if (!runs.is_array() || runs.empty()) throw std::invalid_argument("runs: expected a non-empty array");
  for (size_t i = 0; i < runs.size(); ++i) {
    nlohmann::ordered_json one = runs[i];
    if (!one.is_object()) throw std::invalid_argument("runs[" + std::to_string(i) + "]: expected an object");
    one["schema_version"] = kRunJsonSchemaVersion;
    d->runs.emplace_back();
    try {
      RunFromJson(one, &d->runs.back().run, &d->runs.back().results);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("runs[" + std::to_string(i) + "]: " + e.what());
    }
  }
}

}  // namespace

RunDocument ParseRunDocument(const nlohmann::ordered_json& doc, const std::string& path,
                             const std::string& gbench_suite) {
  RunDocument d;
  try {
    if (IsGoogleBenchmarkJson(doc)) {
      d.kind = "google-benchmark";
      d.runs.emplace_back();
      RunFromGoogleBenchmarkJson(doc, gbench_suite, &d.runs.back().run, &d.runs.back().results);
      return d;
    }
    if (doc.is_object() && doc.contains("kind")) {
      if (doc["kind"] != "perfbench-baseline")
        throw std::invalid_argument("kind: expected \"perfbench-baseline\", got " + doc["kind"].dump());
      const auto& b = doc.contains("baseline") ? doc["baseline"] : nlohmann::ordered_json();
      if (!b.is_object() || !b.contains("name") || !b["name"].is_string() || b["name"].get<std::string>().empty())
        throw std::invalid_argument("baseline.name: expected a non-empty string");
      d.kind = "baseline";
      d.baseline_name = b["name"].get<std::string>();
      d.baseline_created_at = b.value("created_at", "");
      BaselineRunsFromJson(doc, &d);
      return d;
    }
    d.kind = "run";
    d.runs.emplace_back();
    RunFromJson(doc, &d.runs.back().run, &d.runs.back().results);
  } catch (const std::invalid_argument& e) {  // one line whatever the file holds (it may quote its values)
    throw UsageError(OneLine("'" + path + "': " + e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(OneLine("'" + path + "': " + e.what()));
  }
  return d;
}

namespace {

bool SameMeasurements(const std::vector<ResultRecord>& a, const std::vector<ResultRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ResultKey(a[i]) != ResultKey(b[i]) || a[i].samples != b[i].samples || a[i].process != b[i].process ||
        a[i].status != b[i].status)
      return false;
  return true;
}

}  // namespace

void KeepIdentitiesHonest(Store& store, std::vector<Store::RunWithResults>& runs) {
  for (auto& r : runs) {
    if (r.run.uuid.empty()) continue;
    const auto id = store.FindRunByUuid(r.run.uuid);
    if (!id) continue;
    const RunRecord there = store.GetRun(*id);
    if (there.fingerprint != r.run.fingerprint || there.profile_key != r.run.profile_key ||
        !SameMeasurements(store.GetResults(*id), r.results))
      r.run.uuid = NewRunUuid();
  }
}

nlohmann::ordered_json BaselineToJson(const BaselineRecord& baseline, const std::vector<Store::RunWithResults>& runs) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = kBaselineJsonSchemaVersion;
  doc["kind"] = "perfbench-baseline";
  doc["baseline"] = {{"name", baseline.name}, {"created_at", baseline.created_at}};
  doc["runs"] = nlohmann::ordered_json::array();
  for (const auto& r : runs) {
    nlohmann::ordered_json body = RunToJson(r.run, r.results);
    body["run"].erase("id");
    doc["runs"].push_back({{"run", body["run"]}, {"results", body["results"]}});
  }
  return doc;
}

std::vector<Store::RunWithResults> BaselineRuns(Store& store, const BaselineRecord& baseline) {
  std::vector<Store::RunWithResults> out;
  for (int64_t id : baseline.run_ids) out.push_back({store.GetRun(id), store.GetResults(id)});
  return out;
}

bool LooksLikeFile(const std::string& ref) {
  return ref.find('/') != std::string::npos ||
         (ref.size() > 5 && ref.compare(ref.size() - 5, 5, ".json") == 0);
}

RunData LoadRunData(Store* store, const std::string& ref, const char* role) {
  RunData d;
  if (LooksLikeFile(ref)) {
    RunDocument doc = ParseRunDocument(ReadJsonFile(ref), ref);
    d.source = (doc.kind == "baseline" ? "baseline " + doc.baseline_name + " from " : "file ") + ref;
    d.run = doc.runs.back().run;  // the newest
    for (auto& r : doc.runs) d.results.insert(d.results.end(), r.results.begin(), r.results.end());
    d.run_count = doc.runs.size();
    return d;
  }
  if (!store) throw UsageError(std::string("no ") + role + " file '" + ref + "'");
  std::vector<int64_t> ids;
  if (ref.rfind("machine:", 0) == 0) {
    const std::string machine = ref.substr(8);
    for (const auto& r : store->ListRuns(-1, machine)) ids.push_back(r.id);
    if (ids.empty()) throw UsageError(std::string("no ") + role + " '" + ref + "': no runs of machine '" + machine +
                                      "' in " + store->path() + " (see `perfbench runs --machines`)");
    return LoadRuns(*store, ids, ref, role);
  }
  if (auto b = store->GetBaseline(ref)) {
    ids.assign(b->run_ids.rbegin(), b->run_ids.rend());  // newest first, as labels
    d.source = "baseline " + ref + (ids.size() > 1 ? " (" + std::to_string(ids.size()) + " runs)" : "");
  } else {
    ids = store->RunsWithLabel(ref);
  }
  if (ids.empty()) {
    auto id = store->ResolveRun(ref);
    if (!id)
      throw UsageError(std::string("no ") + role + " '" + ref + "': not a baseline name, label or run id in " +
                       store->path() + " (see `perfbench baseline list` and `perfbench runs`)");
    ids = {*id};
  }
  const std::string source = d.source;
  d = LoadRuns(*store, ids, ref, role);
  if (!source.empty()) d.source = source;
  return d;
}

VerdictKind KindOf(const std::string& ref, const RunData& d) {
  if (gate::RollingLabel(ref)) return VerdictKind::kRolling;
  return d.source.rfind("baseline ", 0) == 0 ? VerdictKind::kStoredBaseline : VerdictKind::kStoredRuns;
}

RunData LoadRuns(Store& store, const std::vector<int64_t>& ids, const std::string& ref, const char* role) {
  RunData d;
  d.run_ids = ids;
  d.run_count = ids.size();
  d.run = store.GetRun(ids.front());
  for (int64_t id : ids) {
    const RunRecord r = store.GetRun(id);
    if (r.profile_key != d.run.profile_key)
      throw IncomparableError(std::string(role) + " '" + ref + "' names runs on different hardware (runs " +
                              std::to_string(ids.front()) + " and " + std::to_string(id) + "); compare run ids");
    auto res = store.GetResults(id);
    d.results.insert(d.results.end(), res.begin(), res.end());
  }
  return d;
}

RunData LoadBaselineRef(Store* store, const std::string& ref, int last, const RunData& candidate, const Policy& policy) {
  const auto label = gate::RollingLabel(ref);
  if (!label) {
    if (last != 0) throw UsageError("--last applies to --baseline label:NAME");
    return LoadRunData(store, ref, "baseline");
  }
  if (!store) throw UsageError("label:" + *label + " needs a database");
  const int64_t before =
      candidate.run_ids.empty() ? 0 : *std::min_element(candidate.run_ids.begin(), candidate.run_ids.end());
  try {
    return gate::SelectWindow(*store, *label, last > 0 ? static_cast<size_t>(last) : gate::kDefaultWindowRuns,
                              candidate.run, policy, before)
        .data;
  } catch (const gate::WindowError& e) {
    throw InconclusiveError(e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

Policy LoadPolicy(const std::string& flag_value) {
  std::string path = flag_value;
  if (path.empty())
    if (const char* env = std::getenv("PERFBENCH_POLICY"); env && *env) path = env;
  if (path.empty()) return Policy::Default();
  try {
    return Policy::Load(path);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

std::string RenderComparison(const std::string& format, const Comparison& c, const RunData& a, const RunData& b,
                             bool color, bool only_changed) {
  if (format == "table") return ComparisonTable(c, a, b, color, only_changed);
  if (format == "markdown") return ComparisonMarkdown(c, a, b, only_changed);
  if (format == "json") return ComparisonJson(c, a, b, only_changed).dump(2) + "\n";
  if (format == "junit") return ComparisonJunit(c, a, b);
  return "";
}

void WriteAtomically(const std::string& path, const std::string& text, const std::string& flag) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  auto fail = [&]() {
    std::remove(tmp.c_str());
    return UsageError("cannot write " + flag + " '" + path + "'");
  };
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw fail();
    out << text;
    if (!out.flush()) throw fail();
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw fail();
}

void WriteComparisonReports(const po::variables_map& vm, const std::string& format, const Comparison& c, const RunData& a,
                  const RunData& b) {
  auto render = [&](const std::string& f, bool color) { return RenderComparison(f, c, a, b, color, false); };
  if (vm.count("junit")) WriteAtomically(vm["junit"].as<std::string>(), render("junit", false), "--junit");
  if (vm.count("markdown")) WriteAtomically(vm["markdown"].as<std::string>(), render("markdown", false), "--markdown");
  if (vm.count("json")) WriteAtomically(vm["json"].as<std::string>(), render("json", false), "--json");
  if (format == "none") return;
  if (vm.count("output"))
    WriteAtomically(vm["output"].as<std::string>(), render(format, false), "--output");
  else
    std::cout << render(format, StdoutIsTerminal());
}

int ComparisonExit(const Comparison& c, size_t failed, bool allow_inconclusive, bool require_mde) {
  return VerdictExit(c.verdict == Overall::kRegression, c.verdict == Overall::kInconclusive, failed, allow_inconclusive,
                     require_mde && c.verdict == Overall::kPass && !c.Unresolved().empty());
}

}  // namespace perfbench::cli
