// The shared rate limiter: the provider's headers pace every request, a 429 freezes everyone
// for its retry-after and cuts the requests in flight, a spend-limit answer stops every
// session; and many real sessions sharing it stay under the fake server's bucket.
#include "agents/rate_limiter.h"

#include <gtest/gtest.h>

#include <atomic>

#include "agents/session.h"
#include "agents/tools.h"
#include "common/policy_path.h"
#include "common/time.h"
#include "tests/agents/test_util.h"
#include "tests/support/process.h"

namespace kd::agents {
namespace {

using Clock = std::chrono::steady_clock;
using Headers = std::map<std::string, std::string>;

// Seconds one acquire() waits.
double timed_acquire(boost::asio::io_context& io, RateLimiter& l, bool* ok = nullptr) {
  auto t0 = Clock::now();
  bool got = test::run_sync(io, l.acquire(10));
  if (ok) *ok = got;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void answer(RateLimiter& l, int status, const Headers& h, std::string_view body = "") {
  RateLimiter::Answer a;
  a.status = status;
  a.headers = &h;
  a.body = body;
  l.release(a);
}

std::string in_ms(long ms) {
  long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  return format_rfc3339_ms(now + ms);
}

TEST(RateLimiter, TheProvidersHeadersPaceTheNextRequests) {
  boost::asio::io_context io;
  RateLimiter l("anthropic");
  EXPECT_LT(timed_acquire(io, l), 0.05) << "nothing known yet";
  // 10 requests a second, none left: the bucket is full again in a second.
  answer(l, 200,
         {{"anthropic-ratelimit-requests-limit", "10"},
          {"anthropic-ratelimit-requests-remaining", "0"},
          {"anthropic-ratelimit-requests-reset", in_ms(1000)}});
  double w = timed_acquire(io, l);
  EXPECT_GT(w, 0.07);
  EXPECT_LT(w, 0.5);
  answer(l, 200, {});
  w = timed_acquire(io, l);
  EXPECT_GT(w, 0.07) << "each request waits its own tenth of a second";
  answer(l, 200, {});
}

TEST(RateLimiter, A429FreezesEveryoneForItsRetryAfterAndCutsTheRequestsInFlight) {
  boost::asio::io_context io;
  RateLimiter l("openai");
  timed_acquire(io, l);
  EXPECT_EQ(l.stats().in_flight_cap, 64);
  answer(l, 429, {{"retry-after", "1"}}, R"({"error":{"code":"rate_limit_exceeded"}})");
  EXPECT_EQ(l.stats().in_flight_cap, 51);
  EXPECT_EQ(l.stats().rate_limited, 1);
  EXPECT_GT(timed_acquire(io, l), 0.9);
  answer(l, 429, {{"retry-after-ms", "10"}});
  EXPECT_EQ(l.stats().in_flight_cap, 51) << "one cut per episode";
  timed_acquire(io, l);
  answer(l, 200, {});
}

// A session that waited for a slot and ended (its io_context gone with the wait suspended, or
// its wait timed out) leaves nothing in the queue: the next release must not wake it on an
// executor that no longer exists (seen as a crash in a campaign, under ASan a stack overflow read).
TEST(RateLimiter, AWaitThatEndedLeavesTheQueue) {
  RateLimiter l("anthropic");
  boost::asio::io_context first;
  ASSERT_TRUE(test::run_sync(first, l.acquire(10)));  // the first request goes alone
  {
    boost::asio::io_context gone;
    bool got = false;
    boost::asio::co_spawn(
        gone, [&]() -> boost::asio::awaitable<void> { got = co_await l.acquire(10); },
        boost::asio::detached);
    // Past the wait's one-second timeout: it times out, queues again and is still waiting.
    gone.run_for(std::chrono::milliseconds(1300));
    EXPECT_FALSE(got);
    EXPECT_EQ(l.stats().waiting, 1) << "a wait that timed out is not left behind";
  }
  EXPECT_EQ(l.stats().waiting, 0) << "a wait destroyed with its io_context leaves the queue";
  answer(l, 200, {});  // wakes no one, touches no dead executor
  EXPECT_LT(timed_acquire(first, l), 0.05);
  answer(l, 200, {});
}

TEST(RateLimiter, ASpendLimitStopsEverySessionSharingIt) {
  EXPECT_TRUE(is_spend_limit_answer(
      "anthropic", 429, {{"retry-after", "5"}},
      R"({"type":"error","error":{"type":"rate_limit_error","details":{"error_code":"enforced_spend_limit_reached"}}})"));
  EXPECT_TRUE(
      is_spend_limit_answer("anthropic", 429, {}, R"({"error":{"type":"rate_limit_error"}})"))
      << "Anthropic's 429 without retry-after";
  EXPECT_TRUE(is_spend_limit_answer(
      "openai", 429, {}, R"({"error":{"type":"insufficient_quota","code":"insufficient_quota"}})"));
  EXPECT_FALSE(
      is_spend_limit_answer("openai", 429, {}, R"({"error":{"code":"rate_limit_exceeded"}})"));
  EXPECT_FALSE(is_spend_limit_answer("anthropic", 429, {{"retry-after", "2"}}, "{}"));
  EXPECT_FALSE(is_spend_limit_answer("anthropic", 529, {}, "{}"));

  boost::asio::io_context io;
  RateLimiter l("anthropic");
  bool ok = false;
  timed_acquire(io, l, &ok);
  ASSERT_TRUE(ok);
  answer(l, 429, {}, R"({"error":{"type":"rate_limit_error"}})");
  EXPECT_TRUE(l.stats().spend_limited);
  timed_acquire(io, l, &ok);
  EXPECT_FALSE(ok) << "nothing more is sent";
}

TEST(RateLimiter, SessionsSharingItStayUnderTheBucket) {
  FakeServer server(FakeScript::parse(
      R"({"emulate":{"requests_per_s":20,"burst":5},"turns":[{"text":"a","tool_calls":[{"name":"list_dir","input":{"path":"."}}]},{"text":"b","tool_calls":[{"name":"list_dir","input":{"path":"."}}]},{"text":"c","tool_calls":[{"name":"list_dir","input":{"path":"."}}]}]})",
      "s"));
  ModelConfig mc;
  mc.provider = "anthropic";
  mc.model = "claude-sonnet-4-5";
  mc.base_url = server.base_url();
  ModelHandle h = open_model(mc, ProvidersPolicy::load(policy_file("providers.json")));
  struct Host : ToolHost {
    ToolOutcome call(const ToolCall&) override { return {"a\nb\n"}; }
  } host;
  kd::test::TempDir tmp;
  boost::asio::io_context io;
  HttpClient http(io.get_executor());
  boost::asio::thread_pool pool(1);
  std::atomic<int> ok{0};
  const int sessions = 12;
  auto t0 = Clock::now();
  for (int i = 0; i < sessions; ++i) {
    boost::asio::co_spawn(
        io,
        [&, i]() -> boost::asio::awaitable<void> {
          SessionConfig cfg;
          cfg.session_id = "s" + std::to_string(i);
          cfg.system_prompt = "brief";
          cfg.first_user_message = "go " + std::to_string(i);
          cfg.tools = author_tools();
          cfg.budgets.max_turns = 3;
          cfg.budgets.max_cost_usd = 0;
          cfg.transcript_dir = std::filesystem::path(tmp.path()) / std::to_string(i);
          SessionResult r = co_await run_session(cfg, host, http, h, pool);
          if (to_string(r.end_reason) == "budget:turns") ++ok;
        },
        boost::asio::detached);
  }
  io.run();
  pool.join();
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(ok, sessions);
  FakeServer::Billing b = server.billing();
  EXPECT_EQ(b.requests, sessions * 3);
  // Unpaced, the 12 sessions would get 7 refusals at once and more on every retry (tens in all);
  // a busy machine that reads the headers late still leaves the limiter a few per session.
  EXPECT_LE(b.rate_limited, 2 * sessions) << "the limiter learned the bucket from the headers";
  // 36 requests from a bucket of 5 refilled at 20/s take at least 1.5 s.
  EXPECT_GT(wall, 1.4);
}

}  // namespace
}  // namespace kd::agents
