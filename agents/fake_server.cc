#include "agents/fake_server.h"

#include <time.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "agents/asio.h"
#include "common/errors.h"
#include "common/sha256.h"
#include "common/text.h"

namespace kd::agents {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using json = nlohmann::json;

namespace {

struct Resolved {  // a turn with its placeholders filled in
  std::string text;
  std::vector<std::string> text_chunks;
  struct Call {
    std::string id, name, args;
  };
  std::vector<Call> calls;
};

std::string status_text(int s) {
  switch (s) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 529:
      return "Overloaded";
    default:
      return "Status";
  }
}

std::string default_error_type(const std::string& wire, int s) {
  if (wire == "openai") {
    if (s == 429) return "rate_limit_exceeded";
    if (s == 401) return "invalid_api_key";
    return s >= 500 ? "server_error" : "invalid_request_error";
  }
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

std::string error_body(const std::string& wire, const std::string& type,
                       const std::string& message) {
  if (wire == "openai") {
    return json{
        {"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", type}}}}
        .dump();
  }
  return json{{"type", "error"},
              {"error", {{"type", type}, {"message", message}}},
              {"request_id", "req_fake"}}
      .dump();
}

std::string sse(const std::string& name, const json& data) {
  std::string out;
  if (!name.empty()) out += "event: " + name + "\n";
  return out + "data: " + data.dump() + "\n\n";
}

// Tool results the request carries: id -> content, plus the last one.
struct Results {
  std::map<std::string, std::string> by_id;
  std::string last;
  bool any = false;
  std::string first_user;  // the conversation's first user message, as text
};

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

Results collect_results(const std::string& wire, const json& messages) {
  Results r;
  for (const auto& m : messages) {
    if (r.first_user.empty() && m.value("role", "") == "user")
      r.first_user = content_text(m.value("content", json()));
    if (wire == "openai") {
      if (m.value("role", "") == "tool") {
        r.last = content_text(m.value("content", json()));
        r.by_id[m.value("tool_call_id", "")] = r.last;
        r.any = true;
      }
    } else if (m.value("role", "") == "user" && m.contains("content") && m["content"].is_array()) {
      for (const auto& b : m["content"]) {
        if (b.is_object() && b.value("type", "") == "tool_result") {
          r.last = content_text(b.value("content", json()));
          r.by_id[b.value("tool_use_id", "")] = r.last;
          r.any = true;
        }
      }
    }
  }
  return r;
}

// {{last_result}}, {{last_result.KEY}}, {{result.ID}}, {{result.ID.KEY}}, {{experiment}};
// {{now_us}} is left for write time. Throws kd::Error naming an unresolvable placeholder.
std::string interpolate(const std::string& s, const Results& r) {
  static const std::regex re(
      R"(\{\{\s*(last_result|experiment|result\.([A-Za-z0-9_-]+))(?:\.([A-Za-z0-9_]+))?\s*\}\})");
  // The dispatcher's first message names the experiment: "Author the candidates of <slug> vNNN".
  static const std::regex named(R"(candidates of ([a-z0-9-]+ v[0-9]{3}))");
  std::string out;
  auto begin = std::sregex_iterator(s.begin(), s.end(), re);
  size_t pos = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += s.substr(pos, m.position(0) - pos);
    pos = m.position(0) + m.length(0);
    std::string content;
    if (m[1] == "experiment") {
      std::smatch e;
      if (!std::regex_search(r.first_user, e, named))
        throw Error("placeholder " + m.str(0) + ": the first user message names no experiment");
      out += e[1].str();
      continue;
    }
    if (m[1] == "last_result") {
      if (!r.any) throw Error("placeholder " + m.str(0) + ": the request carries no tool result");
      content = r.last;
    } else {
      auto f = r.by_id.find(m[2]);
      if (f == r.by_id.end())
        throw Error("placeholder " + m.str(0) + ": no tool result with id " + m[2].str());
      content = f->second;
    }
    if (m[3].matched) {
      json j = json::parse(content, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains(m[3].str())) {
        throw Error("placeholder " + m.str(0) + ": the tool result is not a JSON object with key " +
                    m[3].str());
      }
      const json& v = j[m[3].str()];
      content = v.is_string() ? v.get<std::string>() : v.dump();
    } else {
      while (!content.empty() && (content.back() == '\n' || content.back() == ' '))
        content.pop_back();
    }
    out += content;
  }
  out += s.substr(pos);
  return out;
}

