// A run as a document: the versioned JSON of `perfbench show --format json`
// (also the import format) and the console table.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner.h"
#include "store/store.h"

namespace perfbench {

// Version of the run JSON document. Bump on any incompatible change.
// 2 adds run.uuid (the run's identity across stores) and run.machine; version
// 1 documents are still read (their runs get a fresh identity on import).
inline constexpr int kRunJsonSchemaVersion = 2;

// One result row per declared metric of a variant that produced samples; a
// failed or skipped variant with no samples gets one row per declared metric
// carrying its status and reason.
// Samples are marked as measured by process `process` (0 leaves the marks empty).
std::vector<ResultRecord> ToResultRecords(const VariantOutcome& outcome, int process = 0);

// A result's spread by level: processes, and the within- and between-process
// standard deviations relative to the mean (from the variance components).
struct ProcessSpread {
  size_t processes = 0;
  double within_cv = 0, between_cv = 0;
  bool has_within = false, has_between = false;
};
ProcessSpread Spread(const ResultRecord& r);

nlohmann::ordered_json RunToJson(const RunRecord& run, const std::vector<ResultRecord>& results);
// Parses and validates a run document (ordered, so params keep their order); throws std::invalid_argument naming the
// first problem ("results[3].samples: expected an array of numbers").
void RunFromJson(const nlohmann::ordered_json& doc, RunRecord* run, std::vector<ResultRecord>* results);

// workload | params | metric | median | spread | n | status.
void PrintResultsTable(const std::vector<ResultRecord>& results, std::ostream& out);

}  // namespace perfbench
