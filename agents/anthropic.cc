// Anthropic Messages: POST /v1/messages, content blocks, SSE with named events.
#include <map>
#include <optional>
#include <utility>

#include "agents/provider.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;

std::optional<long> count(const json& u, const char* key) {
  const json* v = member(u, key);
  if (!v || !v->is_number_integer()) return std::nullopt;
  return v->get<long>();
}

// Folds one usage object into `out`. Counts are cumulative on this wire: a later event replaces
// what an earlier one said, field by field. input_tokens counts only what follows the last
// breakpoint; the prompt is that plus the cache writes and reads.
void read_usage(const json& u, Usage& out) {
  if (auto w = count(u, "cache_creation_input_tokens")) {
    // Without the TTL split every write is priced as a 5-minute one.
    out.cache_write_5m_tokens = *w;
    out.cache_write_1h_tokens = 0;
    if (const json* split = object_member(u, "cache_creation")) {
      auto w5 = count(*split, "ephemeral_5m_input_tokens");
      auto w1 = count(*split, "ephemeral_1h_input_tokens");
      if (w5 || w1) {
        out.cache_write_5m_tokens = w5.value_or(0);
        out.cache_write_1h_tokens = w1.value_or(0);
      }
    }
  }
  if (auto r = count(u, "cache_read_input_tokens")) out.cache_read_tokens = *r;
  if (auto in = count(u, "input_tokens")) {
    out.input_tokens = *in + out.cache_read_tokens.value_or(0) +
                       out.cache_write_5m_tokens.value_or(0) +
                       out.cache_write_1h_tokens.value_or(0);
    out.reported = true;
  }
  if (auto o = count(u, "output_tokens")) {
    out.output_tokens = *o;
    out.reported = true;
  }
}

json cache_marker(const std::string& ttl) {
  json m = {{"type", "ephemeral"}};
  if (ttl == "1h") m["ttl"] = "1h";
  return m;
}

std::string str_field(const json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return {};
}

// Index of a block event, or nullopt when the event carries no integer index.
std::optional<long> block_index(const json& d) {
  const json* i = member(d, "index");
  if (!i || !i->is_number_integer()) return std::nullopt;
  return i->get<long>();
}

class AnthropicStream : public StreamAssembler {
 public:
  AssistantTurn take() override {
    AssistantTurn t = std::move(turn_);
    t.echo = json::array();
    for (auto& [index, b] : blocks_) {
      flush(b);
      t.echo.push_back(std::move(b.block));
    }
    return t;
  }

 protected:
  // A string field of a block grown by deltas: appended here and written into the block once,
  // so a long text costs no copy per delta.
  struct Growing {
    std::string value;
    bool used = false;
  };
  struct Block {
    json block;
    std::string partial_json;
    Growing text, thinking, signature;
    bool stopped = false;
  };

