// One model endpoint and the single retry loop every request goes through.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>

#include "agents/asio.h"
#include "agents/http_client.h"
#include "agents/provider.h"
#include "agents/provider_failure.h"
#include "agents/rate_limiter.h"
#include "contract/end_reason.h"

namespace kd::agents {

struct RetryPolicy {
  int max_attempts = 6;                 // attempts per turn, first included
  std::chrono::milliseconds base{500};  // delay = min(base * 2^n, cap) * (1 - 0.25 U)
  std::chrono::milliseconds cap{8'000};
  std::chrono::milliseconds max_retry_after{60'000};  // a longer retry-after gives up
};

struct Timeouts {
  std::chrono::milliseconds connect{10'000};
  std::chrono::milliseconds first_byte{120'000};
  std::chrono::milliseconds idle{120'000};  // between SSE events (pings count)
};

// The session gives up on the provider; `reason` is the session's end reason
// (provider "http_401:authentication_error", provider "retries_exhausted:error_event", budget
// "wall_time" when no time is left to retry, ...).
class ProviderGaveUp : public std::runtime_error {
 public:
  ProviderGaveUp(contract::EndReason reason, const std::string& detail)
      : std::runtime_error(to_string(reason) + ": " + detail), reason_(std::move(reason)) {
    if (reason_.kind == contract::EndReason::Kind::Provider)
      failure_ = classify_provider_failure(reason_.detail, detail);
  }
  const contract::EndReason& reason() const { return reason_; }
  // What kind of failure it was; none when the session gave up for its own budget.
  const std::optional<ProviderFailure>& failure() const { return failure_; }

 private:
  contract::EndReason reason_;
  std::optional<ProviderFailure> failure_;
};

// Observers for the transcript: each attempt's request body, each retry's cause and delay.
struct CallHooks {
  std::function<void(int attempt, const nlohmann::json& body)> on_request;
  std::function<void(int attempt, const std::string& cause, double delay_s)> on_retry;
  std::function<void(std::string_view)> on_text;  // streamed assistant text
};

struct Endpoint {
  std::string wire;      // anthropic | openai
  std::string base_url;  // server root, without the provider path
  std::string key;       // empty for keyless servers
  std::string model;
  int max_tokens = 8192;
  bool stream = true;
  CacheOptions cache;                    // prompt caching asked of the provider
  std::shared_ptr<RateLimiter> limiter;  // shared by the process's sessions; null: none
};

class LlmClient {
 public:
  LlmClient(HttpClient& http, Endpoint endpoint, RetryPolicy retry = {}, Timeouts timeouts = {});

  // Sends the conversation and returns the next assistant turn, retrying transient failures
  // from the same conversation (a broken stream's partial output is discarded). Throws
  // ProviderGaveUp with a named reason; never retries past `deadline`.
  boost::asio::awaitable<AssistantTurn> complete(const Conversation& conv,
                                                 const std::vector<ToolSpec>& tools,
                                                 const CallHooks& hooks,
                                                 std::chrono::steady_clock::time_point deadline);

  const Endpoint& endpoint() const { return endpoint_; }
  const Provider& provider() const { return *provider_; }

 private:
  struct Attempt;
  boost::asio::awaitable<Attempt> attempt(const std::string& body, const CallHooks& hooks);
  boost::asio::awaitable<Attempt> limited_attempt(const std::string& body, const CallHooks& hooks);

  HttpClient& http_;
  Endpoint endpoint_;
  RetryPolicy retry_;
  Timeouts timeouts_;
  std::unique_ptr<Provider> provider_;
  std::mt19937_64 rng_;
};

// Delay before retry number `n` (0-based) given an optional server-requested delay.
std::chrono::milliseconds backoff_delay(const RetryPolicy& p, int n, double u01);

// Parses retry-after-ms / retry-after (seconds or HTTP-date) from lower-cased headers.
std::optional<std::chrono::milliseconds> retry_after(
    const std::map<std::string, std::string>& headers);

}  // namespace kd::agents
