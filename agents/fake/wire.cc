#include "agents/fake/wire.h"

namespace kd::agents::fake {
namespace {

using json = nlohmann::json;

std::string sse(const std::string& name, const json& data) {
  std::string out;
  if (!name.empty()) out += "event: " + name + "\n";
  return out + "data: " + data.dump() + "\n\n";
}

std::string content_text(const json& c) {
  if (c.is_string()) return c;
  std::string out;
  if (c.is_array()) {
    for (const auto& b : c) {
      if (b.is_object() && b.value("type", "") == "text") out += b.value("text", "");
    }
  }
  return out;
}

// The first fragment is "" as real servers often send; then two arbitrary halves.
std::vector<std::string> split_args(const std::string& a) {
  if (a.empty()) return {""};
  size_t h = a.size() / 2;
  return {"", a.substr(0, h), a.substr(h)};
}

// Anthropic Messages: named events, content blocks by index, stop reason in message_delta.
class AnthropicWire : public Wire {
 public:
  AnthropicWire() : Wire("end_turn", "tool_use") {}

  std::string_view name() const override { return "anthropic"; }
  std::string request_id_header() const override { return "request-id: req_fake"; }

  std::string default_error_type(int s) const override {
    switch (s) {
      case 401:
        return "authentication_error";
      case 429:
        return "rate_limit_error";
      case 500:
        return "api_error";
      case 504:
        return "timeout_error";
      case 529:
        return "overloaded_error";
      default:
        return s >= 500 ? "api_error" : "invalid_request_error";
    }
  }

  std::string error_body(const std::string& type, const std::string& message) const override {
    return json{{"type", "error"},
                {"error", {{"type", type}, {"message", message}}},
                {"request_id", "req_fake"}}
        .dump();
  }

  std::vector<std::string> events(const Reply& r, const json&) const override {
    std::vector<std::string> ev;
    message_start(r, ev);
    int index = 0;
    if (!r.text_chunks.empty()) text_block(r, index++, ev);
    if (r.turn.noise) unknown_block(index++, ev);
    for (const auto& c : r.calls)
      tool_block(c, index++, ev);
    ev.push_back(sse("message_delta",
                     {{"type", "message_delta"},
                      {"delta", {{"stop_reason", stop_reason(r)}, {"stop_sequence", nullptr}}},
                      {"usage", {{"output_tokens", r.turn.output_tokens}}}}));
    ev.push_back(sse("message_stop", {{"type", "message_stop"}}));
    return ev;
  }

  std::string whole_body(const Reply& r) const override {
    json content = json::array();
    if (!r.text.empty()) content.push_back({{"type", "text"}, {"text", r.text}});
    for (const auto& c : r.calls) {
      json input = json::parse(c.args, nullptr, false);
      // Anthropic's whole responses always carry an object; a non-JSON script argument becomes
      // a string input so the client still sees arguments it must reject.
      content.push_back({{"type", "tool_use"},
                         {"id", c.id},
                         {"name", c.name},
                         {"input", input.is_discarded() ? json(c.args) : input}});
    }
    return json{{"id", "msg_fake_" + std::to_string(r.number)},
                {"type", "message"},
                {"role", "assistant"},
                {"model", r.model},
                {"content", content},
                {"stop_reason", stop_reason(r)},
                {"stop_sequence", nullptr},
                {"usage", usage(r, r.turn.output_tokens)}}
        .dump();
  }

  std::string error_event(const std::string& type) const override {
    return sse("error",
               {{"type", "error"}, {"error", {{"type", type}, {"message", "Overloaded"}}}});
  }

  std::string malformed_event() const override {
    return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n";
  }

 protected:
  void add_results(const json& m, RequestResults& out) const override {
    if (m.value("role", "") != "user" || !m.contains("content") || !m["content"].is_array()) return;
    for (const auto& b : m["content"]) {
      if (b.is_object() && b.value("type", "") == "tool_result") {
        out.last = content_text(b.value("content", json()));
        out.by_id[b.value("tool_use_id", "")] = out.last;
        out.any = true;
      }
    }
  }

 private:
  // input_tokens is what follows the read and the writes.
  static json usage(const Reply& r, long output_tokens) {
    if (!r.billed) {
      return {{"input_tokens", r.turn.input_tokens},
              {"cache_creation_input_tokens", 0},
              {"cache_read_input_tokens", 0},
              {"output_tokens", output_tokens}};
    }
    const Billed& b = *r.billed;
    return {{"input_tokens", b.input_tokens - b.cache_read - b.cache_write_5m - b.cache_write_1h},
            {"cache_creation_input_tokens", b.cache_write_5m + b.cache_write_1h},
            {"cache_creation",
             {{"ephemeral_5m_input_tokens", b.cache_write_5m},
              {"ephemeral_1h_input_tokens", b.cache_write_1h}}},
            {"cache_read_input_tokens", b.cache_read},
            {"output_tokens", output_tokens}};
  }

