#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "contract/receipt.h"

namespace kd::cli {

// kdispatch receipt verify FILE: 0 for an intact, self-consistent receipt whatever its verdict.
int cmd_receipt(const Args& args) {
  ParsedArgs p = parse_args(args, {});
  if (p.positional.size() != 2 || p.positional[0] != "verify")
    throw UsageError("expected: verify FILE");
  const std::string& file = p.positional[1];
  contract::ReceiptCheck r = contract::validate_receipt(file);
  if (!r.ok) {
    std::printf("BAD %s\n", file.c_str());
    for (const auto& problem : r.problems)
      std::printf("  %s\n", problem.c_str());
    return kExitRefused;
  }
  std::printf("OK %s: cmd=%s verdict=%s", file.c_str(), r.cmd.c_str(), r.verdict.c_str());
  if (!r.mode.empty()) std::printf(" mode=%s", r.mode.c_str());
  if (r.speedup) std::printf(" speedup=%.6g", *r.speedup);
  std::printf(" self_sha256=%s\n", r.self_sha256.c_str());
  return kExitOk;
}

}  // namespace kd::cli
