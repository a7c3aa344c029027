// `perfbench <command> --help`: the usage text, the options (positional
// arguments and aliases hidden, every default shown one way), then the
// command's exit codes and the environment variables it reads. One home for
// the exit-code contract as each command states it.
#pragma once

#include <boost/program_options.hpp>
#include <iosfwd>
#include <string>
#include <vector>

namespace perfbench::cli {

// Prints the help of the command whose `usage` starts "usage: perfbench
// NAME". Options named in `hidden` (positional arguments) and options with an
// empty description (aliases) are not listed; "(=x)" defaults read "(default x)".
void PrintCommandHelp(std::ostream& out, const std::string& usage,
                      const boost::program_options::options_description& desc, const std::vector<std::string>& hidden);

// The "exit codes:" and "environment:" sections of `command`'s help.
std::string HelpFooter(const std::string& command);

}  // namespace perfbench::cli
