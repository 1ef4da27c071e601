// How an agent session ended and what it spent: the value run_session returns, kept apart from
// the session's Asio machinery for the dispatcher's reports and the command files.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kd::agents {

struct SessionResult {
  std::string end_reason;  // finished | budget:<which> | provider:<error> | ended_without_finish
  std::optional<nlohmann::json> finish;
  int turns = 0;
  int tool_calls = 0;
  long input_tokens = 0;
  long output_tokens = 0;
  bool usage_estimated = false;  // some turn carried no provider-reported usage
  double cost_usd = 0;
  std::string transcript_head;
};

}  // namespace kd::agents
