// kdispatch-full: every subcommand, in the binary that links all the core libraries. Users run
// it through `kdispatch` (main.cc), which execs it with the same arguments.
#include <cstdio>
#include <string_view>

#include "cli/command_table.h"
#include "common/exit_codes.h"

namespace {

struct Runner {
  std::string_view name;
  int (*run)(const kd::cli::Args&);
};

constexpr Runner kRunners[] = {
    {"brief", kd::cli::cmd_brief},     {"sandbox", kd::cli::cmd_sandbox},
    {"author", kd::cli::cmd_author},   {"verify", kd::cli::cmd_verify},
    {"run", kd::cli::cmd_run},         {"status", kd::cli::cmd_status},
    {"receipt", kd::cli::cmd_receipt}, {"transcript", kd::cli::cmd_transcript},
    {"audit", kd::cli::cmd_audit},     {"fake-llm", kd::cli::cmd_fake_llm},
    {"demo", kd::cli::cmd_demo},
};

}  // namespace

int main(int argc, char** argv) {
  int status = 0;
  const kd::cli::CommandUsage* command = kd::cli::route(argc, argv, status);
  if (!command) return status;
  for (const auto& r : kRunners)
    if (r.name == command->name)
      return kd::cli::run_command(*command, r.run, kd::cli::Args(argv + 2, argv + argc));
  // In the table but without a runner: a build that forgot to wire a command.
  std::fprintf(stderr, "kdispatch: command \"%s\" is not built into this binary\n", argv[1]);
  return kd::kExitInternal;
}
