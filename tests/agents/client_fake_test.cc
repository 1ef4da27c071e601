// Both providers, streaming and not, over real HTTP against the fake server: conversations,
// parallel tool calls, noise, byte-split streams, and every injected fault.
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>

#include "agents/fake/server.h"
#include "agents/llm_client.h"
#include "tests/agents/test_util.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;
using test::run_sync;

struct Mode {
  std::string wire;
  bool stream;
};

void PrintTo(const Mode& m, std::ostream* os) {
  *os << m.wire << (m.stream ? " stream" : " whole");
}

std::string mode_name(const testing::TestParamInfo<Mode>& i) {
  return i.param.wire + (i.param.stream ? "_stream" : "_whole");
}

class ClientTest : public testing::TestWithParam<Mode> {
 protected:
  // Starts a server with `script` and asks for one turn of `conv`.
  AssistantTurn ask(const std::string& script, Conversation conv = {}, RetryPolicy retry = fast()) {
    start(script, retry);
    if (conv.messages.empty()) conv.messages.push_back({Message::Kind::user, "hi", {}, {}});
    return run_sync(io_,
                    client_->complete(conv, {}, hooks_,
                                      std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  }
  void start(const std::string& script, RetryPolicy retry = fast()) {
    server_ = std::make_unique<FakeServer>(FakeScript::parse(script, "script"));
    Endpoint ep{GetParam().wire,
                server_->base_url(),
                "sk-test-key-0123456789",
                "fake-author",
                512,
                GetParam().stream,
                {},
                {}};
    Timeouts to;
    to.connect = std::chrono::milliseconds(400);
    to.first_byte = std::chrono::milliseconds(400);
    to.idle = std::chrono::milliseconds(400);
    client_ = std::make_unique<LlmClient>(http_, ep, retry, to);
    hooks_.on_retry = [this](int, const std::string& cause, double) { retries_.push_back(cause); };
  }
  static RetryPolicy fast() {
    RetryPolicy r;
    r.base = std::chrono::milliseconds(5);
    r.cap = std::chrono::milliseconds(20);
    r.max_attempts = 3;
    return r;
  }
  std::string fault_script(const std::string& fault) {
    return R"({"turns":[{"text":"recovered fine","tool_calls":[{"name":"read_file","input":{"path":"a.py"}}],"faults":[)" +
           fault + "]}]}";
  }
  void expect_recovered(const AssistantTurn& t, size_t attempts) {
    EXPECT_EQ(t.text, "recovered fine");
    ASSERT_EQ(t.tool_calls.size(), 1u);
    EXPECT_EQ(t.tool_calls[0].input, json({{"path", "a.py"}}));
    EXPECT_EQ(server_->requests().size(), attempts);
    EXPECT_EQ(retries_.size(), attempts - 1);
  }

  boost::asio::io_context io_;
  HttpClient http_{io_.get_executor()};
  std::unique_ptr<FakeServer> server_;
  std::unique_ptr<LlmClient> client_;
  CallHooks hooks_;
  std::vector<std::string> retries_;
  std::string first_retry() const { return retries_.empty() ? "(no retry)" : retries_[0]; }
};

TEST_P(ClientTest, PlainText) {
  AssistantTurn t = ask(
      R"({"turns":[{"text":"A plain answer that is longer than one piece \u00e9\u2713.","usage":{"input_tokens":7,"output_tokens":9}}]})");
  EXPECT_EQ(t.text, "A plain answer that is longer than one piece \u00e9\u2713.");
  EXPECT_TRUE(t.tool_calls.empty());
  EXPECT_EQ(t.stop_reason, GetParam().wire == "openai" ? "stop" : "end_turn");
  EXPECT_TRUE(t.usage.reported);
  EXPECT_EQ(t.usage.input_tokens, 7);
  EXPECT_EQ(t.usage.output_tokens, 9);
  EXPECT_EQ(t.request_id, "req_fake");
  auto seen = server_->requests();
  ASSERT_EQ(seen.size(), 1u);
  if (GetParam().wire == "openai") {
    EXPECT_EQ(seen[0].headers["authorization"], "Bearer sk-test-key-0123456789");
  } else {
    EXPECT_EQ(seen[0].headers["x-api-key"], "sk-test-key-0123456789");
    EXPECT_EQ(seen[0].headers["anthropic-version"], "2023-06-01");
  }
}

TEST_P(ClientTest, OneToolCall) {
  AssistantTurn t = ask(
      R"({"turns":[{"text":"reading","tool_calls":[{"id":"c1","name":"read_file","input":{"path":"k.py","limit":10}}]}]})");
  ASSERT_EQ(t.tool_calls.size(), 1u);
  EXPECT_EQ(t.tool_calls[0].id, "c1");
  EXPECT_EQ(t.tool_calls[0].name, "read_file");
  EXPECT_EQ(t.tool_calls[0].input, json({{"path", "k.py"}, {"limit", 10}}));
  EXPECT_TRUE(t.tool_calls[0].input_is_json);
}

TEST_P(ClientTest, ParallelToolCalls) {
  AssistantTurn t =
      ask(R"({"turns":[{"tool_calls":[{"id":"c1","name":"read_file","input":{"path":"a"}},
      {"id":"c2","name":"list_dir","input":{"path":"."}},{"id":"c3","name":"git_diff","input":{}}]}]})");
  ASSERT_EQ(t.tool_calls.size(), 3u);
  EXPECT_EQ(t.tool_calls[0].input, json({{"path", "a"}}));
  EXPECT_EQ(t.tool_calls[1].id, "c2");
  EXPECT_EQ(t.tool_calls[1].input, json({{"path", "."}}));
  EXPECT_EQ(t.tool_calls[2].input, json::object());
}

