#include "agents/fake/server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <thread>

#include "agents/asio.h"
#include "agents/fake/placeholders.h"
#include "agents/fake/wire.h"
#include "common/errors.h"
#include "common/sha256.h"
#include "common/text.h"

namespace kd::agents {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using json = nlohmann::json;
using Request = http::request<http::string_body>;

namespace {

constexpr size_t kMaxRequestBody = 64u << 20;

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

// What to send for one request, computed without suspending: the coroutine that sends it
// then only sleeps and writes.
struct Plan {
  std::vector<std::string> writes;
  size_t stall_before = SIZE_MAX;  // sleep stall_s before this write
  double stall_s = 0;
  bool paced = false;  // sleep pace_ms between SSE events
};

Plan whole(int status, const std::string& body, const std::vector<std::string>& extra) {
  std::string head =
      "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n";
  for (const auto& h : extra)
    head += h + "\r\n";
  return Plan{{head + "\r\n" + body}};
}

// A request the script cannot answer: the wire's invalid_request_error naming why.
Plan refusal(const fake::Wire& wire, const std::string& why) {
  return whole(400, wire.error_body("invalid_request_error", why), {wire.request_id_header()});
}

// Which wire and which conversation a request belongs to.
struct Route {
  const fake::Wire* wire = nullptr;  // nullptr: a path no wire serves
  json body;                         // null unless JSON with a messages array
  size_t turn = 0;                   // assistant messages the conversation already holds
  int attempt = 0;                   // earlier arrivals of this exact body
};

// The scripted turn a routed request gets and the fault of its attempt, if any.
struct Answer {
  fake::Reply reply;
  const FakeFault* fault = nullptr;
};

Plan status_fault(const fake::Wire& wire, const FakeFault& f) {
  std::vector<std::string> extra = {wire.request_id_header()};
  if (f.retry_after_s) {
    std::ostringstream o;
    o << *f.retry_after_s;
    extra.push_back("retry-after: " + o.str());
  }
  std::string type = f.error_type.empty() ? wire.default_error_type(f.status) : f.error_type;
  return whole(f.status, wire.error_body(type, "injected " + std::to_string(f.status)), extra);
}

// A whole (not streamed) response; a fault meant for a stream breaks it the nearest way.
Plan whole_reply(const fake::Wire& wire, const Answer& a, std::vector<std::string> extra) {
  const FakeFault* f = a.fault;
  extra.push_back(wire.request_id_header());
  if (f && f->kind == FaultKind::ErrorEvent) {
    return whole(529, wire.error_body(wire.default_error_type(529), "Overloaded"), extra);
  }
  std::string body = wire.whole_body(a.reply);
  if (f && f->kind == FaultKind::MalformedJson) body.resize(body.size() / 2);
  Plan p = whole(200, body, extra);
  if (f && f->kind == FaultKind::Truncate) {
    // The head promises the whole body; only half is sent before the close.
    p.writes[0].resize(p.writes[0].size() - body.size() / 2);
  }
  if (f && f->kind == FaultKind::Stall) {
    p.stall_before = 0;
    p.stall_s = f->seconds;
  }
  return p;
}

// A fault reaching its event of a stream; false when the stream ends there.
bool inject(const FakeFault& f, const fake::Wire& wire, Plan& p) {
  switch (f.kind) {
    case FaultKind::Truncate:
      return false;
    case FaultKind::ErrorEvent:
      p.writes.push_back(
          wire.error_event(f.error_type.empty() ? "overloaded_error" : f.error_type));
      return false;
    case FaultKind::Stall:
      p.stall_before = p.writes.size();
      p.stall_s = f.seconds;
      return true;
    case FaultKind::MalformedJson:
      p.writes.push_back(wire.malformed_event());
      return true;
    case FaultKind::Status:  // answered before any stream
      return true;
  }
  return true;
}

Plan streamed(const fake::Wire& wire, const Answer& a, const json& request, bool paced,
              const std::vector<std::string>& extra) {
  std::vector<std::string> events = wire.events(a.reply, request);
  Plan p;
  p.paced = paced;
  std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: "
      "no-cache\r\nConnection: close\r\n";
  for (const auto& h : extra)
    head += h + "\r\n";
  p.writes.push_back(head + wire.request_id_header() + "\r\n\r\n");
  for (size_t i = 0; i < events.size(); ++i) {
    if (a.fault && static_cast<int>(i) == a.fault->after_events && !inject(*a.fault, wire, p))
      return p;
    p.writes.push_back(std::move(events[i]));
  }
  return p;
}

// The client went away (it timed out, or gave up on a stalled stream): nothing to report.
bool peer_left(const boost::system::error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == http::error::end_of_stream;
}

void report_failure(const tcp::endpoint& peer, const char* what) {
  std::fprintf(stderr, "fake-llm: connection from %s:%u: %s\n", peer.address().to_string().c_str(),
               peer.port(), what);
}

// "--listen HOST:PORT" as an endpoint; only loopback addresses are allowed.
tcp::endpoint loopback_endpoint(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos)
    throw Error("fake-llm --listen " + quote(listen) + ": expected HOST:PORT");
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(listen.substr(0, colon), ec);
  if (ec || !addr.is_loopback())
    throw Error("fake-llm --listen " + quote(listen) + ": only a loopback address is allowed");
  std::string port = listen.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535) {
    throw Error("fake-llm --listen " + quote(listen) +
                ": the port must be a number from 0 to 65535");
  }
  return tcp::endpoint(addr, static_cast<unsigned short>(std::stoul(port)));
}

}  // namespace

