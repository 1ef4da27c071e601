// What the fake server emulates of the real providers beyond a script's turns (docs/fake-llm.md
// "Emulation"), each by the documented rule so that tests can hold it to the rule:
// - tokens: ceil(bytes / 4) of each block's compact JSON, cache markers left out;
// - Anthropic's prefix cache: writes only at cache_control breakpoints (at most 4, 1-hour ones
//   before 5-minute ones), a read looks back at most 20 blocks from each breakpoint for an entry
//   an earlier request wrote, prefixes under the minimum are silently not cached, a 5m or 1h
//   lifetime from the request that is renewed free on each hit, usage split into
//   input_tokens (after the read and the writes), cache_creation_input_tokens with its TTL split
//   and cache_read_input_tokens;
// - OpenAI's automatic caching: every message end of a prompt of at least the minimum is cached
//   for 10 minutes; cached_tokens is the longest cached prefix, rounded down to 128, inside
//   prompt_tokens;
// - request and input-token buckets refilled continuously, answering 429 with retry-after and
//   the wire's rate-limit headers on every answer.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "agents/fake/script.h"

namespace kd::agents::fake {

using Clock = std::chrono::steady_clock;

// The prompt as the server bills it.
struct Billed {
  long input_tokens = 0;  // the whole prompt
  long cache_read = 0;
  long cache_write_5m = 0;
  long cache_write_1h = 0;
};

long block_tokens(const nlohmann::json& block);

class PromptCache {
 public:
  struct Outcome {
    std::string error;  // non-empty: the request is invalid (400) and nothing was cached
    Billed billed;
  };
  // Counts (and with `cache` reads and writes) the prompt of a request on `wire`.
  Outcome anthropic(const nlohmann::json& body, Clock::time_point now, const FakeEmulation& e);
  Outcome openai(const nlohmann::json& body, Clock::time_point now, const FakeEmulation& e);

 private:
  struct Entry {
    Clock::time_point expires;
    Clock::duration ttl;
  };
  std::map<std::string, Entry> entries_;  // prefix hash -> entry; the wires' hashes differ
};

class RateBuckets {
 public:
  explicit RateBuckets(const FakeEmulation& e);
  struct Verdict {
    bool limited = false;
    long retry_after_s = 0;
    std::vector<std::string> headers;  // "name: value", on every answer
  };
  // Takes one request of `input_tokens` (0: not counted) from the buckets, or refuses it.
  Verdict take(std::string_view wire, long input_tokens, Clock::time_point now,
               std::chrono::system_clock::time_point wall_now);

 private:
  struct Bucket {
    double capacity = 0, rate = 0, level = 0;
    Clock::time_point at{};
    bool on() const { return rate > 0; }
    void refill(Clock::time_point now);
    double full_in_s() const { return rate > 0 ? (capacity - level) / rate : 0; }
  };
  Bucket requests_, tokens_;
};

}  // namespace kd::agents::fake
