// The two wire formats as the fake server speaks them (docs/fake-llm.md): one strategy per wire
// composes a scripted turn's streamed events and whole body, the error bodies and events of the
// injected faults, and reads the tool results a request carries.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/fake/emulation.h"
#include "agents/fake/placeholders.h"
#include "agents/fake/script.h"

namespace kd::agents::fake {

// A scripted turn ready to send: its placeholders filled in, its number in the conversation and
// the script's model name.
struct Reply {
  struct Call {
    std::string id, name, args;
  };
  const FakeTurn& turn;
  size_t number = 0;  // 0-based turn of the conversation
  std::string model;
  std::string text;
  std::vector<std::string> text_chunks;  // the text as streamed deltas
  std::vector<Call> calls;
  std::optional<Billed> billed;  // the counted prompt when emulating; else the turn's figures
};

class Wire {
 public:
  virtual ~Wire() = default;

  // anthropic | openai
  virtual std::string_view name() const = 0;
  // The response header carrying the request id.
  virtual std::string request_id_header() const = 0;
  // The provider's error type for a status the script gives no type for.
  virtual std::string default_error_type(int status) const = 0;
  virtual std::string error_body(const std::string& type, const std::string& message) const = 0;
  // The turn as SSE writes, one event each; `request` may ask for extras (OpenAI's usage chunk).
  virtual std::vector<std::string> events(const Reply& r, const nlohmann::json& request) const = 0;
  virtual std::string whole_body(const Reply& r) const = 0;
  // An error event in the middle of a stream, and the broken event of a malformed_json fault.
  virtual std::string error_event(const std::string& type) const = 0;
  virtual std::string malformed_event() const = 0;

  // The script's stop reason, or the wire's own for a turn that ends with or without calls.
  std::string stop_reason(const Reply& r) const;
  // The tool results and the first user message of a request's messages.
  RequestResults results(const nlohmann::json& messages) const;

 protected:
  Wire(std::string_view end_stop, std::string_view tool_stop)
      : end_stop_(end_stop), tool_stop_(tool_stop) {}
  // Adds the tool results one message carries.
  virtual void add_results(const nlohmann::json& message, RequestResults& out) const = 0;

 private:
  std::string_view end_stop_, tool_stop_;
};

// The wire a request path speaks (/v1/messages, /v1/chat/completions); nullptr for any other.
const Wire* wire_for_path(std::string_view path);
// Anthropic's, for answers to requests that name no wire.
const Wire& anthropic_wire();

}  // namespace kd::agents::fake
