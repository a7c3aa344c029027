// The perfbench command line. Exit codes are a documented contract:
#pragma once

#include <string>
#include <vector>

namespace perfbench::cli {

enum ExitCode : int {
  kExitOk = 0,            // success; for compare/gate: no regression
  kExitRegression = 1,    // compare/gate: at least one regression
  kExitUsage = 2,         // bad flag or value, unknown suite/run, unusable database, bad input file
  kExitInconclusive = 3,  // compare/gate: a decision was required and the data could not give one
  kExitRuntime = 4,       // a workload failed at run time (the rest recorded), or the store failed
  kExitIncomparable = 5,  // compare/gate/ab/procure/baseline: runs of other hardware or conditions
};

// argv without the program name is args; returns the process exit code.
int Main(int argc, char** argv);

}  // namespace perfbench::cli
