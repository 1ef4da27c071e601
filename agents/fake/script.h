// The fake LLM server's script (docs/fake-llm.md): a list of assistant turns with text, tool
// calls and injected faults. Request N of a conversation (N = assistant messages it already
// holds) is answered with turn N.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kd::agents {

struct FakeToolCall {
  std::string id;  // generated when the script gives none
  std::string name;
  nlohmann::json input;                      // used when arguments_raw is absent
  std::optional<std::string> arguments_raw;  // sent verbatim (may be invalid JSON)
};

enum class FaultKind {
  Status,         // an HTTP error status instead of the turn
  ErrorEvent,     // an error event mid-stream (a 529 body when not streaming)
  Stall,          // silence for `seconds` before an event
  Truncate,       // the connection closes mid-response
  MalformedJson,  // a broken event (half a body when not streaming)
};

struct FakeFault {
  FaultKind kind = FaultKind::Status;
  int status = 0;                       // Status
  std::optional<double> retry_after_s;  // Status
  std::string error_type;               // Status, ErrorEvent (provider error type)
  int after_events = 2;                 // the streamed event it replaces or precedes
  double seconds = 0;                   // Stall
};

struct FakeTurn {
  std::vector<std::string> text_chunks;  // the text, as streamed pieces
  bool split_text = false;  // one string given: streamed in pieces cut after interpolation
  std::vector<FakeToolCall> tool_calls;
  std::string stop_reason;  // empty: derived (tool_use/end_turn, tool_calls/stop)
  long input_tokens = 100, output_tokens = 20;
  bool noise = false;             // comments, pings, unknown events and fields
  std::vector<FakeFault> faults;  // fault i applies to attempt i of this turn
};

// What the server emulates beyond the script (docs/fake-llm.md "Emulation"). With any of it on,
// usage counts the request's tokens (ceil(bytes / 4) per block) instead of the turn's figures.
struct FakeEmulation {
  bool cache = false;             // Anthropic's prefix cache, OpenAI's automatic caching
  long cache_min_tokens = 1024;   // shorter prefixes are silently not cached
  long context_window = 0;        // > 0: a longer prompt gets the wire's 400
  double requests_per_s = 0;      // > 0: a request bucket refilled at this rate
  long burst = 0;                 // its capacity (default: one second's worth)
  double input_tokens_per_s = 0;  // > 0: an input-token bucket (capacity: a minute's worth)
  bool count_tokens = false;      // count without caching (the baseline of a cost comparison)
  bool counts_tokens() const {
    return count_tokens || cache || context_window > 0 || input_tokens_per_s > 0;
  }
};

struct FakeScript {
  std::string model = "fake-author";
  FakeEmulation emulate;
  size_t chunk_bytes = 0;  // >0: every SSE write is split into pieces of this many bytes
  double pace_ms = 0;      // delay between SSE events
  std::vector<FakeTurn> turns;

  // Parses and validates; errors name the source, the turn and the field.
  static FakeScript parse(std::string_view text, const std::string& source);
  static FakeScript load(const std::filesystem::path& path);
};

}  // namespace kd::agents
