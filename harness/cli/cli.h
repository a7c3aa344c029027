// The perfbench command line. Exit codes are a documented contract, kept in
// the core (exit_code.h).
#pragma once

#include <string>
#include <vector>

#include "exit_code.h"

namespace perfbench::cli {

// argv without the program name is args; returns the process exit code.
int Main(int argc, char** argv);

}  // namespace perfbench::cli
