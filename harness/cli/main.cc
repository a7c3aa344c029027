#include <cstdlib>
#include <exception>
#include <iostream>

#include <fmt/format.h>

#include "cli.h"
#include "common.h"
#include "compare/compare.h"
#include "perfbench/workload.h"
#include "perfbench_version.h"
#include "store/location.h"
#include "utf8.h"

namespace perfbench::cli {

int RunCmd(const std::vector<std::string>& args);
int ListCmd(const std::vector<std::string>& args);
int EnvCmd(const std::vector<std::string>& args);
int RunsCmd(const std::vector<std::string>& args);
int ShowCmd(const std::vector<std::string>& args);
int CompareCmd(const std::vector<std::string>& args);
int ImportCmd(const std::vector<std::string>& args);
int BaselineCmd(const std::vector<std::string>& args);
int GateCmd(const std::vector<std::string>& args);
int AbCmd(const std::vector<std::string>& args);
int PeakCmd(const std::vector<std::string>& args);
int DiagnoseCmd(const std::vector<std::string>& args);
int ProfileCmd(const std::vector<std::string>& args);
int AdviseCmd(const std::vector<std::string>& args);
int HistoryCmd(const std::vector<std::string>& args);
int ProcureCmd(const std::vector<std::string>& args);
int ReportCmd(const std::vector<std::string>& args);
int PushCmd(const std::vector<std::string>& args);

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"run", "run suites, store the results, print a table", RunCmd},
      {"list", "list workloads and variants, and why any is skipped here", ListCmd},
      {"env", "print this machine's fingerprint", EnvCmd},
      {"runs", "list recorded runs, newest first", RunsCmd},
      {"show", "show one run's results (table or versioned JSON)", ShowCmd},
      {"compare", "compare a candidate run with a baseline: a verdict per metric", CompareCmd},
      {"gate", "CI gate: rerun a baseline's workloads, compare, exit by verdict", GateCmd},
      {"ab", "paired A/B runs of two builds or configurations, judged pair by pair", AbCmd},
      {"peak", "achievable GEMM FLOP/s and memory bandwidth here (MAMF-style sweep), stored per machine", PeakCmd},
      {"profile", "Kineto traces of the selected variants' steps (Chrome trace JSON, Perfetto, HTA)", ProfileCmd},
      {"diagnose", "which bottleneck (memory, communication, input, compute) holds each variant back, and remedies",
       DiagnoseCmd},
      {"advise", "measure the first fixes (precision, workers, accumulation, threads...) and rank them by gain",
       AdviseCmd},
      {"history", "series of run medians per metric over one machine's runs, with change points", HistoryCmd},
      {"procure", "rank machines on the same workloads: throughput with intervals, per dollar, per watt", ProcureCmd},
      {"report", "one self-contained HTML file: headline plots, trends with change points, comparison, procurement",
       ReportCmd},
      {"baseline", "named baselines: set, list, show, export, import, delete", BaselineCmd},
      {"import", "load a run from show JSON, a baseline file or Google Benchmark JSON", ImportCmd},
      {"push", "copy this machine's runs to the fleet's store (PostgreSQL), each run once", PushCmd},
  };
  return commands;
}

namespace {

void PrintHelp(std::ostream& out) {
  out << "perfbench " << PERFBENCH_VERSION
      << " - benchmark and regression harness for ML performance\n\n"
         "usage: perfbench <command> [options]      perfbench <command> --help\n\ncommands:\n";
  for (const auto& c : Commands()) {
    std::string name = c.name;
    out << "  " << name << std::string(10 - name.size(), ' ') << c.summary << "\n";
  }
  out << "\nexit codes (each command's --help lists its own):\n";
  for (const auto& e : ExitMeanings()) out << "  " << e.code << "  " << e.meaning << "\n";
  out << "\nenvironment:\n"
         "  PERFBENCH_DB      database file when --db is not given (default ./perfbench.db)\n"
         "  PERFBENCH_POLICY  verdict policy file when --policy is not given\n"
         "  (and each command's own: perfbench <command> --help)\n";
}

// One line naming `what` when `text` is not UTF-8 (credentials redacted).
bool ReportNotUtf8(const std::string& what, const std::string& text) {
  const auto at = InvalidUtf8At(text);
  if (!at) return false;
  std::cerr << "perfbench: " << what << " ('" << RedactCommandLine(ValidUtf8(text)) << "') is not UTF-8: byte 0x"
            << fmt::format("{:02X}", static_cast<unsigned char>(text[*at])) << " at offset " << *at
            << " (perfbench keeps labels, params and paths as UTF-8 text)\n";
  return true;
}

// Every argument, and the environment's paths, end up in stored runs and
// JSON, which keep UTF-8: one that is not is refused before anything runs.
bool InputsAreUtf8(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i)
    if (ReportNotUtf8("argument " + std::to_string(i + 1), args[i])) return false;
  for (const char* var : {"PERFBENCH_DB", "PERFBENCH_POLICY", "PERFBENCH_DATA_DIR", "PERFBENCH_MACHINE"}) {
    const char* value = std::getenv(var);
    if (value != nullptr && ReportNotUtf8(var, value)) return false;
  }
  return true;
}

}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintHelp(std::cerr);
    return kExitUsage;
  }
  if (!InputsAreUtf8(args)) return kExitUsage;
  const std::string cmd = args.front();
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    PrintHelp(std::cout);
    return kExitOk;
  }
  if (cmd == "--version" || cmd == "version") {
    std::cout << "perfbench " << PERFBENCH_VERSION << " (" << PERFBENCH_GIT_SHA << ")\n";
    return kExitOk;
  }
  if (const InternalCommand* internal = cmd.rfind("__", 0) == 0 ? FindInternalCommand(cmd) : nullptr) {
    args.erase(args.begin());
    try {
      return (*internal)(args);
    } catch (const std::exception& e) {
      std::cerr << "perfbench " << cmd << ": error: " << e.what() << "\n";
      return kExitRuntime;
    }
  }
  for (const auto& c : Commands()) {
    if (cmd != c.name) continue;
    args.erase(args.begin());
    try {
      return c.run(args);
    } catch (const UsageError& e) {
      std::cerr << "perfbench " << cmd << ": " << e.what() << "\n";
      return kExitUsage;
    } catch (const InconclusiveError& e) {
      std::cerr << "perfbench " << cmd << ": " << e.what() << "\n";
      return kExitInconclusive;
    } catch (const StoreInputError& e) {
      std::cerr << "perfbench " << cmd << ": " << e.what() << "\n";
      return kExitUsage;
    } catch (const IncomparableError& e) {
      std::cerr << "perfbench " << cmd << ": " << e.what() << "\n";
      return kExitIncomparable;
    } catch (const std::exception& e) {
      std::cerr << "perfbench " << cmd << ": error: " << e.what() << "\n";
      return kExitRuntime;
    }
  }
  std::cerr << "perfbench: unknown command '" << cmd << "' (see perfbench --help)\n";
  return kExitUsage;
}

}  // namespace perfbench::cli
