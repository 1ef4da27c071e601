#include "cli/command_table.h"

#include <exception>

#include "cli/args.h"
#include "common/errors.h"
#include "common/exit_codes.h"

namespace kd::cli {
namespace {

constexpr std::string_view kModel =
    "MODEL = --provider anthropic|openai|fake [--model NAME] [--base-url URL] [--script FILE]\n"
    "BUDGET = [--max-turns N] [--max-cost USD]   (per author session)";

constexpr CommandUsage kCommands[] = {
    {"brief",
     "brief --wiki DIR --family SLUG --experiment vNNN [--chips FILE] [--json] [--out FILE]"},
    {"sandbox",
     "sandbox exec --worktree DIR [--profile author|verifier|FILE] [--ro PATH]... [--mask "
     "PATH]...\n"
     "                [--chip ID] [--chips FILE] [--timeout S] [--json] -- CMD [ARG...]"},
    {"author",
     "author --wiki DIR --family SLUG --experiment vNNN [MODEL] [--chip ID] [--chips FILE]\n"
     "                [--run-root DIR] [--supervise] [--tool-dir DIR]... [BUDGET]"},
    {"verify",
     "verify --run DIR [--chip ID] [--chips FILE] [--mode screen|full] [--verify-cmd TEMPLATE]\n"
     "                [--tool-dir DIR]... [--file] [--json] [MODEL: the LLM verifier]"},
    {"run",
     "run --wiki DIR [--family SLUG]... [MODEL] [--chips FILE] [--run-root DIR]\n"
     "                [--verify-cmd TEMPLATE] [--mode screen|full] [--tool-dir DIR]... [--resume]\n"
     "                [--file] [--parallel N] [--status-every S] [BUDGET] [--max-campaign-cost "
     "USD]"},
    {"status", "status [--run-root DIR]"},
    {"receipt", "receipt verify FILE"},
    {"transcript", "transcript verify FILE"},
    {"audit",
     "audit PATH... [--worktree DIR] [--reference PATH]... [--no-peek GLOB]...\n"
     "                [--wiki DIR --family SLUG --experiment vNNN] [--plan ID]... [--bar X]\n"
     "                [--stub-committed TIME] [--repo DIR] [--branch NAME] [--receipts DIR]...\n"
     "                [--policy FILE] [--json]"},
    {"fake-llm", "fake-llm --script FILE [--listen 127.0.0.1:0]"},
    {"demo", "demo [--run-root DIR]"},
};

}  // namespace

const CommandUsage* find_command(std::string_view name) {
  for (const auto& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

void print_help(std::FILE* out) {
  std::fprintf(out, "usage: kdispatch COMMAND [OPTIONS]\n\ncommands:\n");
  for (const auto& c : kCommands)
    std::fprintf(out, "  kdispatch %.*s\n", int(c.usage.size()), c.usage.data());
  std::fprintf(out, "\n%.*s\n", int(kModel.size()), kModel.data());
  std::fprintf(
      out,
      "\nexit status: 0 success, 1 advisory findings, 2 refused / gate failed / violations,\n"
      "64 usage error, 70 internal error\n");
}

const CommandUsage* route(int argc, char** argv, int& exit_status) {
  if (argc < 2) {
    print_help(stderr);
    exit_status = kExitUsage;
    return nullptr;
  }
  const std::string_view name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    print_help(stdout);
    exit_status = kExitOk;
    return nullptr;
  }
  const CommandUsage* command = find_command(name);
  if (!command) {
    std::fprintf(stderr, "kdispatch: unknown command \"%s\" (try kdispatch help)\n", argv[1]);
    exit_status = kExitUsage;
  }
  return command;
}

int run_command(const CommandUsage& command, int (*run)(const Args&), const Args& args) {
  const std::string name(command.name);
  try {
    return run(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kdispatch %s: %s\nusage: kdispatch %.*s\n", name.c_str(), e.what(),
                 int(command.usage.size()), command.usage.data());
    return kExitUsage;
  } catch (const Error& e) {
    std::fprintf(stderr, "kdispatch %s: %s\n", name.c_str(), e.what());
    return kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kdispatch %s: internal error: %s\n", name.c_str(), e.what());
    return kExitInternal;
  }
}

}  // namespace kd::cli
