#include "help.h"

#include "exit_code.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

namespace perfbench::cli {

namespace po = boost::program_options;

namespace {

constexpr unsigned kLineLength = 100;  // with the usage text, every line within 120 columns

struct Contract {
  std::vector<ExitCode> exits;
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
      {"run", {{kExitOk, kExitUsage, kExitRuntime}, {kDb, kMachine, kData, kComm, kProgress, kTorchrun, kSlurm}}},
      {"list", {{kExitOk, kExitUsage}, {}}},
      {"env", {{kExitOk, kExitUsage}, {}}},
      {"runs", {{kExitOk, kExitUsage}, {kDb}}},
      {"show", {{kExitOk, kExitUsage}, {kDb}}},
      {"compare", {{kExitOk, kExitRegression, kExitUsage, kExitInconclusive, kExitIncomparable}, {kDb, kPolicy}}},
      {"gate",
       {{kExitOk, kExitRegression, kExitUsage, kExitInconclusive, kExitRuntime, kExitIncomparable}, {kDb, kPolicy, kData}}},
      {"ab", {{kExitOk, kExitRegression, kExitUsage, kExitInconclusive, kExitRuntime, kExitIncomparable}, {kDb, kPolicy}}},
      {"peak", {{kExitOk, kExitUsage, kExitRuntime}, {kDb}}},
      {"profile", {{kExitOk, kExitUsage, kExitRuntime}, {kDb, kData, kComm}}},
      {"diagnose", {{kExitOk, kExitUsage, kExitRuntime}, {kDb, kData}}},
      {"advise", {{kExitOk, kExitUsage, kExitRuntime}, {kDb, kPolicy, kData, kComm}}},
      {"history", {{kExitOk, kExitRegression, kExitUsage}, {kDb}}},
      {"procure", {{kExitOk, kExitUsage, kExitIncomparable}, {kDb}}},
      {"report",
       {{kExitOk, kExitUsage}, {kDb, "PERFBENCH_DYGRAPHS_DIR  folder of dygraph.min.js (default: Debian's libjs-dygraphs)"}}},
      {"baseline", {{kExitOk, kExitUsage, kExitIncomparable}, {kDb}}},
      {"import", {{kExitOk, kExitUsage, kExitRuntime}, {kDb}}},
      {"push", {{kExitOk, kExitUsage, kExitRuntime}, {kDb, kPg}}},
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
  for (const ExitCode code : it->second.exits) out += "  " + std::to_string(code) + "  " + MeaningOf(code) + "\n";
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
