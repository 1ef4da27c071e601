// The fake server's emulation held to the providers' documented rules, over real HTTP, with
// hand-made requests (no client of ours): tokens are ceil(bytes / 4) of each block's compact JSON
// without its marker; Anthropic writes only at breakpoints, reads an earlier write at most 20
// blocks back, caches nothing under the minimum, keeps entries 5 minutes or an hour; OpenAI
// caches message ends automatically and reports cached_tokens in multiples of 128; a prompt
// over the window gets the wire's 400; the buckets answer 429 with the real headers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>

#include "agents/fake/server.h"
#include "common/fd.h"
#include "common/text.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct Answer {
  int status = 0;
  std::map<std::string, std::string> headers;
  json body;
};

// One request on its own connection, read until the server closes.
Answer post(unsigned short port, const std::string& path, const json& body) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  std::string b = body.dump();
  std::string req = "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                    "Content-Length: " + std::to_string(b.size()) + "\r\n\r\n" + b;
  EXPECT_EQ(::send(fd.get(), req.data(), req.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(req.size()));
  std::string resp;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd.get(), buf, sizeof buf, 0)) > 0;)
    resp.append(buf, static_cast<size_t>(n));
  Answer a;
  size_t head_end = resp.find("\r\n\r\n");
  EXPECT_NE(head_end, std::string::npos) << resp;
  if (head_end == std::string::npos) return a;
  a.status = std::stoi(resp.substr(9, 3));
  size_t pos = resp.find("\r\n") + 2;
  while (pos < head_end) {
    size_t eol = resp.find("\r\n", pos);
    std::string line = resp.substr(pos, eol - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos)
      a.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
    pos = eol + 2;
  }
  a.body = json::parse(resp.substr(head_end + 4), nullptr, false);
  return a;
}

long tokens(const json& block) {
  return static_cast<long>((block.dump().size() + 3) / 4);
}

json text_block(const std::string& text) {
  return {{"type", "text"}, {"text", text}};
}

json marked(json block, const char* ttl = nullptr) {
  block["cache_control"] = {{"type", "ephemeral"}};
  if (ttl) block["cache_control"]["ttl"] = ttl;
  return block;
}

std::string script(const std::string& emulate, int turns = 40) {
  std::string t;
  for (int i = 0; i < turns; ++i)
    t += std::string(i ? "," : "") + R"({"text":"ok"})";
  return R"({"emulate":)" + emulate + R"(,"turns":[)" + t + "]}";
}

class AnthropicCache : public testing::Test {
 protected:
  AnthropicCache()
      : server_(FakeScript::parse(script(R"({"cache":true,"cache_min_tokens":1024})"), "s")) {}

  // A request: the system prompt (marked 1h), then user/assistant turns whose user blocks
  // are given; the last block of each listed user message index is marked 5m.
  json request(const std::vector<std::vector<json>>& users, std::vector<size_t> marks) {
    json msgs = json::array();
    for (size_t i = 0; i < users.size(); ++i) {
      json content = users[i];
      if (std::find(marks.begin(), marks.end(), i) != marks.end())
        content.back() = marked(content.back());
      msgs.push_back({{"role", "user"}, {"content", content}});
      if (i + 1 < users.size())
        msgs.push_back({{"role", "assistant"}, {"content", json::array({text_block("ok")})}});
    }
    return {{"model", "m"},
            {"max_tokens", 10},
            {"system", json::array({marked(system_, "1h")})},
            {"messages", msgs}};
  }
  json usage(const json& req) {
    Answer a = post(server_.port(), "/v1/messages", req);
    EXPECT_EQ(a.status, 200) << a.body.dump();
    return a.body["usage"];
  }

  FakeServer server_;
  json system_ = text_block(std::string(6000, 's'));  // 1,500 tokens: over the minimum
};

