#include "cli.h"

int main(int argc, char** argv) { return perfbench::cli::Main(argc, argv); }
