#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "contract/transcript_chain.h"

namespace kd::cli {

// kdispatch transcript verify FILE: 0 when the chain is intact and ends with an end record.
int cmd_transcript(const Args& args) {
  ParsedArgs p = parse_args(args, {});
  if (p.positional.size() != 2 || p.positional[0] != "verify")
    throw UsageError("expected: verify FILE");
  contract::ChainReport r = contract::verify_chain_file(p.positional[1]);
  if (!r.ok) {
    std::printf("BROKEN %s line %llu: %s\n", p.positional[1].c_str(),
                static_cast<unsigned long long>(r.broken_line), r.reason.c_str());
    return kExitRefused;
  }
  std::printf("OK %s: %llu records, head %s\n", p.positional[1].c_str(),
              static_cast<unsigned long long>(r.lines), r.head.c_str());
  return kExitOk;
}

}  // namespace kd::cli