TEST_F(AnthropicCache, WritesAtBreakpointsWithTheirTtlThenReadsThem) {
  json u1 = text_block(std::string(800, 'a')), u2 = text_block(std::string(800, 'b'));
  json first = usage(request({{u1}}, {0}));
  EXPECT_EQ(first["cache_read_input_tokens"], 0);
  EXPECT_EQ(first["cache_creation"]["ephemeral_1h_input_tokens"], tokens(system_));
  EXPECT_EQ(first["cache_creation"]["ephemeral_5m_input_tokens"], tokens(u1));
  EXPECT_EQ(first["cache_creation_input_tokens"], tokens(system_) + tokens(u1));
  EXPECT_EQ(first["input_tokens"], 0) << "nothing follows the last breakpoint";

  json second = usage(request({{u1}, {u2}}, {0, 1}));
  EXPECT_EQ(second["cache_read_input_tokens"], tokens(system_) + tokens(u1));
  EXPECT_EQ(second["cache_creation"]["ephemeral_5m_input_tokens"],
            tokens(text_block("ok")) + tokens(u2));
  EXPECT_EQ(second["cache_creation"]["ephemeral_1h_input_tokens"], 0);
  EXPECT_EQ(second["input_tokens"], 0);

  // Unmarked blocks after the last breakpoint are plain input; the same prefix is read again.
  json tail = text_block("tail");
  json third_req = request({{u1}, {u2, tail}}, {0});
  third_req["messages"][2]["content"][0] = marked(u2);
  json third = usage(third_req);
  EXPECT_EQ(third["cache_read_input_tokens"],
            tokens(system_) + tokens(u1) + tokens(text_block("ok")) + tokens(u2));
  EXPECT_EQ(third["input_tokens"], tokens(tail));
  EXPECT_EQ(third["cache_creation_input_tokens"], 0);
}

TEST_F(AnthropicCache, ShorterThanTheMinimumIsSilentlyNotCached) {
  system_ = text_block("short");
  json u = text_block("hello");
  for (int i = 0; i < 2; ++i) {
    json r = usage(request({{u}}, {0}));
    EXPECT_EQ(r["cache_read_input_tokens"], 0);
    EXPECT_EQ(r["cache_creation_input_tokens"], 0);
    EXPECT_EQ(r["input_tokens"], tokens(system_) + tokens(u));
  }
}

TEST_F(AnthropicCache, AReadLooksBackTwentyBlocksAtMost) {
  json u1 = text_block(std::string(800, 'a'));
  usage(request({{u1}}, {0}));  // writes at the system prompt and at u1 (block 1)
  // The next request adds blocks; only its last one is marked. The walk back starts at the
  // marked block and covers 20 positions, itself included.
  auto with_blocks = [&](int added) {
    std::vector<json> extra;
    for (int i = 0; i < added; ++i)
      extra.push_back(text_block("x" + std::to_string(i)));
    json r = request({{u1}, extra}, {1});
    return usage(r)["cache_read_input_tokens"].get<long>();
  };
  // u1 is block 1; with the assistant block 2 the new user blocks start at 3. A marker on block
  // 20 still finds u1's entry (20 positions, itself included); one on block 21 does not, and
  // only the system prompt's own breakpoint finds its entry.
  EXPECT_EQ(with_blocks(18), tokens(system_) + tokens(u1)) << "marker at block 20";
  server_.advance_clock(61min);  // forget everything
  usage(request({{u1}}, {0}));
  EXPECT_EQ(with_blocks(19), tokens(system_)) << "marker at block 21: u1 is out of reach";
}

TEST_F(AnthropicCache, FiveMinuteEntriesExpireHourOnesStayAndHitsRenew) {
  json u1 = text_block(std::string(800, 'a'));
  usage(request({{u1}}, {0}));
  server_.advance_clock(4min);
  EXPECT_EQ(usage(request({{u1}}, {0}))["cache_read_input_tokens"], tokens(system_) + tokens(u1));
  server_.advance_clock(4min);  // 8 minutes after the write, 4 after the renewing hit
  EXPECT_EQ(usage(request({{u1}}, {0}))["cache_read_input_tokens"], tokens(system_) + tokens(u1));
  server_.advance_clock(6min);
  json r = usage(request({{u1}}, {0}));
  EXPECT_EQ(r["cache_read_input_tokens"], tokens(system_)) << "only the 1h entry is left";
  EXPECT_EQ(r["cache_creation"]["ephemeral_5m_input_tokens"], tokens(u1));
  server_.advance_clock(61min);
  r = usage(request({{u1}}, {0}));
  EXPECT_EQ(r["cache_read_input_tokens"], 0);
  EXPECT_EQ(r["cache_creation"]["ephemeral_1h_input_tokens"], tokens(system_));
}

TEST_F(AnthropicCache, MoreThanFourMarkersOrAnHourAfterFiveMinutesIsRefused) {
  std::vector<json> blocks;
  for (int i = 0; i < 4; ++i)
    blocks.push_back(marked(text_block("b" + std::to_string(i))));
  json five = request({blocks}, {});
  Answer a = post(server_.port(), "/v1/messages", five);
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body["error"]["message"].get<std::string>().find("maximum of 4"), std::string::npos);
  json late = request({{marked(text_block("a")), marked(text_block("b"), "1h")}}, {});
  late["system"][0].erase("cache_control");
  a = post(server_.port(), "/v1/messages", late);
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body["error"]["message"].get<std::string>().find("ttl='1h'"), std::string::npos);
}