struct FakeServer::Impl {
  Impl(FakeScript s, std::chrono::milliseconds read_deadline)
      : script(std::move(s)), read_deadline(read_deadline), acceptor(ioc) {}

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(tcp::socket sock);
  asio::awaitable<void> send(tcp::socket& sock, Plan p);
  asio::awaitable<void> write(tcp::socket& sock, std::string data);
  asio::awaitable<void> sleep(double seconds);
  Plan plan(const Request& req);
  Route route(const Request& req);
  Answer resolve_turn(const Route& r) const;
  std::optional<Plan> admit(const Route& r, std::vector<std::string>& extra);
  std::optional<fake::Billed> bill(const Route& r, const Answer& a);
  fake::Clock::time_point now() const { return fake::Clock::now() + clock_offset; }

  FakeScript script;
  // A client has this long to send its whole request; one that sends nothing, or stops
  // halfway, is dropped (and logged) instead of holding its connection for ever.
  std::chrono::milliseconds read_deadline;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  mutable std::mutex mu;
  std::map<std::string, int> attempts;  // sha256 of the request body -> attempts so far
  std::vector<Seen> seen;
  size_t answered = 0;  // requests given a scripted turn without an injected fault
  // Emulation state, guarded by mu.
  fake::PromptCache cache;
  std::optional<fake::RateBuckets> buckets;
  fake::Clock::duration clock_offset{};
  Billing billing;
};

asio::awaitable<void> FakeServer::Impl::accept_loop() {
  for (;;) {
    boost::system::error_code ec;
    tcp::socket sock =
        co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) continue;  // e.g. EMFILE: keep serving the connections we have
    asio::co_spawn(ioc, serve(std::move(sock)), asio::detached);
  }
}

// One connection, one request: read it within the deadline, plan the answer, send it. A
// failure other than the client leaving is reported on stderr: a script or client bug shows.
asio::awaitable<void> FakeServer::Impl::serve(tcp::socket sock) {
  boost::system::error_code ignored;
  const tcp::endpoint peer = sock.remote_endpoint(ignored);
  try {
    sock.set_option(tcp::no_delay(true));
    beast::tcp_stream stream(std::move(sock));
    beast::flat_buffer buf;
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxRequestBody);
    stream.expires_after(read_deadline);
    co_await http::async_read(stream, buf, parser, asio::use_awaitable);
    stream.expires_never();  // a scripted stall must not be cut short
    co_await send(stream.socket(), plan(parser.get()));
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  } catch (const boost::system::system_error& e) {
    if (!peer_left(e.code())) report_failure(peer, e.what());
  } catch (const std::exception& e) {
    report_failure(peer, e.what());
  }
}

