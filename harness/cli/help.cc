#include "help.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

namespace perfbench::cli {

namespace po = boost::program_options;

namespace {

constexpr unsigned kLineLength = 100;  // with the usage text, every line within 120 columns

// What each exit code means, as any command means it; commands list theirs.
const std::map<int, const char*>& ExitMeanings() {
  static const std::map<int, const char*> m = {
      {0, "success"},
      {1, "a regression (a metric moved the worse way beyond its limit)"},
      {2, "usage or input error: bad flag or value, unknown suite or run, unreadable database or file"},
      {3, "inconclusive where a decision was required"},
      {4, "run-time failure: a workload failed (the others were recorded), or the store failed"},
      {5, "not comparable: the runs are of other hardware or conditions"},
  };
  return m;
}

struct Contract {
  std::vector<int> exits;
  std::vector<std::string> env;
};

const std::string kDb =
    "PERFBENCH_DB      database file or postgresql:// URL when --db is not given (default ./perfbench.db)";
const std::string kPg = "PGPASSFILE PGSERVICEFILE PGSERVICE  libpq: where a server's password comes from";
const std::string kMachine = "PERFBENCH_MACHINE  this machine's name in the fleet (default: the hostname)";
const std::string kPolicy = "PERFBENCH_POLICY  verdict policy file when --policy is not given";
const std::string kData = "PERFBENCH_DATA_DIR  dataset cache when --data-dir is not given";
const std::string kComm = "PERFBENCH_COMM_TIMEOUT  ddp: seconds a silent rank may take (--comm-timeout)";
const std::string kProgress =
    "PERFBENCH_PROGRESS_EVERY  seconds between progress lines into a log, not a terminal (default 15; 0: each group)";
const std::string kTorchrun = "RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT  ddp: ranks started by torchrun";
const std::string kSlurm = "SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_NODEID SLURM_JOB_NODELIST  ddp: ranks started by srun";

const std::map<std::string, Contract>& Contracts() {
  static const std::map<std::string, Contract> m = {
      {"run", {{0, 2, 4}, {kDb, kMachine, kData, kComm, kProgress, kTorchrun, kSlurm}}},
      {"list", {{0, 2}, {}}},
      {"env", {{0, 2}, {}}},
      {"runs", {{0, 2}, {kDb}}},
      {"show", {{0, 2}, {kDb}}},
      {"compare", {{0, 1, 2, 3, 5}, {kDb, kPolicy}}},
      {"gate", {{0, 1, 2, 3, 4, 5}, {kDb, kPolicy, kData}}},
      {"ab", {{0, 1, 2, 3, 4, 5}, {kDb, kPolicy}}},
      {"peak", {{0, 2, 4}, {kDb}}},
      {"profile", {{0, 2, 4}, {kDb, kData, kComm}}},
      {"diagnose", {{0, 2, 4}, {kDb, kData}}},
      {"advise", {{0, 2, 4}, {kDb, kPolicy, kData, kComm}}},
      {"history", {{0, 1, 2}, {kDb}}},
      {"procure", {{0, 2, 5}, {kDb}}},
      {"report", {{0, 2}, {kDb, "PERFBENCH_DYGRAPHS_DIR  folder of dygraph.min.js (default: Debian's libjs-dygraphs)"}}},
      {"baseline", {{0, 2, 5}, {kDb}}},
      {"import", {{0, 2, 4}, {kDb}}},
      {"push", {{0, 2, 4}, {kDb, kPg}}},
  };
  return m;
}

std::string CommandName(const std::string& usage) {
  const std::string prefix = "usage: perfbench ";
  if (usage.rfind(prefix, 0) != 0) return "";
  const size_t end = usage.find_first_of(" \n", prefix.size());
  return usage.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
}

// `desc` as shown: hidden options left out, "F (=x)" as "F" with "(default x)"
// after the description.
po::options_description Visible(const po::options_description& desc, const std::vector<std::string>& hidden) {
  po::options_description out("options", kLineLength, kLineLength / 2);
  for (const auto& o : desc.options()) {
    const std::string& name = o->long_name();
    if (o->description().empty() || std::find(hidden.begin(), hidden.end(), name) != hidden.end()) continue;
    std::string param = o->format_parameter(), text = o->description();
    if (const size_t at = param.find(" (="); at != std::string::npos && param.back() == ')') {
      const std::string value = param.substr(at + 3, param.size() - at - 4);
      param.resize(at);
      if (text.find("default") == std::string::npos && !value.empty()) text += " (default " + value + ")";
    }
    if (param.empty())
      out.add_options()(name.c_str(), text.c_str());
    else
      out.add_options()(name.c_str(), po::value<std::string>()->value_name(param), text.c_str());
  }
  return out;
}

std::string WithoutTrailingSpaces(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string HelpFooter(const std::string& command) {
  const auto it = Contracts().find(command);
  if (it == Contracts().end()) return "";
  std::string out = "\nexit codes:\n";
  for (const int code : it->second.exits) out += "  " + std::to_string(code) + "  " + ExitMeanings().at(code) + "\n";
  if (!it->second.env.empty()) {
    out += "\nenvironment:\n";
    for (const auto& e : it->second.env) out += "  " + e + "\n";
  }
  return out;
}

void PrintCommandHelp(std::ostream& out, const std::string& usage, const po::options_description& desc,
                      const std::vector<std::string>& hidden) {
  std::ostringstream options;
  options << Visible(desc, hidden);
  out << usage << "\n\n" << WithoutTrailingSpaces(options.str()) << HelpFooter(CommandName(usage));
}

}  // namespace perfbench::cli
