#include "paired_runs.h"

#include <unistd.h>

#include <fmt/format.h>

#include <iostream>
#include <set>
#include <random>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "cli.h"
#include "common.h"
#include "processes.h"
#include "gate/history.h"
#include "store/records.h"

namespace perfbench::cli {

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

void CheckPassThrough(const std::vector<std::string>& args, const std::string& where) {
  for (const auto& a : args)
    for (const char* own : {"--db", "--label", "--format", "--processes"})
      if (a == own || a.rfind(std::string(own) + "=", 0) == 0)
        throw UsageError(std::string(own) + where + " is set for each side of the pairs");
}

Side MakeSide(const std::string& name, const std::string& bin, const std::string& flag, const std::string& label,
              const std::string& db,
              const std::vector<std::string>& common, const std::vector<std::string>& extra,
              std::vector<std::pair<std::string, std::string>> env) {
  if (access(bin.c_str(), X_OK) != 0) throw UsageError(flag + " '" + bin + "' is not an executable");
  Side s;
  s.name = name;
  s.bin = bin;
  s.label = label;
  s.args = {"run", "--db", db, "--label", label, "--format", "none", "--processes", "1"};  // a pair's side is one process
  s.args.insert(s.args.end(), common.begin(), common.end());
  s.args.insert(s.args.end(), extra.begin(), extra.end());
  s.env = std::move(env);
  return s;
}

std::vector<bool> Orders(int pairs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<bool> b_first(static_cast<size_t>(pairs), false);
  for (int i = 0; i < pairs / 2; ++i) b_first[static_cast<size_t>(i)] = true;
  if (pairs % 2) b_first.back() = rng() % 2 == 1;
  // A seeded Fisher-Yates with a portable generator.
  for (size_t i = b_first.size(); i > 1; --i) {
    const size_t j = rng() % i;
    const bool t = b_first[i - 1];
    b_first[i - 1] = b_first[j];
    b_first[j] = t;
  }
  return b_first;
}

namespace {

// Runs one process of `side` and returns its run id (the newest with its
// label); a process that failed to finish counts in `failed`.
int64_t RunOne(Store& store, const Side& side, int pair, int pairs, size_t* failed) {
  const std::string& name = side.name;
  std::vector<std::string> argv = side.args;
  argv.insert(argv.begin(), side.bin);
  const StoredProcess p = RunStoredProcess(store, argv, side.env, side.label);
  std::cerr << "pair " << pair + 1 << "/" << pairs << ": " << name << (p.failure.empty() ? "" : " " + p.failure) << "\n";
  if (p.exit_code == kExitUsage && pair == 0)
    throw UsageError(std::string("side ") + name + " refused its arguments (`" + side.bin + " run ...` exited 2)");
  if (!p.run_id)
    throw std::runtime_error(std::string("side ") + name + " (" + side.bin + ") stored no run" +
                             (p.failure.empty() ? "" : ": it " + p.failure));
  // Exit 4 is a failed workload (recorded in the run); anything else a failed process.
  if (!p.failure.empty() && p.exit_code != kExitRuntime) ++*failed;
  if (!p.complete)
    throw std::runtime_error(std::string("side ") + name + " left run " + std::to_string(p.run_id) +
                             " unfinished" + (p.failure.empty() ? "" : ": it " + p.failure));
  return p.run_id;
}

// The variants a side measured (samples stored), as VariantKeys.
std::set<std::string> Measured(const std::vector<ResultRecord>& results) {
  std::set<std::string> out;
  for (const auto& r : results)
    if (!r.samples.empty() && !AroundRun(r.suite)) out.insert(VariantKey(r.suite, r.workload, r.params));
  return out;
}

// After the first pair: two sides that measured no variant in common have
// nothing to judge, however many pairs follow.
void CheckOverlap(const PairedData& d, const Side& a, const Side& b) {
  const auto x = Measured(d.a_pairs.front()), y = Measured(d.b_pairs.front());
  if (x.empty() || y.empty()) return;  // a side that measured nothing fails on its own
  for (const auto& k : x)
    if (y.count(k)) return;
  throw UsageError(fmt::format(
      "{} and {} measured no variant in common (e.g. {} and {}): nothing to judge. The model suite names a "
      "variant by the model's name (export-model.py --name), else by its file's name",
      a.name, b.name, *x.begin(), *y.begin()));
}

}  // namespace

PairedData RunPairs(Store& store, const Side& a, const Side& b, int pairs, uint64_t seed, size_t* failed) {
  PairedData d;
  std::vector<int64_t> ids_a, ids_b;
  const auto orders = Orders(pairs, seed);
  for (int i = 0; i < pairs; ++i) {
    int64_t ia = 0, ib = 0;
    if (orders[static_cast<size_t>(i)]) {
      ib = RunOne(store, b, i, pairs, failed);
      ia = RunOne(store, a, i, pairs, failed);
    } else {
      ia = RunOne(store, a, i, pairs, failed);
      ib = RunOne(store, b, i, pairs, failed);
    }
    for (auto [id, data, list, ids] : {std::tuple{ia, &d.a, &d.a_pairs, &ids_a}, std::tuple{ib, &d.b, &d.b_pairs, &ids_b}}) {
      const RunRecord r = store.GetRun(id);
      *failed += static_cast<size_t>(r.failed_results > 0);
      list->push_back(store.GetResults(id));
      data->results.insert(data->results.end(), list->back().begin(), list->back().end());
      ids->insert(ids->begin(), id);
      data->run = r;
    }
    if (i == 0) CheckOverlap(d, a, b);
  }
  d.a.run_ids = ids_a;
  d.b.run_ids = ids_b;
  d.a.run_count = d.b.run_count = static_cast<size_t>(pairs);
  d.a.source = a.label + " (" + std::to_string(pairs) + " runs)";
  d.b.source = b.label + " (" + std::to_string(pairs) + " runs)";
  return d;
}

History SideAHistory(Store& store, const PairedData& d) {
  RunData runs;
  runs.run = d.a.run;
  runs.run_ids = d.a.run_ids;
  RunData label = runs;
  label.run_ids.clear();
  return gate::LoadHistory(store, runs, label);
}

}  // namespace perfbench::cli