TEST_P(ClientTest, ToolArgumentsThatAreNotJson) {
  AssistantTurn t = ask(
      R"({"turns":[{"tool_calls":[{"id":"c1","name":"run","arguments_raw":"{command: [ls"}]}]})");
  ASSERT_EQ(t.tool_calls.size(), 1u);
  EXPECT_FALSE(t.tool_calls[0].input_is_json);
  EXPECT_EQ(t.tool_calls[0].input, json::object());
}

TEST_P(ClientTest, MultiTurnWithToolResultsAndInterpolation) {
  start(R"js({"turns":[{"tool_calls":[{"id":"c1","name":"commit","input":{"message":"m"}}]},
                    {"text":"committed {{last_result.sha}} ({{result.c1}})"}]})js");
  Conversation c;
  c.messages.push_back({Message::Kind::user, "go", {}, {}});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  AssistantTurn t1 = run_sync(io_, client_->complete(c, {}, hooks_, deadline));
  ASSERT_EQ(t1.tool_calls.size(), 1u);
  c.messages.push_back({Message::Kind::assistant, {}, t1, {}});
  Message r{Message::Kind::tool_results, {}, {}, {}};
  r.results.push_back({"c1", "commit", R"({"sha":"0123abcd"})", false});
  c.messages.push_back(r);
  AssistantTurn t2 = run_sync(io_, client_->complete(c, {}, hooks_, deadline));
  EXPECT_EQ(t2.text, R"(committed 0123abcd ({"sha":"0123abcd"}))");
  auto seen = server_->requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].turn, 1u);
}

TEST_P(ClientTest, ExperimentPlaceholderComesFromTheFirstUserMessage) {
  start(R"js({"turns":[{"text":"cand1({{experiment}}): one pass"}]})js");
  Conversation c;
  c.messages.push_back({Message::Kind::user,
                        "Author the candidates of fam3 v012 now, following your brief.",
                        {},
                        {}});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  AssistantTurn t = run_sync(io_, client_->complete(c, {}, hooks_, deadline));
  EXPECT_EQ(t.text, "cand1(fam3 v012): one pass");
}

TEST_P(ClientTest, NoiseIsIgnored) {
  AssistantTurn t = ask(
      R"({"turns":[{"text":"quiet text","noise":true,"tool_calls":[{"id":"c1","name":"read_file","input":{"path":"a"}}]}]})");
  EXPECT_EQ(t.text, "quiet text");
  ASSERT_EQ(t.tool_calls.size(), 1u);
  EXPECT_EQ(t.tool_calls[0].input, json({{"path", "a"}}));
}

TEST_P(ClientTest, EveryWriteSplitIntoSingleBytes) {
  AssistantTurn t = ask(R"({"chunk_bytes":1,"turns":[{"text":"multi\u2713byte \u00e9","noise":true,
      "tool_calls":[{"id":"c1","name":"read_file","input":{"path":"\u00e9.py"}},{"id":"c2","name":"list_dir","input":{"path":"."}}]}]})");
  EXPECT_EQ(t.text, "multi\u2713byte \u00e9");
  ASSERT_EQ(t.tool_calls.size(), 2u);
  EXPECT_EQ(t.tool_calls[0].input, json({{"path", "\u00e9.py"}}));
}

