// One rate limiter per provider and model, shared by every session of the process
// (docs/agents.md "Rate limits"): a request bucket and an input-token bucket clamped to the
// provider's rate-limit headers, a cap on requests in flight that 429s cut and successes
// restore slowly, retry-after honoured for everyone, and a spend-limit answer that stops every
// session sharing the limiter.
//
// Requests take their turn by debiting the buckets at once and sleeping until the debt is
// repaid (one wake-up per request, however many sessions wait); the first request waits alone,
// so a shared prefix is written once and read by the rest.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "agents/asio.h"

namespace kd::agents {

// A 429 that no waiting will cure: a spend cap (enforced_spend_limit_reached, OpenAI's
// insufficient_quota) or, on Anthropic, a 429 without retry-after; decided by the provider
// failure classification (agents/provider_failure.h).
bool is_spend_limit_answer(std::string_view wire, int status,
                           const std::map<std::string, std::string>& headers,
                           std::string_view body);

class RateLimiter {
 public:
  struct Options {
    int max_in_flight = 64;  // the ceiling the cap grows back to
    double cut_factor = 0.8;
    std::chrono::milliseconds cut_debounce{2'000};    // one cut per 429 episode
    std::chrono::milliseconds restore_after{5'000};   // quiet time before the cap grows again
    std::chrono::milliseconds default_freeze{1'000};  // a 429 that names no delay
    // Requests left in the provider's bucket, as this much time of its refill: requests and
    // answers take varying times in transit, and a bucket run to its last request answers 429
    // whenever one arrives sooner after the one before it than they were sent. The reserve
    // costs no throughput once the bucket is drained (the rate is the same), only its start.
    std::chrono::milliseconds jitter_reserve{100};
  };
  struct Stats {
    long requests = 0;
    long rate_limited = 0;  // 429 answers
    long cuts = 0;
    int in_flight_cap = 0;
    bool spend_limited = false;
    int waiting = 0;  // requests waiting for a slot among those in flight
  };
  // What one answer told the limiter.
  struct Answer {
    int status = 0;  // 0: no HTTP answer (transport failure)
    const std::map<std::string, std::string>* headers = nullptr;  // lower-cased names
    std::string_view body;
    long estimated_tokens = 0;           // what acquire() debited
    std::optional<long> counted_tokens;  // what the provider counted against the limit
  };

  RateLimiter(std::string wire, Options o);
  explicit RateLimiter(std::string wire) : RateLimiter(std::move(wire), Options{}) {}

  // Waits for a turn to send one request of about `tokens` input tokens. False when a spend
  // limit stopped the limiter: nothing may be sent.
  boost::asio::awaitable<bool> acquire(long tokens);
  // Every acquire() is followed by exactly one release() with the answer.
  void release(const Answer& a);

  Stats stats() const;

 private:
  struct Bucket {
    bool known = false;  // headers seen: before that the bucket does not limit
    double level = 0;    // may go negative: the debt of the requests that took their turn
    double capacity = 0;
    double rate_per_s = 0;
    std::chrono::steady_clock::time_point at;
    void refill(std::chrono::steady_clock::time_point now);
    // Until the level is back at `reserve` (the debt repaid with something left over).
    double wait_s(double reserve = 0) const {
      return known && level < reserve && rate_per_s > 0 ? (reserve - level) / rate_per_s : 0;
    }
    void clamp(double limit, double remaining, double reset_in_s,
               std::chrono::steady_clock::time_point now);
  };
  void read_headers(const std::map<std::string, std::string>& h);
  void wake_one();

  const std::string wire_;
  const Options opt_;
  mutable std::mutex mu_;
  Bucket requests_, tokens_;
  int in_flight_ = 0;
  int cap_;
  bool started_ = false;  // a first answer arrived
  bool spend_limited_ = false;
  std::chrono::steady_clock::time_point frozen_until_{};
  std::chrono::steady_clock::time_point last_cut_{};
  std::chrono::steady_clock::time_point last_change_{};             // last cut or growth of the cap
  std::deque<std::shared_ptr<boost::asio::steady_timer>> waiters_;  // waiting for a slot
  // Takes one wait out of waiters_ when it ends, however it ends.
  struct LeaveQueue {
    RateLimiter& limiter;
    std::shared_ptr<boost::asio::steady_timer> timer;
    ~LeaveQueue();
  };
  Stats stats_;
};

// The process's limiter for (provider, model), created on first use.
std::shared_ptr<RateLimiter> shared_rate_limiter(const std::string& provider,
                                                 const std::string& model, const std::string& wire);

}  // namespace kd::agents
