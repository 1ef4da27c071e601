// OpenAI Chat Completions (also vLLM, llama.cpp, Ollama): POST /v1/chat/completions,
// data-only SSE ending with [DONE], tool arguments as JSON text.
#include <map>

#include "agents/provider.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;

std::string str_field(const json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return {};
}

std::optional<long> count(const json& u, const char* key) {
  const json* v = member(u, key);
  if (!v || !v->is_number_integer()) return std::nullopt;
  return v->get<long>();
}

// prompt_tokens counts the cached tokens too (the opposite of Anthropic). A server that sends no
// cached_tokens (vLLM without --enable-prompt-tokens-details) leaves them unknown.
void read_usage(const json& u, Usage& usage) {
  if (!u.is_object()) return;
  if (auto p = count(u, "prompt_tokens")) {
    usage.input_tokens = *p;
    usage.reported = true;
  }
  if (const json* d = object_member(u, "prompt_tokens_details")) {
    if (auto c = count(*d, "cached_tokens")) usage.cache_read_tokens = *c;
    if (auto w = count(*d, "cache_write_tokens")) usage.cache_write_5m_tokens = *w;
  }
  // DeepSeek reports hits in its own field.
  if (auto h = count(u, "prompt_cache_hit_tokens")) usage.cache_read_tokens = *h;
  if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer()) {
    usage.output_tokens = u["completion_tokens"].get<long>();
    usage.reported = true;
  }
}

// The assistant message to echo: content text (or null) and tool_calls with their argument
// strings exactly as received.
json echo_message(const AssistantTurn& t) {
  json m = {{"role", "assistant"}, {"content", t.text.empty() ? json(nullptr) : json(t.text)}};
  if (!t.tool_calls.empty()) {
    json calls = json::array();
    for (const ToolCall& c : t.tool_calls) {
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.input_raw}}}});
    }
    m["tool_calls"] = std::move(calls);
  }
  return m;
}

class OpenAIStream : public StreamAssembler {
 public:
  AssistantTurn take() override {
    for (auto& [index, p] : calls_) {
      ToolCall c;
      c.id = std::move(p.id);
      c.name = std::move(p.name);
      set_tool_arguments(c, std::move(p.args));
      turn_.tool_calls.push_back(std::move(c));
    }
    calls_.clear();
    turn_.echo = echo_message(turn_);
    return std::move(turn_);
  }

 protected:
  void handle(const SseEvent& ev) override {
    if (ev.data.rfind("[DONE]", 0) == 0) {
      done_ = true;
      return;
    }
    json d = json::parse(ev.data, nullptr, false);
    if (d.is_discarded() || !d.is_object()) {
      fail("malformed", "", "chunk is not a JSON object: " + ev.data.substr(0, 120));
      return;
    }
    if (d.contains("error")) {
      const json& e = d["error"];
      std::string type = str_field(e, "code");
      if (type.empty()) type = str_field(e, "type");
      fail("error_event", type, e.is_object() ? str_field(e, "message") : e.dump());
      return;
    }
    if (turn_.request_id.empty()) turn_.request_id = string_member(d, "id");
    if (const json* u = member(d, "usage")) read_usage(*u, turn_.usage);
    const json* choices = member(d, "choices");
    if (!choices || !choices->is_array()) return;
    for (const json& ch : *choices) {
      if (const json* i = member(ch, "index"); i && !(i->is_number() && *i == 0)) {
        continue;  // n=1 is what we ask for
      }
      std::string_view fr = string_member(ch, "finish_reason");
      if (!fr.empty()) turn_.stop_reason = fr;
      const json* delta = object_member(ch, "delta");
      if (!delta) continue;
      std::string_view piece = string_member(*delta, "content");
      if (!piece.empty()) {
        turn_.text += piece;
        if (on_text) on_text(piece);
      }
      const json* calls = member(*delta, "tool_calls");
      if (!calls || !calls->is_array()) continue;
      for (const json& tc : *calls) {
        const json* index = member(tc, "index");
        if (!index || !index->is_number_integer()) {
          fail("protocol", "", "tool_calls fragment without an integer index");
          return;
        }
        Pending& p = calls_[index->get<long>()];
        if (p.id.empty()) p.id = string_member(tc, "id");
        const json* fn = object_member(tc, "function");
        if (!fn) continue;
        if (p.name.empty()) p.name = string_member(*fn, "name");
        p.args += string_member(*fn, "arguments");
      }
    }
  }

