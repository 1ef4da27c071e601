// The main of both binaries behind `kdispatch` (command_table.h). The lean front, kdispatch,
// runs the light commands itself and execs kdispatch-full, next to it, for the others, so a
// brief or a sandbox starts without loading the network, git and agent libraries the other
// commands need; the front is linked statically where the build allows. kdispatch-full runs
// every command.
#include <cstdio>

#include "cli/command_table.h"
#include "common/errors.h"
#include "common/exit_codes.h"

int main(int argc, char** argv) {
  int status = 0;
  const kd::cli::Command* command = kd::cli::route(argc, argv, status);
  if (!command) return status;
  if (command->run) return kd::cli::run_command(*command, kd::cli::Args(argv + 2, argv + argc));
  // The front, for a command of the full binary: the same arguments, the same process.
  try {
    kd::cli::exec_full_binary(argv[1], kd::cli::Args(argv + 2, argv + argc));
  } catch (const kd::Error& e) {
    std::fprintf(stderr, "kdispatch %s: %s\n", argv[1], e.what());
  }
  return kd::kExitInternal;
}
