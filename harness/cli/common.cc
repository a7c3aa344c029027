#include "common.h"

#include "help.h"
#include "report/format.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace perfbench::cli {

namespace {

void ApplyWide(const po::variables_map& vm) {
  if (vm.count("wide") && vm["wide"].as<bool>()) SetMaxTableWidth(0);
}

bool ParseWith(const std::vector<std::string>& args, const po::options_description& desc,
               const po::positional_options_description& positional, po::variables_map& vm,
               const std::string& usage, const std::vector<std::string>& hidden) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      PrintCommandHelp(std::cout, usage, desc, hidden);
      return false;
    }
  }
  try {
    po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
    po::notify(vm);
    ApplyWide(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

}  // namespace

bool Parse(const std::vector<std::string>& args, const po::options_description& desc,
           const std::vector<std::string>& positional, po::variables_map& vm, const std::string& usage) {
  po::positional_options_description pos;
  std::vector<std::string> hidden;
  for (const auto& name : positional) {
    const bool rest = name.rfind("...", 0) == 0;  // "...NAME": every further positional argument
    hidden.push_back(rest ? name.substr(3) : name);
    pos.add(hidden.back().c_str(), rest ? -1 : 1);
  }
  return ParseWith(args, desc, pos, vm, usage, hidden);
}

bool ParsePassThrough(const std::vector<std::string>& args, const po::options_description& desc,
                      po::variables_map& vm, std::vector<std::string>* rest, const std::string& usage) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      PrintCommandHelp(std::cout, usage, desc, {});
      return false;
    }
  }
  try {
    const auto parsed = po::command_line_parser(args).options(desc).allow_unregistered().run();
    po::store(parsed, vm);
    po::notify(vm);
    ApplyWide(vm);
    *rest = po::collect_unrecognized(parsed.options, po::include_positional);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

void AddWideOption(po::options_description& desc) {
  desc.add_options()("wide", po::bool_switch(), "tables at full width (default: within 120 columns, long cells cut with …)");
}

void AddVerdictReportOptions(po::options_description& desc) {
  desc.add_options()
      ("format", po::value<std::string>()->default_value("table")->value_name("F"),
       "report on stdout: table | markdown | json | junit | none")
      ("output", po::value<std::string>()->value_name("FILE"), "write the --format report to FILE instead")
      ("junit", po::value<std::string>()->value_name("FILE"), "also write a JUnit XML report")
      ("markdown", po::value<std::string>()->value_name("FILE"), "also write a Markdown report (e.g. $GITHUB_STEP_SUMMARY)")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the JSON report (schema_version 5)")
      ("allow-inconclusive", po::bool_switch(), "exit 0 instead of 3 when metrics stay inconclusive");
}

void AddDbOption(po::options_description& desc) {
  desc.add_options()("db", po::value<std::string>()->value_name("PATH|URL"),
                     "database file, or a PostgreSQL server postgresql://[user@]host[:port]/db "
                     "(default: $PERFBENCH_DB, else ./perfbench.db)");
}

std::string DbPath(const po::variables_map& vm) {
  if (vm.count("db")) return vm["db"].as<std::string>();
  if (const char* env = std::getenv("PERFBENCH_DB"); env != nullptr && *env != '\0') return env;
  return "perfbench.db";
}

std::unique_ptr<Store> OpenStore(const po::variables_map& vm, Store::Mode mode) { return OpenStoreAt(DbPath(vm), mode); }

std::unique_ptr<Store> OpenStoreAt(const std::string& location, Store::Mode mode) {
  try {
    return Store::Open(location, mode);
  } catch (const StoreInputError& e) {
    throw UsageError(e.what());
  }
}

int64_t ResolveRunOrThrow(Store& store, const std::string& ref) {
  auto id = store.ResolveRun(ref);
  if (!id) throw UsageError("no run '" + ref + "' in " + store.path() + " (see `perfbench runs`)");
  return *id;
}

std::string CheckChoice(const std::string& flag, const std::string& value,
                        const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (a == value) return value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw UsageError(flag + " '" + value + "' is not one of " + list);
}

std::vector<std::string> SplitCommas(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    std::stringstream ss(v);
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }
bool StdoutIsTerminal() { return isatty(STDOUT_FILENO) == 1; }

}  // namespace perfbench::cli
