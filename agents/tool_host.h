// What the tool-use loop asks of its host: run one validated tool call and say what came of it.
// The dispatcher implements it over the session's sandbox box (dispatcher/author_tools.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "agents/types.h"

namespace kd::agents {

struct ToolOutcome {
  std::string content;
  bool is_error = false;
  // Extra transcript fields of the tool_result (exit_code, signal, timed_out, killed_by_limit,
  // denials). A "violations" array here is also written as one `violation` record per entry,
  // after the result; a "decisions" array (a supervising person's answers and notes about this
  // call) as one `decision` record per entry, before it.
  nlohmann::json record = nlohmann::json::object();
  // For finish: the host accepted it (the loop has already validated the contract).
  bool finished = false;
  // The supervising person stopped the session: it ends with stopped_by_supervisor, and the
  // turn's later calls are not run.
  bool stop = false;
};

class ToolHost {
 public:
  virtual ~ToolHost() = default;
  // Runs one validated call; blocking; called off the I/O thread, one call at a time.
  virtual ToolOutcome call(const ToolCall& call) = 0;
};

}  // namespace kd::agents
