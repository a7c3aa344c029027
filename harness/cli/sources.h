// Where runs come from and go to: run ids, labels, baseline names and files.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "compare/compare.h"
#include "gate/history.h"
#include "store/store.h"

namespace perfbench::cli {

using gate::LoadHistory;
using gate::SameConditions;

// Version of the baseline export document. 2: "runs", every run of the
// baseline with its results (samples with their process indices); version 1
// files (one "run" and its "results") are still read.
inline constexpr int kBaselineJsonSchemaVersion = 2;

// Reads and parses a JSON file; UsageError (exit 2) naming the file otherwise.
nlohmann::ordered_json ReadJsonFile(const std::string& path);

// A parsed run document of any kind perfbench reads: `show --format json`,
// `baseline export`, or Google Benchmark JSON (suite `gbench_suite`).
struct RunDocument {
  std::string kind;  // "run" | "baseline" | "google-benchmark"
  std::string baseline_name, baseline_created_at;  // kind "baseline"
  std::vector<Store::RunWithResults> runs;          // one, or a baseline's runs oldest first
  size_t ResultCount() const;
};
RunDocument ParseRunDocument(const nlohmann::ordered_json& doc, const std::string& path,
                             const std::string& gbench_suite = "gbench");

// A file's run whose identity (uuid) the store holds already, but whose
// measurements or machine differ (an edited copy of a run), gets an identity of its
// own, so importing it adds a run; an unchanged copy keeps its identity and
// lands once.
void KeepIdentitiesHonest(Store& store, std::vector<Store::RunWithResults>& runs);

// The versioned baseline document: {"schema_version", "kind": "perfbench-baseline",
// "baseline": {"name", "created_at"}, "runs": [{"run": {...}, "results": [...]}]};
// each run's JSON without the database-local run id, so export -> import ->
// export gives the same bytes.
nlohmann::ordered_json BaselineToJson(const BaselineRecord& baseline, const std::vector<Store::RunWithResults>& runs);
// A stored baseline's runs, oldest first.
std::vector<Store::RunWithResults> BaselineRuns(Store& store, const BaselineRecord& baseline);

// True when `ref` names a file rather than a stored run: it ends in .json or
// contains a '/'.
bool LooksLikeFile(const std::string& ref);

// Resolves A or B of compare/gate, in this order: a file (see LooksLikeFile),
// a baseline name, a label (all its runs pooled), a run id or `latest`.
// `store` may be null when only files are possible. UsageError when none.
// `machine:NAME` is every run of machine NAME (a fleet's store), pooled.
RunData LoadRunData(Store* store, const std::string& ref, const char* role);
// The runs `ids` (newest first) pooled as one RunData; IncomparableError
// when they are of different hardware. `ref` and `role` name them in errors.
RunData LoadRuns(Store& store, const std::vector<int64_t>& ids, const std::string& ref, const char* role);

// A baseline reference that may be rolling: "label:NAME" is the window of
// NAME's last `last` usable runs for `candidate` (gate/window.h; older than
// the candidate's runs), anything else LoadRunData. InconclusiveError (exit
// 3) when the window has too few runs; UsageError for --last without label:.
RunData LoadBaselineRef(Store* store, const std::string& ref, int last, const RunData& candidate, const Policy& policy);
// The kind of verdict a comparison against `ref` (loaded as `d`) gives:
// rolling for label:NAME, stored baseline for a baseline name or export,
// else stored runs.
VerdictKind KindOf(const std::string& ref, const RunData& d);

// --policy FILE, else $PERFBENCH_POLICY, else Policy::Default(); UsageError
// naming the problem in the file.
Policy LoadPolicy(const std::string& flag_value);

// One comparison report: "table" (coloured when `color`), "markdown", "json" or "junit".
std::string RenderComparison(const std::string& format, const Comparison& c, const RunData& a, const RunData& b,
                             bool color, bool only_changed);

// The reports of gate and ab: --junit, --markdown, --json files, then
// --format on stdout or into --output.
void WriteComparisonReports(const po::variables_map& vm, const std::string& format, const Comparison& c,
                            const RunData& a, const RunData& b);
// VerdictExit (exit_code.h) of a comparison: 1 regression, 4 failed workload
// or process, 3 inconclusive (unless allowed) or, with `require_mde`, a pass
// that cannot resolve its mde; else 0.
int ComparisonExit(const Comparison& c, size_t failed, bool allow_inconclusive, bool require_mde = false);

// Writes through a temporary file and rename, so nobody reads half a file.
void WriteAtomically(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace perfbench::cli
