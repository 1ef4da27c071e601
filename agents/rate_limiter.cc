#include "agents/rate_limiter.h"

#include "agents/provider_failure.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "agents/provider.h"
#include "common/time.h"

namespace kd::agents {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

std::optional<double> number(const std::map<std::string, std::string>& h, const std::string& k) {
  auto it = h.find(k);
  if (it == h.end()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str()) return std::nullopt;
  return v;
}

// Go-style durations of x-ratelimit-reset-*: "1s", "6m0s", "20ms", "1h2m3.5s".
std::optional<double> go_duration_s(const std::string& text) {
  double total = 0;
  const char* p = text.c_str();
  if (!*p) return std::nullopt;
  while (*p) {
    char* end = nullptr;
    double v = std::strtod(p, &end);
    if (end == p) return std::nullopt;
    p = end;
    std::string_view rest(p);
    if (rest.starts_with("ms")) {
      total += v / 1e3, p += 2;
    } else if (rest.starts_with("us") || rest.starts_with("µs")) {
      total += v / 1e6, p += rest.starts_with("us") ? 2 : 3;
    } else if (rest.starts_with("ns")) {
      total += v / 1e9, p += 2;
    } else if (rest.starts_with("h")) {
      total += v * 3600, p += 1;
    } else if (rest.starts_with("m")) {
      total += v * 60, p += 1;
    } else if (rest.starts_with("s")) {
      total += v, p += 1;
    } else {
      return std::nullopt;
    }
  }
  return total;
}

// Seconds until an RFC 3339 reset stamp (Anthropic) or a duration (OpenAI).
std::optional<double> reset_in_s(const std::map<std::string, std::string>& h,
                                 const std::string& k) {
  auto it = h.find(k);
  if (it == h.end()) return std::nullopt;
  if (auto t = parse_rfc3339(it->second)) {
    double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    return std::max(0.0, *t - now);
  }
  return go_duration_s(it->second);
}

}  // namespace

bool is_spend_limit_answer(std::string_view wire, int status,
                           const std::map<std::string, std::string>& headers,
                           std::string_view body) {
  if (status != 429) return false;
  // Anthropic answers a spend cap with a 429 that names no wait; OpenAI's ordinary 429s may name
  // none either, so there only the body (quota, billing) says it.
  const bool waits = headers.count("retry-after") || headers.count("retry-after-ms");
  const std::string cause =
      wire == "anthropic" && !waits ? "http_429" : "retries_exhausted:http_429";
  return classify_provider_failure(cause, std::string(body)).kind == ProviderFailureKind::SpendCap;
}

void RateLimiter::Bucket::refill(Clock::time_point now) {
  if (!known) return;
  double dt = std::chrono::duration<double>(now - at).count();
  if (dt > 0) level = std::min(capacity, level + dt * rate_per_s);
  at = now;
}

// The provider's word wins where it is lower: our level already counts the requests in flight
// the provider has not seen yet, so taking the lower of the two never overshoots.
void RateLimiter::Bucket::clamp(double limit, double remaining, double reset_s,
                                Clock::time_point now) {
  if (!known) {
    known = true;
    level = remaining;
    at = now;
  } else {
    refill(now);
    level = std::min(level, remaining);
  }
  capacity = limit;
  // The bucket refills continuously and is full again at the reset time. The answer's time in
  // transit shortens the reset we read and so overstates the rate: the lowest estimate is the
  // truest one.
  if (reset_s > 0.001 && limit > remaining) {
    double r = (limit - remaining) / reset_s;
    rate_per_s = rate_per_s > 0 ? std::min(rate_per_s, r) : r;
  }
  if (rate_per_s <= 0) rate_per_s = limit / 60.0;  // a per-minute limit until we learn better
}

RateLimiter::RateLimiter(std::string wire, Options o)
    : wire_(std::move(wire)), opt_(o), cap_(std::max(1, o.max_in_flight)) {
  stats_.in_flight_cap = cap_;
}

