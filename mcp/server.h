// The MCP server of `kdispatch mcp` (docs/mcp.md): reads JSON-RPC lines from `in_fd` until end
// of input, answers on `out_fd`. Both protocol eras: the `initialize` handshake of today's
// clients and the stateless form (`server/discover`, the version in each request's _meta).
// Every tools/call runs on a thread of its own, so a `wait` never holds up a `status`; replies
// go out by id in whatever order the calls end; a cancelled call is never answered.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace kd::mcp {

struct ServerOptions {
  std::filesystem::path run_root;
  std::filesystem::path wiki;  // default for tools that take one; may be empty
  std::map<std::string, std::string> keys;
};

// Returns once input ends and the calls in flight have stopped.
int serve(int in_fd, int out_fd, const ServerOptions& options);

}  // namespace kd::mcp