  void handle(const SseEvent& ev) override {
    json d = json::parse(ev.data, nullptr, false);
    if (d.is_discarded() || !d.is_object()) {
      fail("malformed", "",
           "event " + ev.name + ": data is not a JSON object: " + ev.data.substr(0, 120));
      return;
    }
    // The event name and JSON type are identical; the type survives a server that drops names.
    std::string_view type = string_member(d, "type");
    if (type.empty()) type = ev.name;
    if (type == "content_block_delta") {
      auto it = blocks_.end();
      if (auto i = block_index(d)) it = blocks_.find(*i);
      if (it == blocks_.end()) {
        fail("protocol", "", "content_block_delta for a block that never started");
        return;
      }
      const json* delta = object_member(d, "delta");
      if (!delta) return;
      std::string_view dt = string_member(*delta, "type");
      Block& b = it->second;
      if (dt == "text_delta") {
        std::string_view piece = string_member(*delta, "text");
        grow(b, b.text, "text", piece);
        if (on_text) on_text(piece);
      } else if (dt == "input_json_delta") {
        b.partial_json += string_member(*delta, "partial_json");
      } else if (dt == "thinking_delta") {
        grow(b, b.thinking, "thinking", string_member(*delta, "thinking"));
      } else if (dt == "signature_delta") {
        grow(b, b.signature, "signature", string_member(*delta, "signature"));
      }
    } else if (type == "message_start") {
      if (const json* m = object_member(d, "message")) {
        turn_.request_id = string_member(*m, "id");
        if (const json* u = object_member(*m, "usage")) apply_usage(*u);
      }
    } else if (type == "content_block_start") {
      auto i = block_index(d);
      const json* cb = object_member(d, "content_block");
      if (!i || !cb) {
        fail("protocol", "", "content_block_start without index or content_block");
        return;
      }
      Block& b = blocks_[*i];
      b.block = *cb;
    } else if (type == "content_block_stop") {
      auto it = blocks_.end();
      if (auto i = block_index(d)) it = blocks_.find(*i);
      if (it == blocks_.end()) {
        fail("protocol", "", "content_block_stop for a block that never started");
        return;
      }
      close_block(it->second);
    } else if (type == "message_delta") {
      if (const json* delta = object_member(d, "delta")) {
        std::string_view sr = string_member(*delta, "stop_reason");
        if (!sr.empty()) turn_.stop_reason = sr;
      }
      if (const json* u = object_member(d, "usage")) apply_usage(*u);
    } else if (type == "message_stop") {
      for (auto& [i, b] : blocks_) {
        if (!b.stopped) {
          fail("protocol", "",
               "message_stop before content_block_stop of block " + std::to_string(i));
          return;
        }
      }
      done_ = true;
    } else if (type == "error") {
      const json* e = object_member(d, "error");
      fail("error_event", e ? std::string(string_member(*e, "type")) : std::string(),
           e ? std::string(string_member(*e, "message")) : std::string());
    }
    // ping and event names this client does not know are ignored.
  }

 private:
  // The first delta of a field starts from what content_block_start gave it.
  static void grow(Block& b, Growing& g, const char* field, std::string_view piece) {
    if (!g.used) {
      g.used = true;
      g.value = string_member(b.block, field);
    }
    g.value += piece;
  }

  static void flush(Block& b) {
    for (auto [g, field] : {std::pair{&b.text, "text"}, std::pair{&b.thinking, "thinking"},
                            std::pair{&b.signature, "signature"}}) {
      if (!g->used) continue;
      b.block[field] = std::move(g->value);
      g->value.clear();
      g->used = false;
    }
  }

  void apply_usage(const json& u) { read_usage(u, turn_.usage); }

  void close_block(Block& b) {
    b.stopped = true;
    flush(b);
    std::string bt = str_field(b.block, "type");
    if (bt == "text") {
      turn_.text += string_member(b.block, "text");
    } else if (bt == "tool_use") {
      ToolCall c;
      c.id = str_field(b.block, "id");
      c.name = str_field(b.block, "name");
      set_tool_arguments(c, b.partial_json);
      // The echo must carry an object; arguments that were not JSON are echoed as {} and the
      // tool result tells the model what was wrong.
      b.block["input"] = c.input;
      turn_.tool_calls.push_back(std::move(c));
    }
  }

  AssistantTurn turn_;
  std::map<long, Block> blocks_;
};

class Anthropic : public Provider {
 public:
  std::string_view wire() const override { return "anthropic"; }
  std::string path() const override { return "/v1/messages"; }
  std::vector<std::string> headers(const std::string& key) const override {
    std::vector<std::string> h = {"content-type: application/json", "anthropic-version: 2023-06-01",
                                  "Expect:"};
    if (!key.empty()) h.push_back("x-api-key: " + key);
    return h;
  }

