// The one command table of `kdispatch`: each subcommand's name, usage line and runner, the help
// text and the failure-to-exit-status mapping. Both binaries compile it (command_table.cc):
// kdispatch-full with every runner; the lean front kdispatch with the runners of the light
// commands only (help, brief, sandbox exec, receipt verify, transcript verify), the others null
// there, "runs in the full binary", so the front never links what they need (network, libgit2,
// the agents, the report's JSON reader) and execs kdispatch-full for them.
#pragma once

#include <cstdio>
#include <string_view>

#include "cli/commands.h"

namespace kd::cli {

struct Command {
  std::string_view name;
  std::string_view usage;
  int (*run)(const Args&);  // null: runs in kdispatch-full
  bool hidden = false;      // kdispatch's own plumbing (a Slurm node's chip-job): not in help
};

// Command `name`, or nullptr when there is no such command.
const Command* find_command(std::string_view name);
// What both binaries answer alike: no command and help (printed), an unknown command (named).
// Returns the command to run, or nullptr with `exit_status` set.
const Command* route(int argc, char** argv, int& exit_status);
void print_help(std::FILE* out);
// The version of kdispatch ("0.1.0").
std::string_view version();
// Execs kdispatch-full, beside the running program, as `kdispatch <command> <args>`: how the
// front runs what it does not link. Throws kd::Error when the exec fails.
[[noreturn]] void exec_full_binary(std::string_view command, const Args& args);
// Runs `command` (which has a runner) on `args`: --help (or -h) prints its usage, --version the
// version, both exit 0. Maps UsageError to 64 with the usage line, InputError to 2, InfraError
// to 75, other errors to 70; messages go to stderr prefixed with "kdispatch <name>".
int run_command(const Command& command, const Args& args);

}  // namespace kd::cli
