// How an agent session ended and what it spent: the value run_session returns, kept apart from
// the session's Asio machinery for the dispatcher's reports and the command files.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "agents/provider_failure.h"
#include "contract/end_reason.h"

namespace kd::agents {

struct SessionResult {
  // Written as text (contract::to_string) to the transcript, run.json and the journal. While
  // the session runs (TurnCallback) it holds the default until a turn ends the session.
  contract::EndReason end_reason;
  std::optional<nlohmann::json> finish;
  int turns = 0;
  int tool_calls = 0;
  long input_tokens = 0;
  long output_tokens = 0;
  bool usage_estimated = false;  // some turn carried no provider-reported usage
  long cost_microusd = 0;        // the sum of the turns' costs, each rounded up
  double cost_usd = 0;           // the same in dollars, for reports
  long cache_read_tokens = 0;    // of input_tokens, as the provider reported them
  long cache_write_tokens = 0;
  int masking_steps = 0;    // times old tool outputs were masked to keep the context window
  int overflow_errors = 0;  // "prompt is too long" answers (each retried once after masking)
  std::string transcript_head;
  // Set when the provider ended the session: the session is then an error, not a result.
  std::optional<ProviderFailure> provider_failure;
};

}  // namespace kd::agents