  json request_body(const Conversation& conv, const std::vector<ToolSpec>& tools,
                    const std::string& model, int max_tokens, bool stream,
                    const CacheOptions& cache) const override {
    json body = {{"model", model}, {"max_tokens", max_tokens}};
    if (!conv.system.empty()) {
      if (cache.enabled) {
        body["system"] = json::array({{{"type", "text"},
                                       {"text", conv.system},
                                       {"cache_control", cache_marker(cache.static_ttl)}}});
      } else {
        body["system"] = conv.system;
      }
    }
    if (!tools.empty()) {
      json t = json::array();
      for (const auto& s : tools) {
        t.push_back(
            {{"name", s.name}, {"description", s.description}, {"input_schema", s.input_schema}});
      }
      if (cache.enabled) t.back()["cache_control"] = cache_marker(cache.static_ttl);
      body["tools"] = std::move(t);
      body["tool_choice"] = {{"type", "auto"}};
    }
    json msgs = json::array();
    std::vector<size_t> user_messages;
    for (const Message& m : conv.messages) {
      switch (m.kind) {
        case Message::Kind::user:
          user_messages.push_back(msgs.size());
          // As a block list when caching, so that the message can carry a marker and reads
          // the same whether it carries one or not.
          msgs.push_back(
              {{"role", "user"},
               {"content", cache.enabled ? json::array({{{"type", "text"}, {"text", m.text}}})
                                         : json(m.text)}});
          break;
        case Message::Kind::assistant:
          msgs.push_back({{"role", "assistant"}, {"content", m.assistant.echo}});
          break;
        case Message::Kind::tool_results: {
          json blocks = json::array();
          for (const ToolResult& r : m.results) {
            json b = {
                {"type", "tool_result"}, {"tool_use_id", r.tool_call_id}, {"content", r.content}};
            if (r.is_error) b["is_error"] = true;
            blocks.push_back(std::move(b));
          }
          user_messages.push_back(msgs.size());
          msgs.push_back({{"role", "user"}, {"content", std::move(blocks)}});
          break;
        }
      }
    }
    if (cache.enabled) {
      // Sliding markers: the newest user message (this turn's write) and the one before (a
      // read that survives a turn adding more than the look-back of 20 blocks). With the tools
      // and the system prompt that makes the 4 a request may carry.
      for (size_t k = user_messages.size() >= 2 ? user_messages.size() - 2 : 0;
           k < user_messages.size(); ++k) {
        json& content = msgs[user_messages[k]]["content"];
        if (content.is_array() && !content.empty())
          content.back()["cache_control"] = cache_marker("5m");
      }
    }
    body["messages"] = std::move(msgs);
    if (stream) body["stream"] = true;
    return body;
  }

  AssistantTurn parse_response(const json& body) const override {
    if (!body.is_object() || !body.contains("content") || !body["content"].is_array()) {
      throw ProtocolError("Anthropic response has no content array");
    }
    AssistantTurn t;
    t.request_id = str_field(body, "id");
    t.stop_reason = str_field(body, "stop_reason");
    t.echo = body["content"];
    for (const json& b : body["content"]) {
      std::string bt = str_field(b, "type");
      if (bt == "text") {
        t.text += str_field(b, "text");
      } else if (bt == "tool_use") {
        ToolCall c;
        c.id = str_field(b, "id");
        c.name = str_field(b, "name");
        c.input = b.contains("input") ? b["input"] : json::object();
        c.input_raw = c.input.dump();
        c.input_is_json = c.input.is_object();
        if (!c.input_is_json) c.input = json::object();
        t.tool_calls.push_back(std::move(c));
      }
    }
    if (const json* u = object_member(body, "usage")) read_usage(*u, t.usage);
    return t;
  }

  std::unique_ptr<StreamAssembler> stream_assembler() const override {
    return std::make_unique<AnthropicStream>();
  }
};

}  // namespace

std::unique_ptr<Provider> make_anthropic_provider() {
  return std::make_unique<Anthropic>();
}

}  // namespace kd::agents
