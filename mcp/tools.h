// The tools of `kdispatch mcp` (docs/mcp.md): their definitions with input and output schemas,
// as `tools/list` answers, and their handlers. A handler returns the structured result or throws
// ToolFailure (runs.h); the server wraps either into a tools/call result.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "mcp/runs.h"

namespace kd::mcp {

// What a handler may use of the call in flight.
struct CallContext {
  int wake_fd = -1;  // readable once the call is cancelled or the server stops
  // Sends notifications/progress when the client asked for it; no-op otherwise.
  std::function<void(double progress, double total, const std::string& message)> progress;
};

struct ToolEnv {
  Runs& runs;
  std::filesystem::path default_wiki;  // --wiki of the server, or empty
};

struct Tool {
  std::string name;
  nlohmann::json definition;  // name, title, description, inputSchema, outputSchema, annotations
  std::function<nlohmann::json(ToolEnv&, const nlohmann::json& args, CallContext&)> run;
};

// In a fixed order (tools/list is deterministic).
const std::vector<Tool>& tools();
const Tool* find_tool(const std::string& name);

}  // namespace kd::mcp