TEST(OpenAiCache, AutomaticPrefixCachingInMultiplesOf128) {
  FakeServer server(FakeScript::parse(script(R"({"cache":true})"), "s"));
  json sys = {{"role", "system"}, {"content", std::string(6000, 's')}};
  json u1 = {{"role", "user"}, {"content", "first"}};
  json a1 = {{"role", "assistant"}, {"content", "ok"}};
  json u2 = {{"role", "user"}, {"content", "second"}};
  json req = {{"model", "m"}, {"messages", {sys, u1}}};
  Answer first = post(server.port(), "/v1/chat/completions", req);
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(first.body["usage"]["prompt_tokens"], tokens(sys) + tokens(u1));
  EXPECT_EQ(first.body["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  req["messages"] = {sys, u1, a1, u2};
  Answer second = post(server.port(), "/v1/chat/completions", req);
  long prefix = tokens(sys) + tokens(u1);
  EXPECT_EQ(second.body["usage"]["prompt_tokens"], prefix + tokens(a1) + tokens(u2))
      << "cached tokens are inside prompt_tokens";
  EXPECT_EQ(second.body["usage"]["prompt_tokens_details"]["cached_tokens"], prefix / 128 * 128);
  server.advance_clock(11min);
  Answer later = post(server.port(), "/v1/chat/completions", req);
  EXPECT_EQ(later.body["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  json short_req = {{"model", "m"}, {"messages", {u1}}};
  post(server.port(), "/v1/chat/completions", short_req);
  EXPECT_EQ(post(server.port(), "/v1/chat/completions", short_req)
                .body["usage"]["prompt_tokens_details"]["cached_tokens"],
            0)
      << "under 1,024 tokens nothing is cached";
}

TEST(ContextWindowEmulation, APromptOverTheWindowGetsTheWiresFourHundred) {
  FakeServer server(FakeScript::parse(script(R"({"context_window":1000})"), "s"));
  json fits = text_block(std::string(3900, 'a'));
  json over = text_block(std::string(4100, 'a'));
  json req = {
      {"model", "m"}, {"max_tokens", 10}, {"messages", {{{"role", "user"}, {"content", {fits}}}}}};
  EXPECT_EQ(post(server.port(), "/v1/messages", req).status, 200) << tokens(fits);
  req["messages"][0]["content"] = {over};
  Answer a = post(server.port(), "/v1/messages", req);
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.body["error"]["type"], "invalid_request_error");
  EXPECT_EQ(a.body["error"]["message"],
            "prompt is too long: " + std::to_string(tokens(over)) + " tokens > 1000 maximum");
  json oreq = {{"model", "m"},
               {"messages", {{{"role", "user"}, {"content", std::string(4100, 'a')}}}}};
  server.advance_clock(2s);
  Answer o = post(server.port(), "/v1/chat/completions", oreq);
  EXPECT_EQ(o.status, 400);
  EXPECT_EQ(o.body["error"]["code"], "context_length_exceeded");
  EXPECT_EQ(server.billing().overflows, 2);
}

TEST(RateLimitEmulation, BucketsAnswer429WithRetryAfterAndTheRealHeaders) {
  FakeServer server(FakeScript::parse(script(R"({"requests_per_s":0.5,"burst":5})"), "s"));
  json req = {
      {"model", "m"}, {"max_tokens", 10}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  for (int i = 0; i < 5; ++i) {
    Answer a = post(server.port(), "/v1/messages", req);
    ASSERT_EQ(a.status, 200) << i;
    EXPECT_EQ(a.headers["anthropic-ratelimit-requests-limit"], "5");
    EXPECT_EQ(a.headers["anthropic-ratelimit-requests-remaining"], std::to_string(4 - i));
    EXPECT_TRUE(a.headers.count("anthropic-ratelimit-requests-reset"));
  }
  Answer limited = post(server.port(), "/v1/messages", req);
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.body["error"]["type"], "rate_limit_error");
  EXPECT_GE(std::stoi(limited.headers["retry-after"]), 1);
  EXPECT_EQ(server.billing().rate_limited, 1);
  server.advance_clock(2s);
  EXPECT_EQ(post(server.port(), "/v1/messages", req).status, 200) << "one request refilled";
  server.advance_clock(2s);
  Answer o = post(server.port(), "/v1/chat/completions",
                  {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  EXPECT_EQ(o.headers["x-ratelimit-limit-requests"], "5");
  EXPECT_TRUE(o.headers.count("x-ratelimit-remaining-requests"));
  EXPECT_TRUE(o.headers.count("x-ratelimit-reset-requests"));
}

}  // namespace
}  // namespace kd::agents