asio::awaitable<void> FakeServer::Impl::send(tcp::socket& sock, Plan p) {
  // Paced events follow this response's own clock: event k is due pace_ms after event k-1 was
  // due, not after it was written, so a late wake-up of the server does not shift (and bunch
  // up) every later event of every response it delayed. A late event goes out at once and
  // skips the slots it missed rather than catching up in a burst.
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
    co_await write(sock, fake::stamp_now(std::move(p.writes[i])));
  }
}

asio::awaitable<void> FakeServer::Impl::write(tcp::socket& sock, std::string data) {
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

asio::awaitable<void> FakeServer::Impl::sleep(double seconds) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(std::chrono::microseconds(static_cast<long>(seconds * 1e6)));
  co_await t.async_wait(asio::use_awaitable);
}

Plan FakeServer::Impl::plan(const Request& req) {
  Route r = route(req);
  if (!r.wire) {
    return whole(404,
                 fake::anthropic_wire().error_body("not_found_error",
                                                   "no route " + std::string(req.target())),
                 {});
  }
  if (r.body.is_null()) return refusal(*r.wire, "request body is not JSON with a messages array");
  std::vector<std::string> extra;
  if (auto refused = admit(r, extra)) return *refused;
  std::optional<Answer> a;
  try {
    a.emplace(resolve_turn(r));
  } catch (const Error& e) {
    return refusal(*r.wire, e.what());
  }
  if (a->fault && a->fault->kind == FaultKind::Status) return status_fault(*r.wire, *a->fault);
  try {
    a->reply.billed = bill(r, *a);
  } catch (const Error& e) {
    return refusal(*r.wire, e.what());
  }
  if (!a->fault) {
    std::lock_guard l(mu);
    ++answered;
  }
  if (!r.body.value("stream", false)) return whole_reply(*r.wire, *a, extra);
  return streamed(*r.wire, *a, r.body, script.pace_ms > 0, extra);
}

// The rate-limit buckets and the context window: a refusal (429, 400) or nothing, with the
// rate-limit headers every answer carries in `extra`.
std::optional<Plan> FakeServer::Impl::admit(const Route& r, std::vector<std::string>& extra) {
  const FakeEmulation& em = script.emulate;
  const bool anthropic = r.wire->name() == "anthropic";
  std::lock_guard l(mu);
  const auto t = now();
  long tokens = 0;
  if (em.counts_tokens()) {
    FakeEmulation count_only = em;
    count_only.cache = false;  // counting leaves the cache as it is
    tokens =
        (anthropic ? cache.anthropic(r.body, t, count_only) : cache.openai(r.body, t, count_only))
            .billed.input_tokens;
  }
  if (buckets) {
    fake::RateBuckets::Verdict v =
        buckets->take(r.wire->name(), tokens, t, std::chrono::system_clock::now() + clock_offset);
    extra = v.headers;
    if (v.limited) {
      ++billing.rate_limited;
      billing.rate_limited_at_s.push_back(
          std::chrono::duration<double>(fake::Clock::now().time_since_epoch()).count());
      std::vector<std::string> h = extra;
      h.push_back(r.wire->request_id_header());
      return whole(
          429,
          r.wire->error_body(r.wire->default_error_type(429),
                             "rate limited: retry after " + std::to_string(v.retry_after_s) + " s"),
          h);
    }
  }
  if (em.context_window > 0 && tokens > em.context_window) {
    ++billing.overflows;
    std::vector<std::string> h = extra;
    h.push_back(r.wire->request_id_header());
    const std::string n = std::to_string(tokens), w = std::to_string(em.context_window);
    return whole(
        400,
        anthropic ? r.wire->error_body("invalid_request_error",
                                       "prompt is too long: " + n + " tokens > " + w + " maximum")
                  : r.wire->error_body("context_length_exceeded",
                                       "This model's maximum context length is " + w +
                                           " tokens. However, your messages resulted in " + n +
                                           " tokens."),
        h);
  }
  return std::nullopt;
}

