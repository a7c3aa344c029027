// The interleaved engine under `ab` and `gate --reference-bin`: N pairs of
// processes, each pair A then B or B then A in a seeded, balanced order,
// back to back, every process a `BIN run --processes 1` of one selection
// stored under its side's label. Drift of the machine between pairs cancels
// in the pair ratios ComparePaired judges.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compare/compare.h"
#include "store/store.h"

namespace perfbench::cli {

// One side of the pairs: a binary, the label of its runs, its arguments
// after `run` (ab's own first: --db, --label, --format none, --processes 1)
// and environment added to ours.
struct Side {
  std::string bin, label;
  std::string name;  // in progress lines and errors: "A", "B" (ab); "reference", "candidate" (gate)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
};

// A side `name` running `bin` (checked executable: UsageError naming
// `flag`) with `common` then `extra` after the engine's own arguments.
Side MakeSide(const std::string& name, const std::string& bin, const std::string& flag, const std::string& label,
              const std::string& db,
              const std::vector<std::string>& common, const std::vector<std::string>& extra,
              std::vector<std::pair<std::string, std::string>> env);

// UsageError when `args` set what the engine sets for each side (--db,
// --label, --format, --processes); `where` follows the flag's name.
void CheckPassThrough(const std::vector<std::string>& args, const std::string& where);

// Words of a flag value, split on white space ("--threads 1").
std::vector<std::string> Words(const std::string& text);

// The balanced order: half the pairs B first, shuffled with `seed`.
std::vector<bool> Orders(int pairs, uint64_t seed);

// Runs the pairs; `failed` counts failed processes and runs with a failed
// workload. A side that refuses its arguments in the first pair, or two
// sides that measured no variant in common there, is a UsageError; one that
// stores no run or leaves it unfinished a runtime_error.
PairedData RunPairs(Store& store, const Side& a, const Side& b, int pairs, uint64_t seed, size_t* failed);

// Noise floors learned from side A's runs (these and earlier ones with its
// label): reported beside a paired verdict as what an unpaired comparison
// could resolve here, never raised into its limit.
History SideAHistory(Store& store, const PairedData& d);

// 10 pairs: the smallest exact two-sided p is 2/1024, small enough to pass
// Benjamini-Hochberg when 10 of 200 metrics change (0.05 * 10 / 200).
inline constexpr int kDefaultPairs = 10;

}  // namespace perfbench::cli
