#include "contract/transcript_requests.h"

#include <stdexcept>

#include "common/sha256.h"
#include "contract/transcript_records.h"

namespace kd::contract::transcript {

using json = nlohmann::json;

std::string request_bytes(const json& body) {
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string request_digest(const json& body) {
  return sha256_hex(request_bytes(body));
}

namespace {

// Cache markers slide with the newest turns; the messages are compared and stored without them
// and the markers recorded apart as [message, block, marker], so a marker that moved on does not
// make an old message new.
json take_marks(json& msgs) {
  json marks = json::array();
  if (!msgs.is_array()) return marks;
  for (size_t i = 0; i < msgs.size(); ++i) {
    json* content =
        msgs[i].is_object() && msgs[i].contains("content") ? &msgs[i]["content"] : nullptr;
    if (!content || !content->is_array()) continue;
    for (size_t j = 0; j < content->size(); ++j) {
      json& block = (*content)[j];
      if (!block.is_object() || !block.contains("cache_control")) continue;
      marks.push_back(json::array({i, j, block["cache_control"]}));
      block.erase("cache_control");
    }
  }
  return marks;
}

json unmarked_messages(const json& body) {
  json msgs = body.is_object() && body.contains("messages") ? body["messages"] : json::array();
  take_marks(msgs);
  return msgs;
}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Replaces the recorded outputs among the strings of `v` (part of message `message`, at
// `pointer`) by null and notes a ref for each.
void take_refs(json& v, size_t message, const std::string& pointer, const RecordedOutputs& outputs,
               json& refs) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() < kMinRefBytes) return;
    auto it = outputs.find(sha256_hex(s));
    if (it == outputs.end()) return;
    refs.push_back(json::array({message, pointer, it->second}));
    v = nullptr;
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      take_refs(v[i], message, pointer + "/" + std::to_string(i), outputs, refs);
  } else if (v.is_object()) {
    for (auto& [key, item] : v.items())
      take_refs(item, message, pointer + "/" + pointer_token(key), outputs, refs);
  }
}

}  // namespace

json request_delta(const json& previous, const json& body, const RecordedOutputs& outputs) {
  json msgs = body.contains("messages") ? body["messages"] : json::array();
  json marks = take_marks(msgs);
  json fields = body;
  fields.erase("messages");
  json out = json::object();
  size_t keep = 0;
  if (previous.is_object()) {
    const json old = unmarked_messages(previous);
    while (keep < old.size() && keep < msgs.size() && old[keep] == msgs[keep])
      ++keep;
    json old_fields = previous;
    old_fields.erase("messages");
    if (old_fields != fields) out["fields"] = std::move(fields);
  } else {
    out["fields"] = std::move(fields);
  }
  out["keep"] = keep;
  json append = json::array();
  json refs = json::array();
  for (size_t i = keep; i < msgs.size(); ++i) {
    append.push_back(std::move(msgs[i]));
    if (!outputs.empty()) take_refs(append.back(), i, "", outputs, refs);
  }
  out["append"] = std::move(append);
  if (!refs.empty()) out["refs"] = std::move(refs);
  if (!marks.empty()) out["marks"] = std::move(marks);
  out["sha256"] = request_digest(body);
  return out;
}

std::optional<json> RequestRebuilder::feed(std::uint64_t seq, const std::string& type,
                                           const json& data) {
  if (type == kToolResult) add_output(seq, data);
  if (type == kRequest) return apply(data);
  return std::nullopt;
}

void RequestRebuilder::add_output(std::uint64_t seq, const json& data) {
  if (!data.is_object()) return;
  if (auto c = data.find("content"); c != data.end() && c->is_string()) {
    outputs_[seq] = {c->get<std::string>(), false};
  } else if (auto r = data.find("content_ref"); r != data.end() && r->is_string()) {
    outputs_[seq] = {r->get<std::string>(), true};
  }
}

