#include "agents/llm_client.h"

#include <curl/curl.h>

#include <cmath>
#include <cstdint>
#include <ctime>

namespace kd::agents {

namespace asio = boost::asio;
using json = nlohmann::json;

struct LlmClient::Attempt {
  std::optional<AssistantTurn> turn;
  // When no turn: what failed, whether it may be retried and after how long at least.
  std::string cause;
  std::string detail;
  bool retryable = false;
  std::optional<std::chrono::milliseconds> server_delay;
  // What the rate limiter learns from the answer.
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string error_body;
};

std::chrono::milliseconds backoff_delay(const RetryPolicy& p, int n, double u01) {
  double ms = std::min(static_cast<double>(p.base.count()) * std::pow(2.0, n),
                       static_cast<double>(p.cap.count()));
  return std::chrono::milliseconds(static_cast<long>(ms * (1.0 - 0.25 * u01)));
}

std::optional<std::chrono::milliseconds> retry_after(const std::map<std::string, std::string>& h) {
  if (auto it = h.find("retry-after-ms"); it != h.end()) {
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (end != it->second.c_str() && v >= 0) return std::chrono::milliseconds(static_cast<long>(v));
  }
  if (auto it = h.find("retry-after"); it != h.end()) {
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (end != it->second.c_str() && *end == '\0' && v >= 0) {
      return std::chrono::milliseconds(static_cast<long>(v * 1000));
    }
    time_t when = curl_getdate(it->second.c_str(), nullptr);  // HTTP-date form
    if (when >= 0) {
      long s = static_cast<long>(when - std::time(nullptr));
      return std::chrono::milliseconds(std::max(0L, s) * 1000);
    }
  }
  return std::nullopt;
}

namespace {

// A session waits out at most this many 429s of a shared limiter per turn before the usual
// attempts count them: a limit that never lifts still ends the session.
constexpr int kMaxRateLimitedWaits = 50;

// Seeds the retry jitter. Opening a random_device costs more than a whole streamed event, and
// a thousand sessions each make a client: one device per thread serves them all.
std::uint64_t jitter_seed() {
  thread_local std::random_device device;
  return (std::uint64_t{device()} << 32) | device();
}

}  // namespace

LlmClient::LlmClient(HttpClient& http, Endpoint endpoint, RetryPolicy retry, Timeouts timeouts)
    : http_(http),
      endpoint_(std::move(endpoint)),
      retry_(retry),
      timeouts_(timeouts),
      provider_(endpoint_.wire == "openai" ? make_openai_provider() : make_anthropic_provider()),
      rng_(jitter_seed()) {
  while (!endpoint_.base_url.empty() && endpoint_.base_url.back() == '/')
    endpoint_.base_url.pop_back();
  // An OpenAI-compatible base URL given with its /v1 suffix still gets one /v1.
  if (endpoint_.base_url.size() >= 3 && endpoint_.base_url.ends_with("/v1")) {
    endpoint_.base_url.resize(endpoint_.base_url.size() - 3);
  }
}

asio::awaitable<LlmClient::Attempt> LlmClient::attempt(const std::string& body,
                                                       const CallHooks& hooks) {
  HttpRequest req;
  req.url = endpoint_.base_url + provider_->path();
  req.headers = provider_->headers(endpoint_.key);
  req.body = body;
  req.connect_timeout = timeouts_.connect;
  req.first_byte_timeout = timeouts_.first_byte;
  req.idle_timeout = timeouts_.idle;

  std::unique_ptr<StreamAssembler> asm_;
  std::unique_ptr<SseParser> parser;
  size_t events = 0;
  if (endpoint_.stream) {
    asm_ = provider_->stream_assembler();
    asm_->on_text = hooks.on_text;
    parser = std::make_unique<SseParser>([&asm_, &events](const SseEvent& ev) {
      ++events;
      asm_->on_event(ev);
    });
  }
  HttpResponse resp;
  if (endpoint_.stream) {
    resp = co_await http_.perform(std::move(req), [&](std::string_view bytes) {
      // Each complete event (pings included) is progress for the idle deadline.
      size_t before = events;
      parser->feed(bytes);
      return events != before;
    });
  } else {
    resp = co_await http_.perform(std::move(req));
  }

  Attempt a;
  a.status = static_cast<int>(resp.status);
  a.headers = resp.headers;
  if (!resp.error_kind.empty() && resp.status == 0) {
    a.cause = resp.error_kind;
    a.detail = resp.error;
    a.retryable = true;
    co_return a;
  }
  if (resp.status < 200 || resp.status >= 300) {
    ErrorBody eb = parse_error_body(resp.body);
    a.error_body = resp.body.substr(0, 4096);
    a.cause = "http_" + std::to_string(resp.status) + (eb.type.empty() ? "" : ":" + eb.type);
    a.detail = eb.message.empty() ? resp.error : eb.message;
    long s = resp.status;
    a.retryable = s == 408 || s == 409 || s == 429 || s >= 500;
    a.server_delay = retry_after(resp.headers);
    if (s == 429 && eb.type == "insufficient_quota") a.retryable = false;
    // Anthropic sends a 429 without retry-after when a spend cap is exhausted: not transient.
    if (s == 429 && endpoint_.wire == "anthropic" && !a.server_delay) a.retryable = false;
    if (auto it = resp.headers.find("x-should-retry"); it != resp.headers.end()) {
      if (it->second == "true") a.retryable = true;
      if (it->second == "false") a.retryable = false;
    }
    co_return a;
  }
  if (!endpoint_.stream) {
    if (!resp.error_kind.empty()) {
      a.cause = resp.error_kind;
      a.detail = resp.error;
      a.retryable = true;
      co_return a;
    }
    json j = json::parse(resp.body, nullptr, false);
    if (j.is_discarded()) {
      a.cause = "malformed_response";
      a.detail = "response body is not JSON: " + resp.body.substr(0, 120);
      a.retryable = true;
      co_return a;
    }
    try {
      a.turn = provider_->parse_response(j);
      a.turn->request_id = resp.headers.count("request-id")     ? resp.headers["request-id"]
                           : resp.headers.count("x-request-id") ? resp.headers["x-request-id"]
                                                                : a.turn->request_id;
    } catch (const ProtocolError& e) {
      a.cause = "malformed_response";
      a.detail = e.what();
      a.retryable = true;
    }
    co_return a;
  }
  parser->finish();
  if (asm_->failure()) {
    const StreamFailure& f = *asm_->failure();
    a.cause = f.kind == "error_event" ? "error_event" + (f.type.empty() ? "" : ":" + f.type)
                                      : "malformed_stream";
    a.detail = f.message;
    a.retryable = true;
    co_return a;
  }
  if (!asm_->done()) {
    a.cause = resp.error_kind.empty() ? "truncated_stream" : resp.error_kind;
    a.detail = resp.error.empty() ? "the stream ended before its terminator" : resp.error;
    a.retryable = true;
    co_return a;
  }
  a.turn = asm_->take();
  if (auto it = resp.headers.find("request-id"); it != resp.headers.end())
    a.turn->request_id = it->second;
  if (auto it = resp.headers.find("x-request-id"); it != resp.headers.end())
    a.turn->request_id = it->second;
  co_return a;
}

// One attempt in its turn of the shared rate limiter, which then learns what the provider said.
asio::awaitable<LlmClient::Attempt> LlmClient::limited_attempt(const std::string& body,
                                                               const CallHooks& hooks) {
  RateLimiter* limiter = endpoint_.limiter.get();
  if (!limiter) co_return co_await attempt(body, hooks);
  const long estimate = static_cast<long>(body.size() / 4 + 1);
  if (!co_await limiter->acquire(estimate)) {
    throw ProviderGaveUp(contract::EndReason::provider("spend_limit_reached"),
                         "another session of this process met the provider's spend limit");
  }
  Attempt a = co_await attempt(body, hooks);
  RateLimiter::Answer ans;
  ans.status = a.status;
  ans.headers = &a.headers;
  ans.body = a.error_body;
  ans.estimated_tokens = estimate;
  if (a.turn && a.turn->usage.reported) {
    // Anthropic does not count cache reads against the input limit; OpenAI counts the prompt.
    long read = endpoint_.wire == "anthropic" ? a.turn->usage.cache_read_tokens.value_or(0) : 0;
    ans.counted_tokens = a.turn->usage.input_tokens - read;
  }
  limiter->release(ans);
  co_return a;
}

asio::awaitable<AssistantTurn> LlmClient::complete(const Conversation& conv,
                                                   const std::vector<ToolSpec>& tools,
                                                   const CallHooks& hooks,
                                                   std::chrono::steady_clock::time_point deadline) {
  json body = provider_->request_body(conv, tools, endpoint_.model, endpoint_.max_tokens,
                                      endpoint_.stream, endpoint_.cache);
  std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  int rate_limited = 0;  // 429s the shared limiter waited out: they use no attempt
  for (int n = 0, sent = 1;; ++n, ++sent) {
    if (hooks.on_request) hooks.on_request(sent, body);
    Attempt a = co_await limited_attempt(text, hooks);
    if (a.turn) co_return std::move(*a.turn);
    if (!a.retryable) throw ProviderGaveUp(contract::EndReason::provider(a.cause), a.detail);
    if (a.status == 429 && endpoint_.limiter && rate_limited < kMaxRateLimitedWaits) {
      ++rate_limited;
      --n;
      if (hooks.on_retry) hooks.on_retry(sent, a.cause + ": " + a.detail, 0);
      continue;  // the limiter holds the next attempt back as long as the provider asked
    }
    if (n + 1 >= retry_.max_attempts) {
      throw ProviderGaveUp(contract::EndReason::provider("retries_exhausted:" + a.cause),
                           std::to_string(n + 1) + " attempts; last: " + a.detail);
    }
    std::chrono::milliseconds delay = backoff_delay(retry_, n, u01(rng_));
    if (a.server_delay) {
      if (*a.server_delay > retry_.max_retry_after) {
        throw ProviderGaveUp(
            contract::EndReason::provider("retry_after_too_long:" + a.cause),
            "server asked to wait " + std::to_string(a.server_delay->count()) + " ms");
      }
      delay = std::max(delay, *a.server_delay);
    }
    if (std::chrono::steady_clock::now() + delay > deadline) {
      throw ProviderGaveUp(contract::EndReason::budget("wall_time"),
                           "no time left to retry after " + a.cause);
    }
    if (hooks.on_retry) hooks.on_retry(sent, a.cause + ": " + a.detail, delay.count() / 1000.0);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(delay);
    co_await timer.async_wait(asio::use_awaitable);
  }
}

}  // namespace kd::agents
