// kdispatch: the thin command-line front end. Each subcommand parses its own options and calls
// into the core libraries; this file only routes and maps failures to exit statuses.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "common/exit_codes.h"
#include "dispatcher/cli/args.h"
#include "dispatcher/cli/commands.h"

namespace {

struct Command {
  std::string_view name;
  int (*run)(const kd::cli::Args&);
  std::string_view usage;
};

constexpr std::string_view kModel =
    "MODEL = --provider anthropic|openai|fake [--model NAME] [--base-url URL] [--script FILE]\n"
    "BUDGET = [--max-turns N] [--max-cost USD]   (per author session)";

const Command kCommands[] = {
    {"brief", kd::cli::cmd_brief,
     "brief --wiki DIR --family SLUG --experiment vNNN [--chips FILE] [--json] [--out FILE]"},
    {"sandbox", kd::cli::cmd_sandbox,
     "sandbox exec --worktree DIR [--profile author|verifier|FILE] [--ro PATH]... [--mask "
     "PATH]...\n"
     "                [--chip ID] [--chips FILE] [--timeout S] [--json] -- CMD [ARG...]"},
    {"author", kd::cli::cmd_author,
     "author --wiki DIR --family SLUG --experiment vNNN [MODEL] [--chip ID] [--chips FILE]\n"
     "                [--run-root DIR] [--supervise] [--tool-dir DIR]... [BUDGET]"},
    {"verify", kd::cli::cmd_verify,
     "verify --run DIR [--chip ID] [--chips FILE] [--mode screen|full] [--verify-cmd TEMPLATE]\n"
     "                [--tool-dir DIR]... [--file] [--json]"},
    {"run", kd::cli::cmd_run,
     "run --wiki DIR [--family SLUG]... [MODEL] [--chips FILE] [--run-root DIR]\n"
     "                [--verify-cmd TEMPLATE] [--mode screen|full] [--tool-dir DIR]... [--resume]\n"
     "                [--file] [--parallel N] [--status-every S] [BUDGET] [--max-campaign-cost "
     "USD]"},
    {"status", kd::cli::cmd_status, "status [--run-root DIR]"},
    {"receipt", kd::cli::cmd_receipt, "receipt verify FILE"},
    {"transcript", kd::cli::cmd_transcript, "transcript verify FILE"},
    {"audit", kd::cli::cmd_audit,
     "audit PATH... [--worktree DIR] [--reference PATH]... [--no-peek GLOB]...\n"
     "                [--wiki DIR --family SLUG --experiment vNNN] [--plan ID]... [--bar X]\n"
     "                [--stub-committed TIME] [--repo DIR] [--branch NAME] [--receipts DIR]...\n"
     "                [--policy FILE] [--json]"},
    {"fake-llm", kd::cli::cmd_fake_llm, "fake-llm --script FILE [--listen 127.0.0.1:0]"},
    {"demo", kd::cli::cmd_demo, "demo [--run-root DIR]"},
};

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_help(stderr);
    return kd::kExitUsage;
  }
  std::string_view name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    print_help(stdout);
    return kd::kExitOk;
  }
  for (const auto& c : kCommands) {
    if (c.name != name) continue;
    kd::cli::Args args(argv + 2, argv + argc);
    try {
      return c.run(args);
    } catch (const kd::cli::UsageError& e) {
      std::fprintf(stderr, "kdispatch %s: %s\nusage: kdispatch %.*s\n", argv[1], e.what(),
                   int(c.usage.size()), c.usage.data());
      return kd::kExitUsage;
    } catch (const kd::Error& e) {
      std::fprintf(stderr, "kdispatch %s: %s\n", argv[1], e.what());
      return kd::kExitInternal;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kdispatch %s: internal error: %s\n", argv[1], e.what());
      return kd::kExitInternal;
    }
  }
  std::fprintf(stderr, "kdispatch: unknown command \"%s\" (try kdispatch help)\n", argv[1]);
  return kd::kExitUsage;
}