  // message_start, and with noise the comments, pings and unknown events clients must skip.
  static void message_start(const Reply& r, std::vector<std::string>& ev) {
    json start = {{"id", "msg_fake_" + std::to_string(r.number)},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", r.model},
                  {"content", json::array()},
                  {"stop_reason", nullptr},
                  {"stop_sequence", nullptr},
                  {"usage", usage(r, 1)}};
    json ms = {{"type", "message_start"}, {"message", start}};
    if (r.turn.noise) ms["fake_future_field"] = {{"x", 1}};
    ev.push_back(sse("message_start", ms));
    if (!r.turn.noise) return;
    ev.push_back(": keep-alive\n\n");
    ev.push_back("event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n");
    ev.push_back(
        sse("fake_future_event", {{"type", "fake_future_event"}, {"detail", "ignore me"}}));
  }

  static void block_start(int index, json block, std::vector<std::string>& ev) {
    ev.push_back(sse(
        "content_block_start",
        {{"type", "content_block_start"}, {"index", index}, {"content_block", std::move(block)}}));
  }
  static void block_delta(int index, json delta, std::vector<std::string>& ev) {
    ev.push_back(
        sse("content_block_delta",
            {{"type", "content_block_delta"}, {"index", index}, {"delta", std::move(delta)}}));
  }
  static void block_stop(int index, std::vector<std::string>& ev) {
    ev.push_back(sse("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
  }

  static void text_block(const Reply& r, int index, std::vector<std::string>& ev) {
    block_start(index, {{"type", "text"}, {"text", ""}}, ev);
    for (const auto& c : r.text_chunks) {
      block_delta(index, {{"type", "text_delta"}, {"text", c}}, ev);
      if (r.turn.noise) ev.push_back(sse("ping", {{"type", "ping"}}));
    }
    block_stop(index, ev);
  }

  static void unknown_block(int index, std::vector<std::string>& ev) {
    block_start(index, {{"type", "fake_future_block"}, {"data", ""}}, ev);
    block_delta(index, {{"type", "fake_future_delta"}, {"data", "x"}}, ev);
    block_stop(index, ev);
  }

  static void tool_block(const Reply::Call& c, int index, std::vector<std::string>& ev) {
    block_start(index,
                {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", json::object()}},
                ev);
    for (const auto& piece : split_args(c.args))
      block_delta(index, {{"type", "input_json_delta"}, {"partial_json", piece}}, ev);
    block_stop(index, ev);
  }
};

// OpenAI Chat Completions: `data:` chunks of choices[0].delta, finish_reason in the last one,
// `[DONE]` at the end.
class OpenAiWire : public Wire {
 public:
  OpenAiWire() : Wire("stop", "tool_calls") {}

  std::string_view name() const override { return "openai"; }
  std::string request_id_header() const override { return "x-request-id: req_fake"; }

  std::string default_error_type(int s) const override {
    if (s == 429) return "rate_limit_exceeded";
    if (s == 401) return "invalid_api_key";
    return s >= 500 ? "server_error" : "invalid_request_error";
  }

  std::string error_body(const std::string& type, const std::string& message) const override {
    return json{
        {"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", type}}}}
        .dump();
  }

  std::vector<std::string> events(const Reply& r, const json& request) const override {
    bool include_usage = request.contains("stream_options") &&
                         request["stream_options"].is_object() &&
                         request["stream_options"].value("include_usage", false);
    Chunks chunks{r, include_usage};
    std::vector<std::string> ev;
    ev.push_back(
        chunks.make({{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr));
    if (r.turn.noise) {
      ev.push_back(": keep-alive\n\n");
      json empty = chunks.base;
      empty["choices"] = json::array();
      ev.push_back("data: " + empty.dump() + "\r\n\r\n");
    }
    for (const auto& c : r.text_chunks)
      ev.push_back(chunks.make({{"content", c}}, nullptr));
    tool_call_chunks(r, chunks, ev);
    ev.push_back(chunks.make(json::object(), stop_reason(r)));
    if (include_usage) {
      json u = chunks.base;
      u["choices"] = json::array();
      u["usage"] = usage(r);
      ev.push_back("data: " + u.dump() + "\n\n");
    }
    ev.push_back("data: [DONE]\n\n");
    return ev;
  }

  std::string whole_body(const Reply& r) const override {
    json msg = {{"role", "assistant"},
                {"content", r.text.empty() ? json(nullptr) : json(r.text)},
                {"refusal", nullptr}};
    if (!r.calls.empty()) {
      json calls = json::array();
      for (const auto& c : r.calls) {
        calls.push_back({{"id", c.id},
                         {"type", "function"},
                         {"function", {{"name", c.name}, {"arguments", c.args}}}});
      }
      msg["tool_calls"] = calls;
    }
    json choice = {
        {"index", 0}, {"message", msg}, {"logprobs", nullptr}, {"finish_reason", stop_reason(r)}};
    return json{{"id", "chatcmpl-fake-" + std::to_string(r.number)},
                {"object", "chat.completion"},
                {"created", 1767225600},
                {"model", r.model},
                {"choices", json::array({choice})},
                {"usage", usage(r)}}
        .dump();
  }

  std::string error_event(const std::string& type) const override {
    return "data: " +
           json{
               {"error",
                {{"message", "Overloaded"}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}}
               .dump() +
           "\n\n";
  }

  std::string malformed_event() const override { return "data: {\"id\":\"chatcmpl-broken\",\n\n"; }

 protected:
  void add_results(const json& m, RequestResults& out) const override {
    if (m.value("role", "") != "tool") return;
    out.last = content_text(m.value("content", json()));
    out.by_id[m.value("tool_call_id", "")] = out.last;
    out.any = true;
  }

 private:
  // One chat.completion.chunk around a delta.
  struct Chunks {
    Chunks(const Reply& r, bool include_usage) : noise(r.turn.noise), include_usage(include_usage) {
      base = {{"id", "chatcmpl-fake-" + std::to_string(r.number)},
              {"object", "chat.completion.chunk"},
              {"created", 1767225600},
              {"model", r.model},
              {"system_fingerprint", "fp_fake"}};
    }
    std::string make(json delta, json finish) const {
      json c = base;
      c["choices"] = json::array({{{"index", 0},
                                   {"delta", std::move(delta)},
                                   {"logprobs", nullptr},
                                   {"finish_reason", std::move(finish)}}});
      if (include_usage) c["usage"] = nullptr;
      if (noise) c["obfuscation"] = "pad";
      return "data: " + c.dump() + "\n\n";
    }
    json base;
    bool noise, include_usage;
  };

  // cached_tokens is inside prompt_tokens on this wire.
  static json usage(const Reply& r) {
    const FakeTurn& t = r.turn;
    long prompt = r.billed ? r.billed->input_tokens : t.input_tokens;
    json u = {{"prompt_tokens", prompt},
              {"completion_tokens", t.output_tokens},
              {"total_tokens", prompt + t.output_tokens}};
    if (r.billed) u["prompt_tokens_details"] = {{"cached_tokens", r.billed->cache_read}};
    return u;
  }

  // Each call's head, then the argument fragments of parallel calls interleaved by index, as
  // servers do.
  static void tool_call_chunks(const Reply& r, const Chunks& chunks, std::vector<std::string>& ev) {
    std::vector<std::vector<std::string>> pieces;
    for (const auto& c : r.calls)
      pieces.push_back(split_args(c.args));
    for (size_t k = 0; k < r.calls.size(); ++k) {
      json head = {{"index", k},
                   {"id", r.calls[k].id},
                   {"type", "function"},
                   {"function", {{"name", r.calls[k].name}, {"arguments", ""}}}};
      ev.push_back(chunks.make({{"tool_calls", json::array({head})}}, nullptr));
    }
    for (size_t p = 1; p < 3; ++p) {
      for (size_t k = 0; k < r.calls.size(); ++k) {
        if (p >= pieces[k].size()) continue;
        json fragment = {{"index", k}, {"function", {{"arguments", pieces[k][p]}}}};
        ev.push_back(chunks.make({{"tool_calls", json::array({fragment})}}, nullptr));
      }
    }
  }
};

const AnthropicWire kAnthropic;
const OpenAiWire kOpenAi;

}  // namespace

std::string Wire::stop_reason(const Reply& r) const {
  if (!r.turn.stop_reason.empty()) return r.turn.stop_reason;
  return std::string(r.calls.empty() ? end_stop_ : tool_stop_);
}

RequestResults Wire::results(const json& messages) const {
  RequestResults r;
  for (const auto& m : messages) {
    if (r.first_user.empty() && m.value("role", "") == "user")
      r.first_user = content_text(m.value("content", json()));
    add_results(m, r);
  }
  return r;
}

const Wire* wire_for_path(std::string_view path) {
  if (path == "/v1/messages") return &kAnthropic;
  if (path == "/v1/chat/completions") return &kOpenAi;
  return nullptr;
}

const Wire& anthropic_wire() {
  return kAnthropic;
}

}  // namespace kd::agents::fake
