// The subcommands' names and usage lines, the help text and the failure-to-exit-status mapping,
// shared by the two binaries behind `kdispatch`: the lean front (help, brief) and the full one
// it execs for every other command.
#pragma once

#include <cstdio>
#include <string_view>

#include "cli/commands.h"

namespace kd::cli {

struct CommandUsage {
  std::string_view name;
  std::string_view usage;
};

// The usage line of command `name`, or nullptr when there is no such command.
const CommandUsage* find_command(std::string_view name);
// What both binaries answer alike: no command and help (printed), an unknown command (named).
// Returns the command to run, or nullptr with `exit_status` set.
const CommandUsage* route(int argc, char** argv, int& exit_status);
void print_help(std::FILE* out);
// Runs `run` on `args`, mapping UsageError to 64 with the usage line, kd::Error and other
// exceptions to 70; messages go to stderr prefixed with "kdispatch <name>".
int run_command(const CommandUsage& command, int (*run)(const Args&), const Args& args);

}  // namespace kd::cli
