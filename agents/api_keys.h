// Provider API keys: read once from the environment and removed from it, so no child process
// of kdispatch (sandbox boxes, verify commands) can inherit them.
#pragma once

#include <string>
#include <vector>

namespace kd::agents {

// The value of `env_name` ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"): read from the environment
// and unset there at once; later calls return the remembered value. Empty when never set.
std::string take_api_key(const std::string& env_name);

// Every key taken so far, for redaction.
std::vector<std::string> known_secrets();

// True for environment variable names that hold secrets (*KEY*, *TOKEN*, *SECRET*, any case).
bool is_secret_env_name(const std::string& name);

}  // namespace kd::agents
