#include "agents/fake/emulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/sha256.h"
#include "common/time.h"

namespace kd::agents::fake {

namespace {

using json = nlohmann::json;

constexpr int kLookBack = 20;  // blocks a read walks back from a breakpoint, itself included
constexpr int kMaxBreakpoints = 4;
constexpr auto kOpenAiTtl = std::chrono::minutes(10);

struct Block {
  std::string text;  // where it stands (tool, system, a role) and its compact JSON, no marker
  long tokens = 0;   // of the JSON alone
  json marker;       // the block's cache_control, null when none
};

Block block_of(const std::string& where, json b) {
  Block out;
  if (b.is_object() && b.contains("cache_control")) {
    out.marker = b["cache_control"];
    b.erase("cache_control");
  }
  std::string j = b.dump(-1, ' ', false, json::error_handler_t::replace);
  out.tokens = static_cast<long>((j.size() + 3) / 4);
  out.text = where + j;
  return out;
}

std::vector<Block> anthropic_blocks(const json& body) {
  std::vector<Block> out;
  if (body.contains("tools") && body["tools"].is_array()) {
    for (const auto& t : body["tools"])
      out.push_back(block_of("tool ", t));
  }
  if (body.contains("system")) {
    const json& s = body["system"];
    if (s.is_string()) {
      out.push_back(block_of("system ", {{"type", "text"}, {"text", s}}));
    } else if (s.is_array()) {
      for (const auto& b : s)
        out.push_back(block_of("system ", b));
    }
  }
  for (const auto& m : body.value("messages", json::array())) {
    std::string role = m.is_object() ? m.value("role", "") + " " : " ";
    const json c = m.is_object() && m.contains("content") ? m["content"] : json();
    if (c.is_string()) {
      out.push_back(block_of(role, {{"type", "text"}, {"text", c}}));
    } else if (c.is_array()) {
      for (const auto& b : c)
        out.push_back(block_of(role, b));
    }
  }
  return out;
}

// Prefix hashes: entry i covers blocks 0..i of this model.
std::vector<std::string> chain(const std::string& seed, const std::vector<Block>& blocks) {
  std::vector<std::string> out;
  std::string h = sha256_hex(seed);
  for (const auto& b : blocks) {
    h = sha256_hex(h + b.text);
    out.push_back(h);
  }
  return out;
}

std::vector<long> cumulative(const std::vector<Block>& blocks) {
  std::vector<long> out;
  long sum = 0;
  for (const auto& b : blocks)
    out.push_back(sum += b.tokens);
  return out;
}

std::string go_duration(double s) {
  char buf[32];
  if (s < 1) {
    std::snprintf(buf, sizeof buf, "%ldms", static_cast<long>(std::ceil(s * 1000)));
  } else {
    std::snprintf(buf, sizeof buf, "%.3fs", s);
  }
  return buf;
}

}  // namespace

long block_tokens(const json& block) {
  return block_of("", block).tokens;
}

PromptCache::Outcome PromptCache::anthropic(const json& body, Clock::time_point now,
                                            const FakeEmulation& e) {
  Outcome out;
  std::vector<Block> blocks = anthropic_blocks(body);
  // Automatic caching: a top-level marker is a breakpoint on the last block.
  if (body.contains("cache_control") && !blocks.empty()) {
    if (!blocks.back().marker.is_null()) {
      out.error = "automatic cache_control cannot be combined with a marker on the last block";
      return out;
    }
    blocks.back().marker = body["cache_control"];
  }
  std::vector<long> cum = cumulative(blocks);
  out.billed.input_tokens = cum.empty() ? 0 : cum.back();
  std::vector<size_t> points;
  bool seen_5m = false;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const json& m = blocks[i].marker;
    if (m.is_null()) continue;
    std::string ttl = m.is_object() ? m.value("ttl", "5m") : "";
    if (!m.is_object() || m.value("type", "") != "ephemeral" || (ttl != "5m" && ttl != "1h")) {
      out.error = "cache_control must be {\"type\": \"ephemeral\"} with ttl 5m or 1h";
      return out;
    }
    if (ttl == "1h" && seen_5m) {
      out.error = "a ttl='1h' cache_control block must not come after a ttl='5m' block";
      return out;
    }
    seen_5m = seen_5m || ttl == "5m";
    points.push_back(i);
  }
  if (points.size() > kMaxBreakpoints) {
    out.error = "A maximum of 4 blocks with cache_control may be provided. Found " +
                std::to_string(points.size()) + ".";
    return out;
  }
  if (!e.cache || points.empty()) return out;
  std::vector<std::string> hashes = chain("anthropic " + body.value("model", ""), blocks);
  auto live = [&](size_t i) {
    auto it = entries_.find(hashes[i]);
    return it != entries_.end() && it->second.expires > now ? &it->second : nullptr;
  };
  // The read: the longest entry found walking back from any breakpoint.
  long hit = -1;
  for (size_t b : points) {
    for (long j = static_cast<long>(b); j >= 0 && j > static_cast<long>(b) - kLookBack; --j) {
      if (live(static_cast<size_t>(j))) {
        hit = std::max(hit, j);
        break;
      }
    }
  }
  if (hit >= 0) {
    Entry* en = live(static_cast<size_t>(hit));
    en->expires = now + en->ttl;  // a hit renews the lifetime at no charge
    out.billed.cache_read = cum[static_cast<size_t>(hit)];
  }
  // The writes: each breakpoint past the read whose prefix is long enough.
  long boundary = hit >= 0 ? cum[static_cast<size_t>(hit)] : 0;
  for (size_t b : points) {
    if (static_cast<long>(b) <= hit || cum[b] < e.cache_min_tokens) continue;
    bool hour = blocks[b].marker.value("ttl", "5m") == "1h";
    Clock::duration ttl =
        hour ? Clock::duration(std::chrono::hours(1)) : Clock::duration(std::chrono::minutes(5));
    entries_[hashes[b]] = Entry{now + ttl, ttl};
    (hour ? out.billed.cache_write_1h : out.billed.cache_write_5m) += cum[b] - boundary;
    boundary = cum[b];
  }
  return out;
}