TEST_P(ClientTest, Fault429WithRetryAfterIsHonoured) {
  auto t0 = std::chrono::steady_clock::now();
  AssistantTurn t = ask(fault_script(R"({"kind":"status","status":429,"retry_after":0.3})"));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300));
  expect_recovered(t, 2);
  EXPECT_NE(first_retry().find("http_429"), std::string::npos) << first_retry();
}

TEST_P(ClientTest, Fault500ThenSuccess) {
  expect_recovered(
      ask(fault_script(R"({"kind":"status","status":500},{"kind":"status","status":503})")), 3);
}

TEST_P(ClientTest, Fault529Overloaded) {
  expect_recovered(ask(fault_script(R"({"kind":"status","status":529})")), 2);
  EXPECT_NE(first_retry().find("http_529"), std::string::npos) << first_retry();
}

TEST_P(ClientTest, FaultErrorEventMidStream) {
  expect_recovered(ask(fault_script(R"({"kind":"error_event","after_events":3})")), 2);
}

TEST_P(ClientTest, FaultStallHitsTheDeadline) {
  expect_recovered(ask(fault_script(R"({"kind":"stall","after_events":2,"seconds":3})")), 2);
  EXPECT_NE(first_retry().find("timeout"), std::string::npos) << first_retry();
}

TEST_P(ClientTest, FaultTruncatedStream) {
  expect_recovered(ask(fault_script(R"({"kind":"truncate","after_events":4})")), 2);
}

TEST_P(ClientTest, FaultMalformedJson) {
  expect_recovered(ask(fault_script(R"({"kind":"malformed_json","after_events":2})")), 2);
}

TEST_P(ClientTest, UnauthorizedIsNotRetried) {
  try {
    ask(fault_script(R"({"kind":"status","status":401})"));
    FAIL() << "expected ProviderGaveUp";
  } catch (const ProviderGaveUp& e) {
    EXPECT_EQ(to_string(e.reason()).rfind("provider:http_401", 0), 0u) << e.what();
  }
  EXPECT_EQ(server_->requests().size(), 1u);
}

