// Helpers shared by the subcommands.
#pragma once

#include <boost/program_options.hpp>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/store.h"

namespace perfbench::cli {

namespace po = boost::program_options;

// A usage or input error: printed as one line "perfbench <cmd>: <message>", exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The data cannot give a decision (e.g. too few runs for a rolling
// baseline): printed as one line, exit 3.
class InconclusiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};
const std::vector<Command>& Commands();

// Parses `args` against `desc`, with positional arguments named in order
// (each taken once; a last name "...NAME" takes all the rest, as a vector). Throws UsageError on bad input. Returns false when
// --help was given (after printing `usage` and `desc`).
bool Parse(const std::vector<std::string>& args, const po::options_description& desc,
           const std::vector<std::string>& positional, po::variables_map& vm, const std::string& usage);

// Like Parse, but options `desc` does not know (and positional arguments)
// are returned in `rest`, in order, for another command (ab and diagnose pass
// them to `run`).
bool ParsePassThrough(const std::vector<std::string>& args, const po::options_description& desc,
                      po::variables_map& vm, std::vector<std::string>* rest, const std::string& usage);

// Adds --wide (tables at full width) to `desc`; Parse applies it.
void AddWideOption(po::options_description& desc);
// Adds --db to `desc`.
void AddDbOption(po::options_description& desc);
// A verdict's report options (ab, the interleaved gate): --format, --output,
// --junit, --markdown, --json, --allow-inconclusive.
void AddVerdictReportOptions(po::options_description& desc);
// --db, else $PERFBENCH_DB, else ./perfbench.db.
std::string DbPath(const po::variables_map& vm);
std::unique_ptr<Store> OpenStore(const po::variables_map& vm, Store::Mode mode);
// A store at `location` (a file or postgresql://...); StoreInputError as UsageError.
std::unique_ptr<Store> OpenStoreAt(const std::string& location, Store::Mode mode);
// Resolves RUN (id, label, "latest") or throws UsageError.
int64_t ResolveRunOrThrow(Store& store, const std::string& ref);

// Checks a --format value against `allowed`; throws UsageError.
std::string CheckChoice(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed);

// "a,b" "c" -> {"a", "b", "c"}: values of a repeatable comma-list flag.
std::vector<std::string> SplitCommas(const std::vector<std::string>& values);

bool StderrIsTerminal();
bool StdoutIsTerminal();

}  // namespace perfbench::cli
