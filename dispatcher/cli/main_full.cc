// kdispatch-full: every subcommand, in the binary that links all the core libraries. Users run
// it through `kdispatch` (main.cc), which execs it with the same arguments.
#include <cstdio>
#include <string_view>

#include "common/exit_codes.h"
#include "dispatcher/cli/command_table.h"

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
  if (argc < 2) {
    kd::cli::print_help(stderr);
    return kd::kExitUsage;
  }
  std::string_view name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    kd::cli::print_help(stdout);
    return kd::kExitOk;
  }
  const kd::cli::CommandUsage* command = kd::cli::find_command(name);
  for (const auto& r : kRunners)
    if (command && r.name == name)
      return kd::cli::run_command(*command, r.run, kd::cli::Args(argv + 2, argv + argc));
  std::fprintf(stderr, "kdispatch: unknown command \"%s\" (try kdispatch help)\n", argv[1]);
  return kd::kExitUsage;
}
