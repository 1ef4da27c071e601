#include "cli/command_table.h"

#include <unistd.h>

#include <cerrno>
#include <exception>
#include <vector>

#include "cli/args.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "common/policy_path.h"

namespace kd::cli {
namespace {

// The heavy commands' runners exist in kdispatch-full only (its build defines
// KD_FULL_BINARY); in the front they are null and never referenced, so not linked.
#ifdef KD_FULL_BINARY
#define KD_FULL_ONLY(run) run
#else
#define KD_FULL_ONLY(run) nullptr
#endif

constexpr std::string_view kModel =
    "MODEL = --provider anthropic|openai|fake [--model NAME] [--base-url URL] [--script FILE]\n"
    "BUDGET = [--max-turns N] [--max-cost USD]   (per author session)";

constexpr Command kCommands[] = {
    {"brief",
     "brief --wiki DIR --family SLUG --experiment vNNN [--chips FILE] [--json] [--out FILE]",
     cmd_brief},
    {"sandbox",
     "sandbox exec --worktree DIR [--profile author|verifier|FILE] [--ro PATH]... [--mask "
     "PATH]...\n"
     "                [--chip ID] [--chips FILE] [--timeout S] [--json] -- CMD [ARG...]",
     cmd_sandbox},
    {"author",
     "author --wiki DIR --family SLUG --experiment vNNN [MODEL] [--chip ID] [--chips FILE]\n"
     "                [--run-root DIR] [--supervise | --supervise-dir DIR] [--tool-dir DIR]...\n"
     "                [BUDGET]",
     KD_FULL_ONLY(cmd_author)},
    {"verify",
     "verify --run DIR [--chip ID] [--chips FILE] [--mode screen|full] [--verify-cmd TEMPLATE]\n"
     "                [--tool-dir DIR]... [--file] [--json] [MODEL: the LLM verifier]",
     KD_FULL_ONLY(cmd_verify)},
    {"run",
     "run --wiki DIR [--family SLUG]... [MODEL] [--chips FILE] [--run-root DIR]\n"
     "                [--verify-cmd TEMPLATE] [--mode screen|full] [--tool-dir DIR]... [--resume]\n"
     "                [--file] [--parallel N] [--status-every S] [BUDGET] [--max-campaign-cost "
     "USD]\n"
     "                [--outage-wait S] [--outage-backoff S] [--retry-errors] [--dry-run]\n"
     "                [--notify-cmd CMD] [--supervise | --supervise-dir DIR]",
     KD_FULL_ONLY(cmd_run)},
    {"status", "status [--run-root DIR] [--json]", KD_FULL_ONLY(cmd_status)},
    {"receipt", "receipt verify FILE [--key FILE | --run-root DIR]", cmd_receipt},
    {"transcript", "transcript verify FILE | transcript show FILE [--no-color]", cmd_transcript},
    {"report", "report --run-root DIR [--out DIR]", KD_FULL_ONLY(cmd_report)},
    {"audit",
     "audit PATH... [--worktree DIR] [--reference PATH]... [--no-peek GLOB]...\n"
     "                [--wiki DIR --family SLUG --experiment vNNN] [--plan ID]... [--bar X]\n"
     "                [--stub-committed TIME] [--repo DIR] [--branch NAME] [--receipts DIR]...\n"
     "                [--policy FILE] [--json]",
     KD_FULL_ONLY(cmd_audit)},
    {"fake-llm", "fake-llm --script FILE [--listen 127.0.0.1:0]", KD_FULL_ONLY(cmd_fake_llm)},
    {"demo", "demo [--run-root DIR]", KD_FULL_ONLY(cmd_demo)},
    {"mcp", "mcp [--keys FILE] [--wiki DIR] [--run-root DIR]   (MCP server on stdio)",
     KD_FULL_ONLY(cmd_mcp)},
    {"chip-job", "chip-job FILE   (a Slurm node's side of one chip job, docs/slurm.md)",
     KD_FULL_ONLY(cmd_chip_job), true},
};

#undef KD_FULL_ONLY

constexpr bool every_command_runs() {
  for (const Command& c : kCommands)
    if (!c.run) return false;
  return true;
}
// Under -fsanitize g++ cannot fold a function's address to non-null, so the sanitizer build
// leaves this check to the others.
#if defined(KD_FULL_BINARY) && !defined(__SANITIZE_ADDRESS__)
static_assert(every_command_runs(), "kdispatch-full runs every command itself");
#endif

}  // namespace

void exec_full_binary(std::string_view command, const Args& args) {
  const std::string full = (executable_path().parent_path() / "kdispatch-full").string();
  std::vector<std::string> words = {full, std::string(command)};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  ::execv(full.c_str(), argv.data());
  const int e = errno;
  throw_sys("execv", quote(full), e);
}

const Command* find_command(std::string_view name) {
  for (const auto& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

void print_help(std::FILE* out) {
  std::fprintf(out, "usage: kdispatch COMMAND [OPTIONS]\n\ncommands:\n");
  for (const auto& c : kCommands)
    if (!c.hidden) std::fprintf(out, "  kdispatch %.*s\n", int(c.usage.size()), c.usage.data());
  std::fprintf(out, "\n%.*s\n", int(kModel.size()), kModel.data());
  std::fprintf(
      out,
      "\nexit status: 0 success, 1 advisory findings, 2 refused / gate failed / violations /\n"
      "bad input, 64 usage error, 70 internal error, 75 infrastructure error (provider down,\n"
      "key refused, spend cap, chip): retry with `kdispatch run --resume`\n");
}

const Command* route(int argc, char** argv, int& exit_status) {
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
  if (name == "--version" || name == "version") {
    std::printf("kdispatch %.*s\n", int(version().size()), version().data());
    exit_status = kExitOk;
    return nullptr;
  }
  const Command* command = find_command(name);
  if (!command) {
    std::fprintf(stderr, "kdispatch: unknown command \"%s\" (try kdispatch help)\n", argv[1]);
    exit_status = kExitUsage;
  }
  return command;
}

std::string_view version() {
  return KD_VERSION;
}

int run_command(const Command& command, const Args& args) {
  const std::string name(command.name);
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      std::printf("usage: kdispatch %.*s\n", int(command.usage.size()), command.usage.data());
      if (command.usage.find("MODEL") != std::string_view::npos ||
          command.usage.find("BUDGET") != std::string_view::npos)
        std::printf("\n%.*s\n", int(kModel.size()), kModel.data());
      return kExitOk;
    }
    if (a == "--version") {
      std::printf("kdispatch %.*s\n", int(version().size()), version().data());
      return kExitOk;
    }
  }
  try {
    return command.run(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kdispatch %s: %s\nusage: kdispatch %.*s\n", name.c_str(), e.what(),
                 int(command.usage.size()), command.usage.data());
    return kExitUsage;
  } catch (const InputError& e) {
    std::fprintf(stderr, "kdispatch %s: %s\n", name.c_str(), e.what());
    return kExitRefused;
  } catch (const InfraError& e) {
    std::fprintf(stderr, "kdispatch %s: %s\n", name.c_str(), e.what());
    return kExitTempFail;
  } catch (const Error& e) {
    std::fprintf(stderr, "kdispatch %s: %s\n", name.c_str(), e.what());
    return kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kdispatch %s: internal error: %s\n", name.c_str(), e.what());
    return kExitInternal;
  }
}

}  // namespace kd::cli