// The prompt as billed (reads and writes of the cache) when emulating; the totals of answered
// turns. Throws kd::Error for markers the provider would refuse.
std::optional<fake::Billed> FakeServer::Impl::bill(const Route& r, const Answer& a) {
  const FakeEmulation& em = script.emulate;
  std::lock_guard l(mu);
  std::optional<fake::Billed> b;
  const bool anthropic = r.wire->name() == "anthropic";
  // Markers are checked whatever is emulated: a real server refuses bad ones.
  fake::PromptCache::Outcome o =
      anthropic ? cache.anthropic(r.body, now(), em) : cache.openai(r.body, now(), em);
  if (!o.error.empty()) throw Error(o.error);
  if (em.counts_tokens()) b = o.billed;
  if (!a.fault) {
    ++billing.requests;
    billing.input_tokens += b ? b->input_tokens : a.reply.turn.input_tokens;
    if (b) {
      billing.cache_read += b->cache_read;
      billing.cache_write_5m += b->cache_write_5m;
      billing.cache_write_1h += b->cache_write_1h;
    }
    billing.output_tokens += a.reply.turn.output_tokens;
  }
  return b;
}

// Records the request as seen, with its attempt when it is a conversation.
Route FakeServer::Impl::route(const Request& req) {
  Route r;
  beast::string_view target = req.target();
  r.wire = fake::wire_for_path(std::string_view(target.data(), target.size()));
  Seen s;
  s.wire = r.wire ? std::string(r.wire->name()) : "unknown";
  for (const auto& f : req)
    s.headers[lower(std::string(f.name_string()))] = std::string(f.value());
  s.body = req.body();
  json body = r.wire ? json::parse(req.body(), nullptr, false) : json();
  if (body.is_object() && body.contains("messages") && body["messages"].is_array()) {
    for (const auto& m : body["messages"])
      if (m.value("role", "") == "assistant") ++r.turn;
    r.body = std::move(body);
  }
  s.turn = r.turn;
  std::lock_guard l(mu);
  if (!r.body.is_null()) r.attempt = attempts[sha256_hex(req.body())]++;
  s.attempt = r.attempt;
  seen.push_back(std::move(s));
  return r;
}

// The scripted turn the conversation asks for, the fault of this attempt, and the reply with
// its placeholders filled from the request. Throws kd::Error naming what the script cannot
// answer.
Answer FakeServer::Impl::resolve_turn(const Route& r) const {
  if (r.turn >= script.turns.size()) {
    throw Error("fake-llm script has " + std::to_string(script.turns.size()) +
                " turns; this request asks for turn " + std::to_string(r.turn + 1));
  }
  const FakeTurn& t = script.turns[r.turn];
  Answer a{fake::Reply{t, r.turn, script.model, {}, {}, {}, {}},
           r.attempt < static_cast<int>(t.faults.size()) ? &t.faults[r.attempt] : nullptr};
  fake::Reply& reply = a.reply;
  try {
    fake::RequestResults results = r.wire->results(r.body.at("messages"));
    for (const auto& c : t.text_chunks) {
      std::string piece = fake::interpolate(c, results);
      reply.text += piece;
      if (!t.split_text) reply.text_chunks.push_back(std::move(piece));
    }
    if (t.split_text) reply.text_chunks = utf8_pieces(reply.text, 24);
    for (const auto& c : t.tool_calls) {
      reply.calls.push_back({c.id, c.name,
                             c.arguments_raw ? fake::interpolate(*c.arguments_raw, results)
                                             : fake::interpolate_json(c.input, results).dump()});
    }
  } catch (const Error& e) {
    throw Error(std::string("fake-llm script: ") + e.what());
  }
  return a;
}

FakeServer::FakeServer(FakeScript script, const std::string& listen, int threads,
                       std::chrono::milliseconds read_deadline)
    : impl_(std::make_shared<Impl>(std::move(script), read_deadline)) {
  if (impl_->script.emulate.requests_per_s > 0 || impl_->script.emulate.input_tokens_per_s > 0)
    impl_->buckets.emplace(impl_->script.emulate);
  tcp::endpoint ep = loopback_endpoint(listen);
  boost::system::error_code ec;
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

FakeServer::Billing FakeServer::billing() const {
  std::lock_guard l(impl_->mu);
  return impl_->billing;
}

void FakeServer::advance_clock(std::chrono::milliseconds by) {
  std::lock_guard l(impl_->mu);
  impl_->clock_offset += by;
}

std::vector<FakeServer::Seen> FakeServer::requests() const {
  std::lock_guard l(impl_->mu);
  return impl_->seen;
}

}  // namespace kd::agents