json interpolate_json(const json& j, const Results& r) {
  if (j.is_string()) return interpolate(j.get<std::string>(), r);
  if (j.is_array() || j.is_object()) {
    json out = j;
    for (auto& v : out)
      v = interpolate_json(v, r);
    return out;
  }
  return j;
}

std::string stamp_now(std::string s) {
  static constexpr std::string_view kNow = "{{now_us}}";
  for (size_t p = s.find(kNow); p != std::string::npos; p = s.find(kNow, p)) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s.replace(p, kNow.size(), std::to_string(ts.tv_sec * 1'000'000LL + ts.tv_nsec / 1000));
  }
  return s;
}

// Cuts text into pieces of about n bytes, never inside a UTF-8 sequence.
std::vector<std::string> utf8_pieces(const std::string& text, size_t n) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = std::min(text.size(), pos + n);
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
      ++end;
    out.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

std::vector<std::string> split_args(const std::string& a) {
  // The first fragment is "" as real servers often send; then two arbitrary halves.
  if (a.empty()) return {""};
  size_t h = a.size() / 2;
  return {"", a.substr(0, h), a.substr(h)};
}

std::vector<std::string> anthropic_events(const FakeTurn& t, const Resolved& r, size_t turn,
                                          const std::string& model) {
  std::vector<std::string> ev;
  json start_msg = {{"id", "msg_fake_" + std::to_string(turn)},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", model},
                    {"content", json::array()},
                    {"stop_reason", nullptr},
                    {"stop_sequence", nullptr},
                    {"usage",
                     {{"input_tokens", t.input_tokens},
                      {"cache_creation_input_tokens", 0},
                      {"cache_read_input_tokens", 0},
                      {"output_tokens", 1}}}};
  json ms = {{"type", "message_start"}, {"message", start_msg}};
  if (t.noise) ms["fake_future_field"] = {{"x", 1}};
  ev.push_back(sse("message_start", ms));
  if (t.noise) {
    ev.push_back(": keep-alive\n\n");
    ev.push_back("event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n");
    ev.push_back(
        sse("fake_future_event", {{"type", "fake_future_event"}, {"detail", "ignore me"}}));
  }
  int index = 0;
  if (!r.text_chunks.empty()) {
    ev.push_back(sse("content_block_start", {{"type", "content_block_start"},
                                             {"index", index},
                                             {"content_block", {{"type", "text"}, {"text", ""}}}}));
    for (const auto& c : r.text_chunks) {
      ev.push_back(sse("content_block_delta", {{"type", "content_block_delta"},
                                               {"index", index},
                                               {"delta", {{"type", "text_delta"}, {"text", c}}}}));
      if (t.noise) ev.push_back(sse("ping", {{"type", "ping"}}));
    }
    ev.push_back(sse("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  if (t.noise) {
    ev.push_back(sse("content_block_start",
                     {{"type", "content_block_start"},
                      {"index", index},
                      {"content_block", {{"type", "fake_future_block"}, {"data", ""}}}}));
    ev.push_back(
        sse("content_block_delta", {{"type", "content_block_delta"},
                                    {"index", index},
                                    {"delta", {{"type", "fake_future_delta"}, {"data", "x"}}}}));
    ev.push_back(sse("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  for (const auto& c : r.calls) {
    ev.push_back(
        sse("content_block_start",
            {{"type", "content_block_start"},
             {"index", index},
             {"content_block",
              {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", json::object()}}}}));
    for (const auto& piece : split_args(c.args)) {
      ev.push_back(sse("content_block_delta",
                       {{"type", "content_block_delta"},
                        {"index", index},
                        {"delta", {{"type", "input_json_delta"}, {"partial_json", piece}}}}));
    }
    ev.push_back(sse("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  std::string stop = !t.stop_reason.empty() ? t.stop_reason
                     : r.calls.empty()      ? "end_turn"
                                            : "tool_use";
  ev.push_back(sse("message_delta", {{"type", "message_delta"},
                                     {"delta", {{"stop_reason", stop}, {"stop_sequence", nullptr}}},
                                     {"usage", {{"output_tokens", t.output_tokens}}}}));
  ev.push_back(sse("message_stop", {{"type", "message_stop"}}));
  return ev;
}

std::vector<std::string> openai_events(const FakeTurn& t, const Resolved& r, size_t turn,
                                       const std::string& model, bool include_usage) {
  std::vector<std::string> ev;
  json base = {{"id", "chatcmpl-fake-" + std::to_string(turn)},
               {"object", "chat.completion.chunk"},
               {"created", 1767225600},
               {"model", model},
               {"system_fingerprint", "fp_fake"}};
  auto chunk = [&](json delta, json finish) {
    json c = base;
    c["choices"] = json::array({{{"index", 0},
                                 {"delta", std::move(delta)},
                                 {"logprobs", nullptr},
                                 {"finish_reason", finish}}});
    if (include_usage) c["usage"] = nullptr;
    if (t.noise) c["obfuscation"] = "pad";
    return "data: " + c.dump() + "\n\n";
  };
  ev.push_back(chunk({{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr));
  if (t.noise) {
    ev.push_back(": keep-alive\n\n");
    json empty = base;
    empty["choices"] = json::array();
    ev.push_back("data: " + empty.dump() + "\r\n\r\n");
  }
  for (const auto& c : r.text_chunks)
    ev.push_back(chunk({{"content", c}}, nullptr));
  // Fragments of parallel calls are interleaved by index, as servers do.
  std::vector<std::vector<std::string>> pieces;
  for (const auto& c : r.calls)
    pieces.push_back(split_args(c.args));
  for (size_t k = 0; k < r.calls.size(); ++k) {
    ev.push_back(
        chunk({{"tool_calls",
                json::array({{{"index", k},
                              {"id", r.calls[k].id},
                              {"type", "function"},
                              {"function", {{"name", r.calls[k].name}, {"arguments", ""}}}}})}},
              nullptr));
  }
  for (size_t p = 1; p < 3; ++p) {
    for (size_t k = 0; k < r.calls.size(); ++k) {
      if (p >= pieces[k].size()) continue;
      ev.push_back(
          chunk({{"tool_calls",
                  json::array({{{"index", k}, {"function", {{"arguments", pieces[k][p]}}}}})}},
                nullptr));
    }
  }
  std::string stop = !t.stop_reason.empty() ? t.stop_reason
                     : r.calls.empty()      ? "stop"
                                            : "tool_calls";
  ev.push_back(chunk(json::object(), stop));
  if (include_usage) {
    json u = base;
    u["choices"] = json::array();
    u["usage"] = {{"prompt_tokens", t.input_tokens},
                  {"completion_tokens", t.output_tokens},
                  {"total_tokens", t.input_tokens + t.output_tokens}};
    ev.push_back("data: " + u.dump() + "\n\n");
  }
  ev.push_back("data: [DONE]\n\n");
  return ev;
}

std::string whole_response(const std::string& wire, const FakeTurn& t, const Resolved& r,
                           size_t turn, const std::string& model) {
  if (wire == "openai") {
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
    std::string stop = !t.stop_reason.empty() ? t.stop_reason
                       : r.calls.empty()      ? "stop"
                                              : "tool_calls";
    return json{
        {"id", "chatcmpl-fake-" + std::to_string(turn)},
        {"object", "chat.completion"},
        {"created", 1767225600},
        {"model", model},
        {"choices",
         json::array(
             {{{"index", 0}, {"message", msg}, {"logprobs", nullptr}, {"finish_reason", stop}}})},
        {"usage",
         {{"prompt_tokens", t.input_tokens},
          {"completion_tokens", t.output_tokens},
          {"total_tokens", t.input_tokens + t.output_tokens}}}}
        .dump();
  }
  json content = json::array();
  if (!r.text.empty()) content.push_back({{"type", "text"}, {"text", r.text}});
  for (const auto& c : r.calls) {
    json input = json::parse(c.args, nullptr, false);
    // Anthropic's whole responses always carry an object; a non-JSON script argument becomes a
    // string input so the client still sees arguments it must reject.
    content.push_back({{"type", "tool_use"},
                       {"id", c.id},
                       {"name", c.name},
                       {"input", input.is_discarded() ? json(c.args) : input}});
  }
  std::string stop = !t.stop_reason.empty() ? t.stop_reason
                     : r.calls.empty()      ? "end_turn"
                                            : "tool_use";
  return json{{"id", "msg_fake_" + std::to_string(turn)},
              {"type", "message"},
              {"role", "assistant"},
              {"model", model},
              {"content", content},
              {"stop_reason", stop},
              {"stop_sequence", nullptr},
              {"usage",
               {{"input_tokens", t.input_tokens},
                {"cache_creation_input_tokens", 0},
                {"cache_read_input_tokens", 0},
                {"output_tokens", t.output_tokens}}}}
      .dump();
}

}  // namespace

struct FakeServer::Impl : std::enable_shared_from_this<FakeServer::Impl> {
  explicit Impl(FakeScript s) : script(std::move(s)), acceptor(ioc) {}

  FakeScript script;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  mutable std::mutex mu;
  std::map<std::string, int> attempts;  // sha256 of the request body -> attempts so far
  std::vector<Seen> seen;
  size_t answered = 0;  // requests given a scripted turn without an injected fault

  asio::awaitable<void> accept_loop() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket sock =
          co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec == asio::error::operation_aborted) co_return;
      if (ec) continue;  // e.g. EMFILE: keep serving the connections we have
      asio::co_spawn(ioc, serve(std::move(sock)), asio::detached);
    }
  }

  asio::awaitable<void> write(tcp::socket& sock, std::string data) {
    if (script.chunk_bytes == 0) {
      co_await asio::async_write(sock, asio::buffer(data), asio::use_awaitable);
      co_return;
    }
    for (size_t off = 0; off < data.size(); off += script.chunk_bytes) {
      co_await asio::async_write(
          sock, asio::buffer(data.data() + off, std::min(script.chunk_bytes, data.size() - off)),
          asio::use_awaitable);
    }
  }

  asio::awaitable<void> sleep(double seconds) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(std::chrono::microseconds(static_cast<long>(seconds * 1e6)));
    co_await t.async_wait(asio::use_awaitable);
  }

  // What to send for one request, computed without suspending: the coroutine that sends it
  // then only sleeps and writes.
  struct Plan {
    std::vector<std::string> writes;
    size_t stall_before = SIZE_MAX;  // sleep stall_s before this write
    double stall_s = 0;
    bool paced = false;  // sleep pace_ms between SSE events
  };

  static Plan whole(int status, const std::string& body, const std::vector<std::string>& extra) {
    std::string head =
        "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n";
    for (const auto& h : extra)
      head += h + "\r\n";
    return Plan{{head + "\r\n" + body}};
  }

  asio::awaitable<void> serve(tcp::socket sock) {
    try {
      sock.set_option(tcp::no_delay(true));
      boost::beast::flat_buffer buf;
      http::request_parser<http::string_body> parser;
      parser.body_limit(64u << 20);
      co_await http::async_read(sock, buf, parser, asio::use_awaitable);
      Plan p = plan(parser.get());
      // Paced events follow this response's own clock: event k is due pace_ms after event
      // k-1 was due, not after it was written, so a late wake-up of the server does not
      // shift (and bunch up) every later event of every response it delayed. A late event
      // goes out at once and skips the slots it missed rather than catching up in a burst.
      asio::steady_timer pacer(sock.get_executor());
      const auto pace = std::chrono::microseconds(static_cast<long>(script.pace_ms * 1000.0));
      auto due = std::chrono::steady_clock::now();
      for (size_t i = 0; i < p.writes.size(); ++i) {
        if (i == p.stall_before) {
          co_await sleep(p.stall_s);
          due = std::chrono::steady_clock::now();
        }
        if (p.paced && i > 1) {
          due += pace;
          auto now = std::chrono::steady_clock::now();
          if (pace.count() > 0 && due < now) due += (now - due) / pace * pace;
          pacer.expires_at(due);
          co_await pacer.async_wait(asio::use_awaitable);
        }
        co_await write(sock, stamp_now(std::move(p.writes[i])));
      }
      boost::system::error_code ec;
      sock.shutdown(tcp::socket::shutdown_both, ec);
    } catch (const std::exception&) {
      // The client went away or sent garbage; nothing to answer.
    }
  }

  Plan plan(const http::request<http::string_body>& req) {
    std::string target(req.target());
    std::string wire = target == "/v1/messages"           ? "anthropic"
                       : target == "/v1/chat/completions" ? "openai"
                                                          : "unknown";
    Seen s;
    s.wire = wire;
    for (const auto& f : req)
      s.headers[lower(std::string(f.name_string()))] = std::string(f.value());
    s.body = req.body();
    std::string rid = wire == "openai" ? "x-request-id: req_fake" : "request-id: req_fake";
    if (wire == "unknown") {
      std::lock_guard l(mu);
      seen.push_back(s);
      return whole(404, error_body("anthropic", "not_found_error", "no route " + target), {});
    }
    json body = json::parse(req.body(), nullptr, false);
    if (body.is_discarded() || !body.is_object() || !body.contains("messages") ||
        !body["messages"].is_array()) {
      std::lock_guard l(mu);
      seen.push_back(s);
      return whole(400,
                   error_body(wire, "invalid_request_error",
                              "request body is not JSON with a messages array"),
                   {rid});
    }
    size_t turn = 0;
    for (const auto& m : body["messages"]) {
      if (m.value("role", "") == "assistant") ++turn;
    }
    s.turn = turn;
    {
      std::lock_guard l(mu);
      s.attempt = attempts[sha256_hex(req.body())]++;
      seen.push_back(s);
    }
    if (turn >= script.turns.size()) {
      return whole(400,
                   error_body(wire, "invalid_request_error",
                              "fake-llm script has " + std::to_string(script.turns.size()) +
                                  " turns; this request asks for turn " + std::to_string(turn + 1)),
                   {rid});
    }
    const FakeTurn& t = script.turns[turn];
    const FakeFault* fault =
        s.attempt < static_cast<int>(t.faults.size()) ? &t.faults[s.attempt] : nullptr;

    Resolved r;
    try {
      Results results = collect_results(wire, body["messages"]);
      for (const auto& c : t.text_chunks) {
        r.text += interpolate(c, results);
        if (!t.split_text) r.text_chunks.push_back(interpolate(c, results));
      }
      if (t.split_text) r.text_chunks = utf8_pieces(r.text, 24);
      for (const auto& c : t.tool_calls) {
        r.calls.push_back({c.id, c.name,
                           c.arguments_raw ? interpolate(*c.arguments_raw, results)
                                           : interpolate_json(c.input, results).dump()});
      }
    } catch (const Error& e) {
      return whole(
          400,
          error_body(wire, "invalid_request_error", std::string("fake-llm script: ") + e.what()),
          {rid});
    }

    if (!fault) {
      std::lock_guard l(mu);
      ++answered;
    }
    if (fault && fault->kind == "status") {
      std::vector<std::string> extra = {rid};
      if (fault->retry_after_s) {
        std::ostringstream o;
        o << *fault->retry_after_s;
        extra.push_back("retry-after: " + o.str());
      }
      std::string type =
          fault->error_type.empty() ? default_error_type(wire, fault->status) : fault->error_type;
      return whole(fault->status,
                   error_body(wire, type, "injected " + std::to_string(fault->status)), extra);
    }
    if (!body.value("stream", false)) {
      if (fault && fault->kind == "error_event") {
        return whole(529, error_body(wire, default_error_type(wire, 529), "Overloaded"), {rid});
      }
      std::string text = whole_response(wire, t, r, turn, script.model);
      if (fault && fault->kind == "malformed_json") text.resize(text.size() / 2);
      Plan p = whole(200, text, {rid});
      if (fault && fault->kind == "truncate") {
        // The head promises the whole body; only half is sent before the close.
        std::string& w = p.writes[0];
        w.resize(w.size() - text.size() / 2);
      }
      if (fault && fault->kind == "stall") {
        p.stall_before = 0;
        p.stall_s = fault->seconds;
      }
      return p;
    }

    bool include_usage = body.contains("stream_options") && body["stream_options"].is_object() &&
                         body["stream_options"].value("include_usage", false);
    std::vector<std::string> events = wire == "openai"
                                          ? openai_events(t, r, turn, script.model, include_usage)
                                          : anthropic_events(t, r, turn, script.model);
    Plan p;
    p.paced = script.pace_ms > 0;
    p.writes.push_back(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: "
        "no-cache\r\n"
        "Connection: close\r\n" +
        rid + "\r\n\r\n");
    for (size_t i = 0; i < events.size(); ++i) {
      if (fault && static_cast<int>(i) == fault->after_events) {
        if (fault->kind == "truncate") return p;
        if (fault->kind == "stall") {
          p.stall_before = p.writes.size();
          p.stall_s = fault->seconds;
        }
        if (fault->kind == "error_event") {
          std::string type = fault->error_type.empty() ? "overloaded_error" : fault->error_type;
          p.writes.push_back(
              wire == "openai"
                  ? "data: " +
                        json{{"error",
                              {{"message", "Overloaded"},
                               {"type", type},
                               {"param", nullptr},
                               {"code", nullptr}}}}
                            .dump() +
                        "\n\n"
                  : sse("error", {{"type", "error"},
                                  {"error", {{"type", type}, {"message", "Overloaded"}}}}));
          return p;
        }
        if (fault->kind == "malformed_json") {
          p.writes.push_back(
              wire == "openai"
                  ? "data: {\"id\":\"chatcmpl-broken\",\n\n"
                  : "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n");
        }
      }
      p.writes.push_back(std::move(events[i]));
    }
    return p;
  }
};

FakeServer::FakeServer(FakeScript script, const std::string& listen, int threads)
    : impl_(std::make_shared<Impl>(std::move(script))) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos)
    throw Error("fake-llm --listen " + quote(listen) + ": expected HOST:PORT");
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(listen.substr(0, colon), ec);
  if (ec || !addr.is_loopback())
    throw Error("fake-llm --listen " + quote(listen) + ": only a loopback address is allowed");
  std::string port_text = listen.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port_text) > 65535) {
    throw Error("fake-llm --listen " + quote(listen) +
                ": the port must be a number from 0 to 65535");
  }
  unsigned long port = std::stoul(port_text);
  tcp::endpoint ep(addr, static_cast<unsigned short>(port));
  auto& a = impl_->acceptor;
  a.open(ep.protocol());
  a.set_option(tcp::acceptor::reuse_address(true));
  a.bind(ep, ec);
  if (ec) throw Error("bind(" + listen + "): " + ec.message());
  a.listen(asio::socket_base::max_listen_connections);
  asio::co_spawn(impl_->ioc, impl_->accept_loop(), asio::detached);
  for (int i = 0; i < std::max(1, threads); ++i) {
    impl_->threads.emplace_back([impl = impl_] { impl->ioc.run(); });
  }
}

FakeServer::~FakeServer() {
  impl_->ioc.stop();
  for (auto& t : impl_->threads)
    t.join();
}

std::string FakeServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port());
}
unsigned short FakeServer::port() const {
  return impl_->acceptor.local_endpoint().port();
}

size_t FakeServer::answered() const {
  std::lock_guard l(impl_->mu);
  return impl_->answered;
}

std::vector<FakeServer::Seen> FakeServer::requests() const {
  std::lock_guard l(impl_->mu);
  return impl_->seen;
}

}  // namespace kd::agents
