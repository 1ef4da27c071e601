// Which model a session talks to and how much it may spend: plain values filled from the
// command line (cli/model_args.h) and carried by the dispatcher's options, so that those who
// only pass them along do not compile the Asio-based session.
#pragma once

#include <string>

namespace kd::agents {

struct ModelConfig {
  std::string provider = "fake";  // anthropic | openai | fake (entries of policies/providers.json)
  std::string model;              // empty: the provider's default_model
  std::string base_url;           // empty: the provider's base_url
  std::string script;             // fake only: the script file
  int max_tokens = 8192;
  bool stream = true;
};

struct Budgets {
  int max_turns = 80;
  long max_tokens = 4'000'000;  // input + output over the session
  double max_cost_usd = 30;     // <= 0: no cost budget
  double max_wall_s = 4 * 3600;
  int max_tool_calls = 500;
};

}  // namespace kd::agents
