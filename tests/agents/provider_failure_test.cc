// The classification of a provider's give-up (agents/provider_failure.h), from the causes the
// retry loop writes, and from a real give-up against the fake server.
#include "agents/provider_failure.h"

#include <gtest/gtest.h>

#include "agents/llm_client.h"

namespace kd::agents {
namespace {

using K = ProviderFailureKind;

K kind(const std::string& cause, const std::string& detail = "") {
  return classify_provider_failure(cause, detail).kind;
}

TEST(ProviderFailure, ClassifiesEachCause) {
  EXPECT_EQ(kind("retries_exhausted:connect", "Couldn't connect to server"), K::Outage);
  EXPECT_EQ(kind("retries_exhausted:timeout_first_byte"), K::Outage);
  EXPECT_EQ(kind("retries_exhausted:http_502:api_error"), K::Outage);
  EXPECT_EQ(kind("retries_exhausted:transport"), K::Outage);
  EXPECT_EQ(kind("http_401:authentication_error", "invalid x-api-key"), K::AuthRefused);
  EXPECT_EQ(kind("http_403:permission_error"), K::AuthRefused);
  // Anthropic's spend cap: a 429 the client would not retry (no retry-after).
  EXPECT_EQ(kind("http_429:rate_limit_error", "rate limited"), K::SpendCap);
  EXPECT_EQ(kind("http_429:insufficient_quota"), K::SpendCap);
  EXPECT_EQ(kind("http_400:invalid_request_error",
                 "You have reached your specified API usage limits: enforced spend limit"),
            K::SpendCap);
  EXPECT_EQ(kind("http_402:billing_error"), K::SpendCap);
  // A 429 that kept coming with a retry-after is a rate limit, not a cap.
  EXPECT_EQ(kind("retries_exhausted:http_429:rate_limit_error"), K::Overloaded);
  EXPECT_EQ(kind("retries_exhausted:http_529:overloaded_error"), K::Overloaded);
  EXPECT_EQ(kind("retries_exhausted:error_event:overloaded_error"), K::Overloaded);
  EXPECT_EQ(kind("retry_after_too_long:http_429:rate_limit_error"), K::Overloaded);
  EXPECT_EQ(kind("http_400:invalid_request_error", "max_tokens too large"), K::Protocol);
  EXPECT_EQ(kind("http_404:not_found_error"), K::Protocol);
  EXPECT_EQ(kind("retries_exhausted:malformed_stream"), K::Protocol);
}

TEST(ProviderFailure, NamesRoundTrip) {
  for (K k : {K::Outage, K::AuthRefused, K::SpendCap, K::Overloaded, K::Protocol})
    EXPECT_EQ(parse_provider_failure_kind(to_string(k)), k);
  EXPECT_FALSE(parse_provider_failure_kind("down"));
}

TEST(ProviderFailure, GaveUpCarriesItsClassOnlyForTheProvider) {
  ProviderGaveUp auth(contract::EndReason::provider("http_401:authentication_error"), "bad key");
  ASSERT_TRUE(auth.failure());
  EXPECT_EQ(auth.failure()->kind, K::AuthRefused);
  EXPECT_EQ(auth.failure()->detail, "bad key");
  ProviderGaveUp wall(contract::EndReason::budget("wall_time"), "no time left to retry");
  EXPECT_FALSE(wall.failure());
}

}  // namespace
}  // namespace kd::agents
