#include "agents/sse.h"

namespace kd::agents {

void SseParser::feed(std::string_view bytes) {
  if (!started_) {
    // The BOM may itself arrive split; wait until three bytes or a non-BOM prefix are seen.
    partial_.append(bytes);
    static constexpr std::string_view kBom = "\xEF\xBB\xBF";
    if (partial_.size() < kBom.size() && kBom.substr(0, partial_.size()) == partial_) return;
    started_ = true;
    std::string buffered;
    buffered.swap(partial_);
    if (std::string_view(buffered).substr(0, 3) == kBom) buffered.erase(0, 3);
    feed(buffered);
    return;
  }
  size_t start = 0;
  if (pending_cr_) {
    pending_cr_ = false;
    if (!bytes.empty() && bytes[0] == '\n') start = 1;
  }
  for (size_t i = start; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (c != '\n' && c != '\r') continue;
    if (partial_.empty()) {
      line(bytes.substr(start, i - start));
    } else {
      partial_.append(bytes.substr(start, i - start));
      line(partial_);
      partial_.clear();
    }
    if (c == '\r') {
      if (i + 1 == bytes.size()) {
        pending_cr_ = true;
      } else if (bytes[i + 1] == '\n') {
        ++i;
      }
    }
    start = i + 1;
  }
  partial_.append(bytes.substr(start));
}

void SseParser::finish() {
  if (!started_) {
    started_ = true;
    std::string buffered;
    buffered.swap(partial_);
    feed(buffered);
  }
  if (!partial_.empty()) {
    std::string last;
    last.swap(partial_);
    line(last);
  }
  dispatch();
}

void SseParser::line(std::string_view l) {
  if (l.empty()) {
    dispatch();
    return;
  }
  if (l[0] == ':') return;  // comment / keep-alive
  size_t colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = l.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "event") {
    event_.assign(value);
  } else if (field == "data") {
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  }
  // id and retry carry nothing a provider client needs; other fields are ignored by the spec.
}

void SseParser::dispatch() {
  if (has_data_) {
    SseEvent ev{event_.empty() ? "message" : event_, std::move(data_)};
    sink_(ev);
  }
  event_.clear();
  data_.clear();
  has_data_ = false;
}

}  // namespace kd::agents