asio::awaitable<bool> RateLimiter::acquire(long tokens) {
  auto ex = co_await asio::this_coro::executor;
  // A slot among the requests in flight (the first request goes alone).
  for (;;) {
    std::shared_ptr<asio::steady_timer> t;
    {
      std::lock_guard l(mu_);
      if (spend_limited_) co_return false;
      int allowed = started_ ? cap_ : 1;
      if (in_flight_ < allowed) {
        ++in_flight_;
        ++stats_.requests;
        break;
      }
      t = std::make_shared<asio::steady_timer>(ex);
      t->expires_after(std::chrono::seconds(1));  // a lost wake-up costs a second, not a hang
      waiters_.push_back(t);
    }
    // The queue holds only waits in progress, however this one ends: woken, timed out, or its
    // session's io_context destroyed with this coroutine suspended. An entry left behind would
    // be woken later on an executor that may no longer exist.
    const LeaveQueue leave{*this, t};
    boost::system::error_code ec;
    co_await t->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  // Then its turn in the buckets: debit now, wait until the debt is repaid or the freeze ends.
  Clock::time_point until;
  {
    std::lock_guard l(mu_);
    auto now = Clock::now();
    requests_.refill(now);
    tokens_.refill(now);
    requests_.level -= 1;
    tokens_.level -= static_cast<double>(tokens);
    const double reserve =
        std::min(requests_.capacity / 4,
                 requests_.rate_per_s * std::chrono::duration<double>(opt_.jitter_reserve).count());
    double w = std::max(requests_.wait_s(reserve),
                        tokens_.known && tokens_.capacity >= tokens ? tokens_.wait_s() : 0.0);
    until = std::max(frozen_until_, now + std::chrono::microseconds(static_cast<long>(w * 1e6)));
  }
  for (;;) {
    if (Clock::now() < until) {
      asio::steady_timer t(ex);
      t.expires_at(until);
      co_await t.async_wait(asio::use_awaitable);
    }
    std::lock_guard l(mu_);
    if (spend_limited_) {
      --in_flight_;
      wake_one();
      co_return false;
    }
    if (frozen_until_ <= Clock::now()) break;
    until = frozen_until_;  // a 429 came while we slept
  }
  co_return true;
}

void RateLimiter::release(const Answer& a) {
  std::lock_guard l(mu_);
  auto now = Clock::now();
  --in_flight_;
  if (a.status != 0) started_ = true;
  if (a.headers) read_headers(*a.headers);
  if (a.counted_tokens) {
    tokens_.refill(now);
    tokens_.level += static_cast<double>(a.estimated_tokens - *a.counted_tokens);
  }
  if (a.status == 429) {
    ++stats_.rate_limited;
    requests_.refill(now);
    requests_.level = std::min(requests_.level, 0.0);  // the provider's bucket is empty
    if (a.headers && is_spend_limit_answer(wire_, a.status, *a.headers, a.body)) {
      spend_limited_ = true;
      stats_.spend_limited = true;
      // Every waiter learns it now rather than at its next timeout.
      for (auto& w : waiters_)
        asio::post(w->get_executor(), [w] { w->cancel(); });
      waiters_.clear();
      return;
    }
    std::optional<double> delay_s;
    if (a.headers) {
      if (auto ms = number(*a.headers, "retry-after-ms"))
        delay_s = *ms / 1e3;
      else if (auto s = number(*a.headers, "retry-after"))
        delay_s = *s;
    }
    auto freeze = delay_s
                      ? std::chrono::microseconds(static_cast<long>(*delay_s * 1e6))
                      : std::chrono::duration_cast<std::chrono::microseconds>(opt_.default_freeze);
    frozen_until_ = std::max(frozen_until_, now + freeze);
    if (now - last_cut_ >= opt_.cut_debounce) {
      cap_ = std::max(1, static_cast<int>(std::floor(cap_ * opt_.cut_factor)));
      last_cut_ = last_change_ = now;
      ++stats_.cuts;
    }
  } else if (a.status >= 200 && a.status < 300 && cap_ < opt_.max_in_flight &&
             now - last_change_ >= opt_.restore_after) {
    // Additive increase, one slot per quiet interval: slow enough that a cut sticks.
    ++cap_;
    last_change_ = now;
  }
  stats_.in_flight_cap = cap_;
  wake_one();
}

void RateLimiter::read_headers(const std::map<std::string, std::string>& h) {
  auto now = Clock::now();
  auto apply = [&](Bucket& b, const std::string& limit, const std::string& remaining,
                   const std::string& reset) {
    auto l = number(h, limit);
    auto r = number(h, remaining);
    if (!l || !r) return;
    b.clamp(*l, *r, reset_in_s(h, reset).value_or(0), now);
  };
  if (wire_ == "anthropic") {
    apply(requests_, "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
          "anthropic-ratelimit-requests-reset");
    apply(tokens_, "anthropic-ratelimit-input-tokens-limit",
          "anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset");
  } else {
    apply(requests_, "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
          "x-ratelimit-reset-requests");
    apply(tokens_, "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens",
          "x-ratelimit-reset-tokens");
  }
}

RateLimiter::LeaveQueue::~LeaveQueue() {
  std::lock_guard l(limiter.mu_);
  auto& q = limiter.waiters_;
  q.erase(std::remove(q.begin(), q.end(), timer), q.end());
}

void RateLimiter::wake_one() {
  while (!waiters_.empty()) {
    auto w = std::move(waiters_.front());
    waiters_.pop_front();
    asio::post(w->get_executor(), [w] { w->cancel(); });
    return;
  }
}

RateLimiter::Stats RateLimiter::stats() const {
  std::lock_guard l(mu_);
  Stats s = stats_;
  s.waiting = static_cast<int>(waiters_.size());
  return s;
}

std::shared_ptr<RateLimiter> shared_rate_limiter(const std::string& provider,
                                                 const std::string& model,
                                                 const std::string& wire) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<RateLimiter>> limiters;
  std::lock_guard l(mu);
  auto& slot = limiters[provider + "\n" + model];
  auto sp = slot.lock();
  if (!sp) {
    sp = std::make_shared<RateLimiter>(wire);
    slot = sp;
  }
  return sp;
}

}  // namespace kd::agents