PromptCache::Outcome PromptCache::openai(const json& body, Clock::time_point now,
                                         const FakeEmulation& e) {
  Outcome out;
  std::vector<Block> blocks;
  if (body.contains("tools")) blocks.push_back(block_of("tools ", body["tools"]));
  for (const auto& m : body.value("messages", json::array()))
    blocks.push_back(block_of("", m));
  std::vector<long> cum = cumulative(blocks);
  out.billed.input_tokens = cum.empty() ? 0 : cum.back();
  if (!e.cache || cum.empty() || cum.back() < e.cache_min_tokens) return out;
  std::vector<std::string> hashes = chain("openai " + body.value("model", ""), blocks);
  for (long j = static_cast<long>(blocks.size()) - 1; j >= 0; --j) {
    auto it = entries_.find(hashes[static_cast<size_t>(j)]);
    if (it == entries_.end() || it->second.expires <= now) continue;
    it->second.expires = now + it->second.ttl;
    long cached = cum[static_cast<size_t>(j)];
    if (cached >= e.cache_min_tokens) out.billed.cache_read = cached / 128 * 128;
    break;
  }
  for (size_t j = 0; j < blocks.size(); ++j) {
    if (cum[j] >= e.cache_min_tokens) entries_[hashes[j]] = Entry{now + kOpenAiTtl, kOpenAiTtl};
  }
  return out;
}

void RateBuckets::Bucket::refill(Clock::time_point now) {
  if (!on()) return;
  double dt = std::chrono::duration<double>(now - at).count();
  if (dt > 0) level = std::min(capacity, level + dt * rate);
  at = now;
}

RateBuckets::RateBuckets(const FakeEmulation& e) {
  auto start = Clock::now() - std::chrono::hours(1);  // full from the start
  requests_.rate = e.requests_per_s;
  requests_.capacity = e.burst > 0 ? static_cast<double>(e.burst) : std::max(1.0, e.requests_per_s);
  requests_.level = requests_.capacity;
  requests_.at = start;
  tokens_.rate = e.input_tokens_per_s;
  tokens_.capacity = e.input_tokens_per_s * 60;
  tokens_.level = tokens_.capacity;
  tokens_.at = start;
}

RateBuckets::Verdict RateBuckets::take(std::string_view wire, long input_tokens,
                                       Clock::time_point now,
                                       std::chrono::system_clock::time_point wall_now) {
  Verdict v;
  requests_.refill(now);
  tokens_.refill(now);
  double wait = 0;
  if (requests_.on() && requests_.level < 1) wait = (1 - requests_.level) / requests_.rate;
  double want = std::min(static_cast<double>(input_tokens), tokens_.capacity);
  if (tokens_.on() && tokens_.level < want)
    wait = std::max(wait, (want - tokens_.level) / tokens_.rate);
  if (wait > 0) {
    v.limited = true;
    v.retry_after_s = std::max(1L, static_cast<long>(std::ceil(wait)));
    v.headers.push_back("retry-after: " + std::to_string(v.retry_after_s));
  } else {
    if (requests_.on()) requests_.level -= 1;
    if (tokens_.on()) tokens_.level -= want;
  }
  const long wall_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(wall_now.time_since_epoch()).count();
  auto add = [&](const Bucket& b, const std::string& a_name, const std::string& o_name) {
    if (!b.on()) return;
    const std::string limit = std::to_string(static_cast<long>(b.capacity));
    const std::string remaining =
        std::to_string(static_cast<long>(std::floor(std::max(0.0, b.level))));
    if (wire == "anthropic") {
      v.headers.push_back("anthropic-ratelimit-" + a_name + "-limit: " + limit);
      v.headers.push_back("anthropic-ratelimit-" + a_name + "-remaining: " + remaining);
      v.headers.push_back("anthropic-ratelimit-" + a_name + "-reset: " +
                          format_rfc3339_ms(wall_ms + static_cast<long>(b.full_in_s() * 1000)));
    } else {
      v.headers.push_back("x-ratelimit-limit-" + o_name + ": " + limit);
      v.headers.push_back("x-ratelimit-remaining-" + o_name + ": " + remaining);
      v.headers.push_back("x-ratelimit-reset-" + o_name + ": " + go_duration(b.full_in_s()));
    }
  };
  add(requests_, "requests", "requests");
  add(tokens_, "input-tokens", "tokens");
  return v;
}

}  // namespace kd::agents::fake
