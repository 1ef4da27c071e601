#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/command_table.h"
#include "cli/commands.h"
#include "common/agent_file.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "common/sha256.h"
#include "contract/transcript_chain.h"
#include "contract/transcript_requests.h"
#ifdef KD_FULL_BINARY
#include "report/terminal.h"
#include "report/transcript_view.h"
#endif

namespace kd::cli {
namespace {

// A request body is a conversation; a blob holds one large tool output or request.
constexpr std::uint64_t kMaxBlobBytes = 256ull << 20;

struct Replay {
  std::uint64_t requests = 0;
  std::uint64_t broken_line = 0;  // 0: every request rebuilt
  std::string reason;
};

// Rebuilds every request body from the linear request records and the tool outputs they refer
// to, and checks each against its recorded digest (contract/transcript_requests.h).
Replay replay_requests(const std::filesystem::path& path) {
  Replay out;
  std::ifstream in(path);
  const std::filesystem::path blobs = path.parent_path() / "blobs";
  contract::transcript::RequestRebuilder rebuild([&](const std::string& digest) {
    const std::filesystem::path blob = blobs / digest;
    // Beneath the transcript's own blobs folder: no link, no special file, a bounded size.
    std::string bytes = read_agent_file(blobs, digest, kMaxBlobBytes);
    if (sha256_hex(bytes) != digest)
      throw Error("blob " + quote(blob.string()) + " does not match its digest");
    return bytes;
  });
  std::string line;
  for (std::uint64_t n = 1; std::getline(in, line); ++n) {
    nlohmann::json rec = nlohmann::json::parse(line, nullptr, false);
    if (!rec.is_object()) continue;
    try {
      // tool_result records too: a request refers to the outputs they hold.
      if (rebuild.feed(rec.at("seq").get<std::uint64_t>(), rec.value("type", ""), rec.at("data")))
        ++out.requests;
    } catch (const std::exception& e) {
      out.broken_line = n;
      out.reason = std::string("request not reconstructible: ") + e.what();
      return out;
    }
  }
  return out;
}

// kdispatch transcript verify FILE: 0 when the chain is intact, ends with an end record, and
// every request body can be rebuilt from the records and matches its digest.
int verify(const std::string& file) {
  contract::ChainReport r = contract::verify_chain_file(file);
  if (!r.ok) {
    std::printf("BROKEN %s line %llu: %s\n", file.c_str(),
                static_cast<unsigned long long>(r.broken_line), r.reason.c_str());
    return kExitRefused;
  }
  Replay rp = replay_requests(file);
  if (rp.broken_line) {
    std::printf("BROKEN %s line %llu: %s\n", file.c_str(),
                static_cast<unsigned long long>(rp.broken_line), rp.reason.c_str());
    return kExitRefused;
  }
  std::printf("OK %s: %llu records, %llu requests rebuilt, head %s\n", file.c_str(),
              static_cast<unsigned long long>(r.lines),
              static_cast<unsigned long long>(rp.requests), r.head.c_str());
  return kExitOk;
}

#ifdef KD_FULL_BINARY
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
#endif

}  // namespace

int cmd_transcript(const Args& args) {
  ParsedArgs p = parse_args(args, {{"no-color", false}});
  if (p.positional.size() != 2 || (p.positional[0] != "verify" && p.positional[0] != "show"))
    throw UsageError("expected: verify FILE, or show FILE");
  if (p.positional[0] == "verify") {
    if (p.has("no-color")) throw UsageError("--no-color is an option of show");
    return verify(p.positional[1]);
  }
#ifdef KD_FULL_BINARY
  return show(p.positional[1], p.has("no-color"));
#else
  // The reader is the report's, which the lean front does not link.
  exec_full_binary("transcript", args);
#endif
}

}  // namespace kd::cli
