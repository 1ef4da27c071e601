// The main of both binaries behind `kdispatch` (command_table.h). The lean front, kdispatch,
// runs the light commands itself and execs kdispatch-full, next to it, for the others, so a
// brief or a sandbox starts without loading the network, git and agent libraries the other
// commands need; the front is linked statically where the build allows. kdispatch-full runs
// every command.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "cli/command_table.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "common/policy_path.h"

int main(int argc, char** argv) {
  int status = 0;
  const kd::cli::Command* command = kd::cli::route(argc, argv, status);
  if (!command) return status;
  if (command->run) return kd::cli::run_command(*command, kd::cli::Args(argv + 2, argv + argc));
  // The front, for a command of the full binary: the same arguments, the same process.
  try {
    const std::string full = (kd::executable_path().parent_path() / "kdispatch-full").string();
    ::execv(full.c_str(), argv);
    const int e = errno;
    kd::throw_sys("execv", kd::quote(full), e);
  } catch (const kd::Error& e) {
    std::fprintf(stderr, "kdispatch %s: %s\n", argv[1], e.what());
  }
  return kd::kExitInternal;
}
