// Provider-neutral values of a conversation with an LLM author: tool specs, tool calls, one
// normalized assistant turn, and the message history the providers serialize.
#pragma once

#include <nlohmann/json.hpp>
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

struct Usage {
  long input_tokens = 0;  // includes cache creation/read tokens where the provider splits them
  long output_tokens = 0;
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

}  // namespace kd::agents
