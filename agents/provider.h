// A provider wire format: request building, response parsing (whole and streamed) into one
// normalized AssistantTurn, and error bodies. Anthropic Messages and OpenAI Chat Completions.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/sse.h"
#include "agents/types.h"

namespace kd::agents {

// A response the client cannot use; the message names what is wrong with it.
class ProtocolError : public std::runtime_error {
 public:
  explicit ProtocolError(const std::string& m) : std::runtime_error(m) {}
};

// What went wrong inside a stream that had started with HTTP 200.
struct StreamFailure {
  std::string kind;  // "error_event" | "malformed" | "protocol"
  std::string type;  // provider error type for error events (overloaded_error, ...)
  std::string message;
};

// Assembles one streamed turn from SSE events. Tool arguments are joined per block/index and
// parsed only when the block ends.
class StreamAssembler {
 public:
  virtual ~StreamAssembler() = default;
  void on_event(const SseEvent& ev) {
    if (done_ || failure_) return;
    handle(ev);
  }
  bool done() const { return done_; }  // the protocol's terminator arrived
  const std::optional<StreamFailure>& failure() const { return failure_; }
  // The assembled turn; valid once done().
  virtual AssistantTurn take() = 0;
  // Called with each piece of assistant text as it arrives (progress display, benchmarks).
  std::function<void(std::string_view)> on_text;

 protected:
  virtual void handle(const SseEvent& ev) = 0;
  void fail(std::string kind, std::string type, std::string message) {
    failure_ = StreamFailure{std::move(kind), std::move(type), std::move(message)};
  }
  bool done_ = false;

 private:
  std::optional<StreamFailure> failure_;
};

struct ErrorBody {
  std::string type;  // error.type / error.code
  std::string message;
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::string_view wire() const = 0;  // "anthropic" | "openai"
  // Path appended to the base URL.
  virtual std::string path() const = 0;
  // Request headers; `key` may be empty (keyless local servers).
  virtual std::vector<std::string> headers(const std::string& key) const = 0;
  virtual nlohmann::json request_body(const Conversation& conv, const std::vector<ToolSpec>& tools,
                                      const std::string& model, int max_tokens, bool stream,
                                      const CacheOptions& cache = {}) const = 0;
  // Parses a whole (non-streaming) 2xx response; throws ProtocolError.
  virtual AssistantTurn parse_response(const nlohmann::json& body) const = 0;
  virtual std::unique_ptr<StreamAssembler> stream_assembler() const = 0;
};

std::unique_ptr<Provider> make_anthropic_provider();
std::unique_ptr<Provider> make_openai_provider();

// Error type and message of a non-2xx body in any of the supported shapes (Anthropic,
// OpenAI, vLLM's flat form); a body that is not JSON yields its first 200 bytes as message.
ErrorBody parse_error_body(std::string_view body);

// Member lookups that copy nothing, for the per-event paths: nullptr (empty) when `j` is not an
// object or the member is absent or not of the kind asked for.
const nlohmann::json* member(const nlohmann::json& j, const char* key);
const nlohmann::json* object_member(const nlohmann::json& j, const char* key);
std::string_view string_member(const nlohmann::json& j, const char* key);

// Parses tool arguments text into a ToolCall (input {} and input_is_json=false when the text is
// not a JSON object). Empty text means {}.
void set_tool_arguments(ToolCall& call, std::string raw);

}  // namespace kd::agents