TEST_P(ClientTest, RetriesExhaustedNamesTheCause) {
  try {
    ask(fault_script(
        R"({"kind":"status","status":500},{"kind":"status","status":500},{"kind":"status","status":500})"));
    FAIL() << "expected ProviderGaveUp";
  } catch (const ProviderGaveUp& e) {
    EXPECT_EQ(to_string(e.reason()).rfind("provider:retries_exhausted:http_500", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(server_->requests().size(), 3u);
}

TEST_P(ClientTest, RetryAfterBeyondTheBoundGivesUp) {
  try {
    ask(fault_script(R"({"kind":"status","status":429,"retry_after":600})"));
    FAIL() << "expected ProviderGaveUp";
  } catch (const ProviderGaveUp& e) {
    EXPECT_EQ(to_string(e.reason()).rfind("provider:retry_after_too_long", 0), 0u) << e.what();
  }
}

TEST_P(ClientTest, ScriptExhaustedIsANamedFailure) {
  start(R"({"turns":[{"text":"only one"}]})");
  Conversation c;
  c.messages.push_back({Message::Kind::user, "go", {}, {}});
  AssistantTurn t = run_sync(
      io_,
      client_->complete(c, {}, hooks_, std::chrono::steady_clock::now() + std::chrono::seconds(5)));
  c.messages.push_back({Message::Kind::assistant, {}, t, {}});
  c.messages.push_back({Message::Kind::user, "more", {}, {}});
  try {
    run_sync(io_, client_->complete(c, {}, hooks_,
                                    std::chrono::steady_clock::now() + std::chrono::seconds(5)));
    FAIL() << "expected ProviderGaveUp";
  } catch (const ProviderGaveUp& e) {
    EXPECT_EQ(to_string(e.reason()).rfind("provider:http_400", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("script has 1 turns"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Wire, ClientTest,
                         testing::Values(Mode{"anthropic", true}, Mode{"anthropic", false},
                                         Mode{"openai", true}, Mode{"openai", false}),
                         mode_name);

TEST(Client, ConnectionRefusedIsRetriedThenNamed) {
  boost::asio::io_context io;
  HttpClient http(io.get_executor());
  unsigned short port;
  {
    FakeServer s(FakeScript::parse(R"({"turns":[{"text":"x"}]})", "s"));
    port = s.port();
  }  // closed: nothing listens there now
  RetryPolicy r;
  r.base = std::chrono::milliseconds(5);
  r.max_attempts = 2;
  LlmClient c(
      http,
      Endpoint{"anthropic", "http://127.0.0.1:" + std::to_string(port), "", "m", 10, true, {}, {}},
      r);
  Conversation conv;
  conv.messages.push_back({Message::Kind::user, "hi", {}, {}});
  try {
    run_sync(io,
             c.complete(conv, {}, {}, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
    FAIL() << "expected ProviderGaveUp";
  } catch (const ProviderGaveUp& e) {
    EXPECT_EQ(to_string(e.reason()), "provider:retries_exhausted:connect");
  }
}

// Many streams at once on one thread: every socket is served from the one epoll set, more of
// them can be ready at a time than one batch takes, and each stream still assembles its own
// text in order.
TEST(Client, ThreeHundredConcurrentStreamsOnOneThread) {
  FakeServer server(FakeScript::parse(
      R"({"pace_ms":2,"turns":[{"text":["one ","two ","three ","four ","five ","six"]}]})", "s"));
  for (const char* wire : {"anthropic", "openai"}) {
    boost::asio::io_context io;
    HttpClient http(io.get_executor());
    constexpr int kStreams = 300;
    std::vector<std::unique_ptr<LlmClient>> clients;
    std::vector<std::string> texts(kStreams);
    int pieces = 0;
    CallHooks hooks;
    hooks.on_text = [&](std::string_view) { ++pieces; };
    for (int i = 0; i < kStreams; ++i) {
      clients.push_back(std::make_unique<LlmClient>(
          http, Endpoint{wire, server.base_url(), "", "m", 10, true, {}, {}}, RetryPolicy{}));
      boost::asio::co_spawn(
          io,
          [&, i]() -> boost::asio::awaitable<void> {
            Conversation conv;
            conv.messages.push_back({Message::Kind::user, "stream " + std::to_string(i), {}, {}});
            AssistantTurn t = co_await clients[static_cast<size_t>(i)]->complete(
                conv, {}, hooks, std::chrono::steady_clock::now() + std::chrono::seconds(60));
            texts[static_cast<size_t>(i)] = t.text;
          },
          boost::asio::detached);
    }
    io.run();
    for (int i = 0; i < kStreams; ++i)
      ASSERT_EQ(texts[static_cast<size_t>(i)], "one two three four five six") << wire << " " << i;
    EXPECT_EQ(pieces, kStreams * 6) << wire;
  }
}

// A burst of new transfers is handed to curl a batch at a time. A client shut down while
// some are still waiting (and others connected to a server that never answers) ends every one
// of them as aborted; none is left waiting for ever.
TEST(Client, ShutDownWithABurstStillQueuedAbortsEveryTransfer) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor silent(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const std::string url =
      "http://127.0.0.1:" + std::to_string(silent.local_endpoint().port()) + "/v1/messages";
  auto http = std::make_unique<HttpClient>(io.get_executor());
  constexpr size_t kTransfers = 50;
  size_t started = 0;
  std::vector<HttpResponse> got;
  for (size_t i = 0; i < kTransfers; ++i) {
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
          ++started;
          HttpRequest req;
          req.url = url;
          req.body = "{}";
          got.push_back(co_await http->perform(std::move(req)));
        },
        boost::asio::detached);
  }
  while (started < kTransfers && io.poll_one() > 0) {
  }
  ASSERT_EQ(started, kTransfers);
  http.reset();
  io.run();
  ASSERT_EQ(got.size(), kTransfers);
  for (const HttpResponse& r : got) {
    EXPECT_EQ(r.error_kind, "aborted") << r.error;
    EXPECT_EQ(r.status, 0);
  }
}

TEST(Client, BackoffGrowsAndIsCapped) {
  RetryPolicy p;
  EXPECT_EQ(backoff_delay(p, 0, 0.0).count(), 500);
  EXPECT_EQ(backoff_delay(p, 1, 0.0).count(), 1000);
  EXPECT_EQ(backoff_delay(p, 10, 0.0).count(), 8000);
  EXPECT_EQ(backoff_delay(p, 0, 1.0).count(), 375);
  EXPECT_EQ(retry_after({{"retry-after", "2"}})->count(), 2000);
  EXPECT_EQ(retry_after({{"retry-after-ms", "150"}, {"retry-after", "9"}})->count(), 150);
  EXPECT_FALSE(retry_after({{"retry-after", "soon"}}));
}

}  // namespace
}  // namespace kd::agents
