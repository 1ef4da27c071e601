// Provider-neutral values of a conversation with an LLM author: tool specs, tool calls, one
// normalized assistant turn, and the message history the providers serialize.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kd::agents {

// A tool the model may call: name matches ^[a-zA-Z0-9_-]{1,64}$, input_schema is a JSON Schema
// object.
struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json input_schema;
};

struct ToolCall {
  std::string id;
  std::string name;
  nlohmann::json input;   // parsed arguments; {} when they were not JSON
  std::string input_raw;  // the arguments exactly as the model sent them
  bool input_is_json = true;
};

// What a turn consumed. A cache count the provider did not send is unknown (nullopt), never 0:
// a server that does not report caching may still cache.
struct Usage {
  long input_tokens = 0;  // the whole prompt: uncached + cache writes + cache reads
  long output_tokens = 0;
  std::optional<long> cache_read_tokens;
  std::optional<long> cache_write_5m_tokens;  // OpenAI's writes (one short TTL) count here
  std::optional<long> cache_write_1h_tokens;
  bool reported = false;  // false: the provider sent no usage; counts are estimates
};

// One assistant turn, whatever the wire format.
struct AssistantTurn {
  std::string text;
  std::vector<ToolCall> tool_calls;
  std::string stop_reason;  // provider's value (end_turn, tool_use, stop, tool_calls, ...)
  Usage usage;
  std::string request_id;
  // The assistant message as the provider must see it echoed back (content blocks, tool_calls
  // with their original argument strings, thinking signatures, ...).
  nlohmann::json echo;
};

struct ToolResult {
  std::string tool_call_id;
  std::string name;
  std::string content;
  bool is_error = false;
  long record_seq = -1;  // the transcript record holding the content (masking names it)
  bool masked = false;   // content is the one-line stub that replaced the output
};

// One entry of the history. A user message holds text; an assistant message a turn; a tool
// message the results of every call of the preceding assistant turn, in call order.
struct Message {
  enum class Kind { user, assistant, tool_results };
  Kind kind = Kind::user;
  std::string text;
  AssistantTurn assistant;
  std::vector<ToolResult> results;
};

struct Conversation {
  std::string system;
  std::vector<Message> messages;
};

// How a request asks the provider to cache (docs/agents.md "Prompt caching"). Anthropic: the
// tools and the system prompt are marked with `static_ttl`, the last block of the previous and
// of the newest user message with 5m (at most 4 markers). OpenAI caches by itself; a
// `prompt_cache_key` keeps one session's requests on the same cache where the server takes it.
struct CacheOptions {
  bool enabled = false;
  std::string static_ttl = "5m";  // 5m | 1h
  std::string prompt_cache_key;   // empty: not sent
};

}  // namespace kd::agents
