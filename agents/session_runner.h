// Runs one agent session to its end on a private io_context: the model opened (the fake server
// started when the provider is `fake`), tool calls on a small pool. Shared by the author and the
// LLM verifier.
#pragma once

#include "agents/session.h"

namespace kd::agents {

agents::SessionResult run_session_blocking(const agents::SessionConfig& config,
                                           agents::ToolHost& host,
                                           const agents::ModelConfig& model);

}  // namespace kd::agents