 private:
  struct Pending {
    std::string id, name, args;
  };
  AssistantTurn turn_;
  std::map<long, Pending> calls_;
};

class OpenAI : public Provider {
 public:
  std::string_view wire() const override { return "openai"; }
  std::string path() const override { return "/v1/chat/completions"; }
  std::vector<std::string> headers(const std::string& key) const override {
    std::vector<std::string> h = {"Content-Type: application/json", "Expect:"};
    if (!key.empty()) h.push_back("Authorization: Bearer " + key);
    return h;
  }

  json request_body(const Conversation& conv, const std::vector<ToolSpec>& tools,
                    const std::string& model, int max_tokens, bool stream,
                    const CacheOptions& cache) const override {
    // max_tokens rather than max_completion_tokens: the compatible servers understand only it.
    json body = {{"model", model}, {"max_tokens", max_tokens}};
    json msgs = json::array();
    if (!conv.system.empty()) msgs.push_back({{"role", "system"}, {"content", conv.system}});
    for (const Message& m : conv.messages) {
      switch (m.kind) {
        case Message::Kind::user:
          msgs.push_back({{"role", "user"}, {"content", m.text}});
          break;
        case Message::Kind::assistant:
          msgs.push_back(m.assistant.echo);
          break;
        case Message::Kind::tool_results:
          // No is_error field on this wire: the content says it.
          for (const ToolResult& r : m.results) {
            msgs.push_back({{"role", "tool"},
                            {"tool_call_id", r.tool_call_id},
                            {"content", r.is_error ? "ERROR: " + r.content : r.content}});
          }
          break;
      }
    }
    body["messages"] = std::move(msgs);
    if (!tools.empty()) {
      json t = json::array();
      for (const auto& s : tools) {
        t.push_back(
            {{"type", "function"},
             {"function",
              {{"name", s.name}, {"description", s.description}, {"parameters", s.input_schema}}}});
      }
      body["tools"] = std::move(t);
      body["tool_choice"] = "auto";
    }
    // The prefix is stable by construction (system, tools, then only appends); the key keeps a
    // session's requests on the machine that holds its prefix.
    if (cache.enabled && !cache.prompt_cache_key.empty())
      body["prompt_cache_key"] = cache.prompt_cache_key;
    if (stream) {
      body["stream"] = true;
      body["stream_options"] = {{"include_usage", true}};
    }
    return body;
  }

  AssistantTurn parse_response(const json& body) const override {
    if (!body.is_object() || !body.contains("choices") || !body["choices"].is_array() ||
        body["choices"].empty() || !body["choices"][0].is_object() ||
        !body["choices"][0].contains("message") || !body["choices"][0]["message"].is_object()) {
      throw ProtocolError("OpenAI response has no choices[0].message");
    }
    const json& ch = body["choices"][0];
    const json& m = ch["message"];
    AssistantTurn t;
    t.request_id = str_field(body, "id");
    t.stop_reason = str_field(ch, "finish_reason");
    t.text = str_field(m, "content");
    // Tool calls are decided by the tool_calls array, never by finish_reason.
    if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
      for (const json& tc : m["tool_calls"]) {
        ToolCall c;
        c.id = str_field(tc, "id");
        const json& fn = tc.value("function", json::object());
        c.name = str_field(fn, "name");
        set_tool_arguments(c, str_field(fn, "arguments"));
        t.tool_calls.push_back(std::move(c));
      }
    }
    if (body.contains("usage")) read_usage(body["usage"], t.usage);
    t.echo = m;  // echoed unchanged, so fields this client does not model survive
    return t;
  }

  std::unique_ptr<StreamAssembler> stream_assembler() const override {
    return std::make_unique<OpenAIStream>();
  }
};

}  // namespace

std::unique_ptr<Provider> make_openai_provider() {
  return std::make_unique<OpenAI>();
}

}  // namespace kd::agents
