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
  // An empty chunk says nothing, not even that a '\r' ending the last one was not a CRLF's.
  if (bytes.empty()) return;
  size_t start = 0;
  if (pending_cr_) {
    pending_cr_ = false;
    if (!bytes.empty() && bytes[0] == '\n') start = 1;
  }
  for (size_t i = bytes.find_first_of("\r\n", start); i != std::string_view::npos;
       i = bytes.find_first_of("\r\n", start)) {
    char c = bytes[i];
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
    ev_.name.assign(value);
    has_event_ = !value.empty();
  } else if (field == "data") {
    if (has_data_) ev_.data += '\n';
    ev_.data.append(value);
    has_data_ = true;
  }
  // id and retry carry nothing a provider client needs; other fields are ignored by the spec.
}

void SseParser::dispatch() {
  if (has_data_) {
    if (!has_event_) ev_.name.assign("message");
    sink_(ev_);
  }
  ev_.name.clear();
  ev_.data.clear();
  has_event_ = false;
  has_data_ = false;
}

}  // namespace kd::agents
