#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "contract/transcript_chain.h"
#include "report/terminal.h"
#include "report/transcript_view.h"

namespace kd::cli {
namespace {

// kdispatch transcript verify FILE: 0 when the chain is intact and ends with an end record.
int verify(const std::string& file) {
  contract::ChainReport r = contract::verify_chain_file(file);
  if (!r.ok) {
    std::printf("BROKEN %s line %llu: %s\n", file.c_str(),
                static_cast<unsigned long long>(r.broken_line), r.reason.c_str());
    return kExitRefused;
  }
  std::printf("OK %s: %llu records, head %s\n", file.c_str(),
              static_cast<unsigned long long>(r.lines), r.head.c_str());
  return kExitOk;
}

// kdispatch transcript show FILE [--no-color]: the transcript for people. Colours only on a
// terminal (and never with --no-color or NO_COLOR set); the exit status is verify's.
int show(const std::string& file, bool no_color) {
  report::TranscriptView v = report::read_transcript(file);
  report::TerminalOptions o;
  o.colour = !no_color && !std::getenv("NO_COLOR") && ::isatty(STDOUT_FILENO);
  std::string text = report::render_transcript_terminal(v, o);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return v.chain_ok ? kExitOk : kExitRefused;
}

}  // namespace

int cmd_transcript(const Args& args) {
  ParsedArgs p = parse_args(args, {{"no-color", false}});
  if (p.positional.size() != 2 || (p.positional[0] != "verify" && p.positional[0] != "show"))
    throw UsageError("expected: verify FILE, or show FILE");
  if (p.positional[0] == "verify") {
    if (p.has("no-color")) throw UsageError("--no-color is an option of show");
    return verify(p.positional[1]);
  }
  return show(p.positional[1], p.has("no-color"));
}

}  // namespace kd::cli
