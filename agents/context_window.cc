#include "agents/context_window.h"

#include <algorithm>

namespace kd::agents {

std::string mask_stub(const std::string& tool_name, long record_seq) {
  return "[" + tool_name + " output masked to keep the context window; transcript record " +
         std::to_string(record_seq) + " holds it in full]";
}

void ContextWindow::calibrate(size_t bytes, long tokens) {
  if (bytes > 0 && tokens > 0) tokens_per_byte_ = static_cast<double>(tokens) / bytes;
}

long ContextWindow::estimate(size_t bytes) const {
  return static_cast<long>(static_cast<double>(bytes) * tokens_per_byte_) + 1;
}

bool ContextWindow::over_high_water(size_t bytes) const {
  if (p_.window <= 0) return false;
  return estimate(bytes) > static_cast<long>(p_.high_water * p_.window) - max_output_;
}

std::vector<const ToolResult*> ContextWindow::mask(Conversation& conv, size_t bytes,
                                                   double fraction_of_low) {
  std::vector<const ToolResult*> masked;
  if (p_.window <= 0) return masked;
  const long target = static_cast<long>(p_.low_water * fraction_of_low * p_.window);
  long tokens = estimate(bytes);
  int tool_messages = 0;
  for (const Message& m : conv.messages)
    if (m.kind == Message::Kind::tool_results) ++tool_messages;
  int seen = 0;
  for (Message& m : conv.messages) {
    if (tokens <= target) break;
    if (m.kind != Message::Kind::tool_results) continue;
    if (++seen > tool_messages - p_.keep_recent) break;
    for (ToolResult& r : m.results) {
      if (r.masked || r.record_seq < 0) continue;
      std::string stub = mask_stub(r.name, r.record_seq);
      if (stub.size() >= r.content.size()) continue;
      tokens -= estimate(r.content.size() - stub.size());
      r.content = std::move(stub);
      r.masked = true;
      masked.push_back(&r);
    }
  }
  return masked;
}

bool is_context_overflow(const std::string& reason, const std::string& detail) {
  if (reason.find("http_400") == std::string::npos && reason.find("http_413") == std::string::npos)
    return false;
  return reason.find("context_length_exceeded") != std::string::npos ||
         detail.find("prompt is too long") != std::string::npos ||
         detail.find("maximum context length") != std::string::npos;
}

}  // namespace kd::agents
