// One LLM agent session: the tool-use loop (docs/agents.md). The loop runs on the caller's
// io_context; every tool call runs on a separate pool through ToolHost (implemented by the
// dispatcher over the session's sandbox box); everything is recorded in the transcript.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/asio.h"
#include "agents/context_window.h"
#include "agents/fake/server.h"
#include "agents/finish.h"
#include "agents/llm_client.h"
#include "agents/model_config.h"
#include "agents/providers_policy.h"
#include "agents/session_result.h"
#include "agents/tool_host.h"
#include "agents/types.h"

namespace kd::agents {

// A model ready to be called: its endpoint, its price, and the in-process fake server when the
// provider is `fake` (the server lives as long as the handle).
struct ModelHandle {
  Endpoint endpoint;  // with the process's rate limiter for this provider and model
  std::string provider;
  std::optional<Price> price;
  long context_window = 0;        // tokens; 0: unknown
  bool prompt_cache_key = false;  // the provider takes a per-session prompt_cache_key
  std::shared_ptr<FakeServer> fake;
};

// Resolves a ModelConfig against the providers policy: takes the API key from the environment
// (ANTHROPIC_API_KEY / OPENAI_API_KEY, removed from the environment once read), or starts the
// fake server on 127.0.0.1:0 with the script. Throws kd::Error naming what is missing.
ModelHandle open_model(const ModelConfig& config, const ProvidersPolicy& policy);

// Called after each complete turn of this process (the response and all its tool results, or
// the nudge after a response without tool calls), once those records are durable, with the
// session's state so far (turns and counters include resumed ones; transcript_head is the
// chain head after the turn).
using TurnCallback = std::function<void(const SessionResult& so_far)>;

struct SessionConfig {
  std::string session_id;
  std::string role = "author";  // author | verifier
  std::string system_prompt;
  std::string first_user_message;
  std::vector<ToolSpec> tools;  // author_tools() for authors
  Budgets budgets;
  std::filesystem::path transcript_dir;
  nlohmann::json header = nlohmann::json::object();  // docs/transcripts.md header fields
  FinishContext finish;                              // candidate plan ids and the checks of finish
  RetryPolicy retry;
  Timeouts timeouts;
  int max_nudges = 2;        // turns without tool calls answered with a reminder before giving up
  bool prompt_cache = true;  // cache markers (Anthropic) and a prompt_cache_key (OpenAI)
  ContextPolicy context;     // window 0: the model's window from the providers policy
  // Streamed assistant text as it arrives (supervised sessions show it to the person).
  std::function<void(std::string_view)> on_text;
  // Called before each turn is asked, with its number (supervised sessions mark turns apart).
  std::function<void(int turn)> on_turn_start;
  // Continue the session whose transcript is in transcript_dir (after a crash): the transcript
  // is verified and continued, the conversation rebuilt up to the last complete turn, the
  // counters carried over; the first user message is not sent again. A transcript that ended
  // gives its recorded result without calling the model; a missing or empty one starts the
  // session. `header` is not written again (the recorded one stays); the model (provider and
  // name), the system prompt and the first user message must be those of the transcript.
  bool resume = false;
  TurnCallback on_turn;
};

// The TTL of the tools and system prompt markers: an hour when the session may run long enough
// for a pause over five minutes (a chip run, a rate-limit wait), which would otherwise rewrite
// the whole prefix; five minutes for short sessions, whose 1.25x write is cheaper than 2x.
std::string static_cache_ttl(const Budgets& b);

// Runs the session to its end. Throws kd::Error only for problems of the caller's making
// (transcript directory unusable or its writes failing, cost budget without a price, a resume
// refused: broken chain, other model or brief, transcript held by another process);
// everything the model or the provider does ends the session with a named reason.
boost::asio::awaitable<SessionResult> run_session(SessionConfig config, ToolHost& host,
                                                  HttpClient& http, const ModelHandle& model,
                                                  boost::asio::thread_pool& tool_pool);

}  // namespace kd::agents
