#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "mcp/keys.h"
#include "mcp/server.h"

namespace kd::cli {

// kdispatch mcp [--keys FILE] [--wiki DIR] [--run-root DIR]: the MCP server on stdin/stdout.
int cmd_mcp(const Args& args) {
  ParsedArgs p = parse_args(args, {{"keys"}, {"wiki"}, {"run-root"}});
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  mcp::ServerOptions o;
  o.run_root = p.get("run-root", "run-root");
  if (p.has("wiki")) o.wiki = std::filesystem::absolute(p.get("wiki"));
  if (p.has("keys")) o.keys = mcp::load_keys(p.get("keys"));

  // Nothing but protocol on stdout: the protocol gets its own descriptor, and fd 1 becomes a
  // second stderr, so a stray print anywhere in the process cannot corrupt the stream.
  int protocol = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (protocol < 0) throw_sys("fcntl", "stdout, F_DUPFD_CLOEXEC", errno);
  if (::dup2(2, 1) < 0) throw_sys("dup2", "stderr -> stdout", errno);
  // A client that goes away is seen as a failed write, not a fatal signal.
  ::signal(SIGPIPE, SIG_IGN);
  int rc = mcp::serve(0, protocol, o);
  ::close(protocol);
  return rc;
}

}  // namespace kd::cli