std::string RequestRebuilder::output(std::uint64_t seq) const {
  auto it = outputs_.find(seq);
  if (it == outputs_.end()) {
    throw std::runtime_error("request refers to record " + std::to_string(seq) +
                             ", which is no earlier tool_result with a content");
  }
  return it->second.in_blob ? blobs_(it->second.text) : it->second.text;
}

json RequestRebuilder::apply(const json& data) {
  if (data.contains("body") || data.contains("body_ref")) {
    json body = data.contains("body") ? data["body"]
                                      : json::parse(blobs_(data["body_ref"].get<std::string>()));
    last_ = body;
    if (last_.is_object() && last_.contains("messages")) take_marks(last_["messages"]);
    return body;
  }
  if (!data.contains("keep") || !data["keep"].is_number_unsigned()) {
    throw std::runtime_error("request has neither body nor keep");
  }
  size_t keep = data["keep"].get<size_t>();
  json body;
  if (data.contains("fields")) {
    body = data["fields"];
  } else if (last_.is_object()) {
    body = last_;
    body.erase("messages");
  } else {
    throw std::runtime_error("the first request gives no fields");
  }
  json msgs = json::array();
  const json* old = last_.is_object() && last_.contains("messages") ? &last_["messages"] : nullptr;
  size_t had = old ? old->size() : 0;
  if (keep > had) {
    throw std::runtime_error("request keeps " + std::to_string(keep) +
                             " messages; the previous request had " + std::to_string(had));
  }
  for (size_t i = 0; i < keep; ++i)
    msgs.push_back((*old)[i]);
  json append = data.contains("append_ref")
                    ? json::parse(blobs_(data["append_ref"].get<std::string>()))
                    : data.value("append", json::array());
  if (!append.is_array()) throw std::runtime_error("request append is not an array");
  for (auto& m : append)
    msgs.push_back(std::move(m));
  const json refs = data.value("refs", json::array());
  if (!refs.is_array()) throw std::runtime_error("request refs is not an array");
  for (const auto& ref : refs) {
    if (!ref.is_array() || ref.size() != 3 || !ref[0].is_number_unsigned() || !ref[1].is_string() ||
        !ref[2].is_number_unsigned()) {
      throw std::runtime_error("request ref is not [message, pointer, seq]");
    }
    size_t i = ref[0].get<size_t>();
    const std::string where = "request ref [" + std::to_string(i) + ", " + ref[1].dump() + "]";
    if (i < keep || i >= msgs.size())
      throw std::runtime_error(where + " names no appended message");
    json* slot = nullptr;
    try {
      slot = &msgs[i].at(json::json_pointer(ref[1].get<std::string>()));
    } catch (const json::exception& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
    if (!slot->is_null()) throw std::runtime_error(where + " names a value, not a null");
    *slot = output(ref[2].get<std::uint64_t>());
  }
  body["messages"] = std::move(msgs);
  last_ = body;  // unmarked, as the next record's keep counts
  if (data.contains("marks")) {
    json& m = body["messages"];
    for (const auto& mark : data["marks"]) {
      if (!mark.is_array() || mark.size() != 3 || !mark[0].is_number_unsigned() ||
          !mark[1].is_number_unsigned()) {
        throw std::runtime_error("request mark is not [message, block, marker]");
      }
      size_t i = mark[0].get<size_t>(), j = mark[1].get<size_t>();
      if (i >= m.size() || !m[i].contains("content") || !m[i]["content"].is_array() ||
          j >= m[i]["content"].size()) {
        throw std::runtime_error("request mark [" + std::to_string(i) + ", " + std::to_string(j) +
                                 "] names no content block");
      }
      m[i]["content"][j]["cache_control"] = mark[2];
    }
  }
  if (data.contains("sha256") && request_digest(body) != data["sha256"].get<std::string>()) {
    throw std::runtime_error("the rebuilt body does not match the recorded sha256");
  }
  return body;
}

}  // namespace kd::contract::transcript
