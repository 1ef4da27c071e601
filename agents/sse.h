// Server-sent events parser (WHATWG event-stream rules) working on raw bytes split anywhere:
// mid-line, mid-CRLF, mid-UTF-8 sequence.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kd::agents {

struct SseEvent {
  std::string name;  // "message" when the stream gave no event field
  std::string data;  // data lines joined with '\n'
};

class SseParser {
 public:
  using Sink = std::function<void(const SseEvent&)>;
  explicit SseParser(Sink sink) : sink_(std::move(sink)) {}

  // Feeds bytes; complete events are passed to the sink in order.
  void feed(std::string_view bytes);
  // End of stream: a pending line is processed and an event that lacks its final blank line
  // is still dispatched (as the provider SDKs do); completeness is judged by the protocol.
  void finish();

 private:
  void line(std::string_view l);
  void dispatch();

  Sink sink_;
  std::string partial_;      // bytes of an unfinished line
  bool pending_cr_ = false;  // the last chunk ended in '\r'; a following '\n' belongs to it
  bool started_ = false;     // BOM check done
  // The event being collected; handed to the sink by reference and then cleared, so its
  // buffers keep their capacity from one event to the next.
  SseEvent ev_;
  bool has_event_ = false;
  bool has_data_ = false;
};

}  // namespace kd::agents
