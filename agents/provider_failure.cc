#include "agents/provider_failure.h"

#include "common/text.h"

namespace kd::agents {
namespace {

constexpr std::string_view kNames[] = {"outage", "auth_refused", "spend_cap", "overloaded",
                                       "protocol"};

bool contains(const std::string& hay, std::string_view needle) {
  return hay.find(needle) != std::string::npos;
}

// The HTTP status a cause names ("http_429:rate_limit_error" -> 429), else 0.
int status_of(std::string_view cause) {
  if (!starts_with(cause, "http_") || cause.size() < 8) return 0;
  int s = 0;
  for (char c : cause.substr(5, 3)) {
    if (c < '0' || c > '9') return 0;
    s = s * 10 + (c - '0');
  }
  return s;
}

}  // namespace

std::string_view to_string(ProviderFailureKind k) {
  return kNames[static_cast<int>(k)];
}

std::optional<ProviderFailureKind> parse_provider_failure_kind(std::string_view s) {
  for (int i = 0; i < 5; ++i)
    if (kNames[i] == s) return static_cast<ProviderFailureKind>(i);
  return std::nullopt;
}

ProviderFailure classify_provider_failure(std::string cause, std::string detail) {
  using K = ProviderFailureKind;
  ProviderFailure f{K::Protocol, std::move(cause), std::move(detail)};
  const std::string text = lower(f.cause + " " + f.detail);
  // A give-up after the retries names what failed last; a give-up at once names it bare.
  constexpr std::string_view kExhausted = "retries_exhausted:";
  constexpr std::string_view kTooLong = "retry_after_too_long:";
  const bool exhausted = starts_with(f.cause, kExhausted);
  const std::string last = exhausted                        ? f.cause.substr(kExhausted.size())
                           : starts_with(f.cause, kTooLong) ? f.cause.substr(kTooLong.size())
                                                            : f.cause;
  const int status = status_of(last);
  if (contains(text, "insufficient_quota") || contains(text, "spend limit") ||
      contains(text, "spend_limit") || contains(text, "spending limit") ||
      contains(text, "billing") || contains(text, "credit balance") ||
      contains(text, "spend_cap")) {
    f.kind = K::SpendCap;
  } else if (status == 401 || status == 403 || contains(text, "authentication_error") ||
             contains(text, "permission_error")) {
    f.kind = K::AuthRefused;
  } else if (status == 429 && !exhausted && !starts_with(f.cause, kTooLong)) {
    f.kind = K::SpendCap;  // refused without a retry-after: it will not pass by waiting
  } else if (status == 429 || status == 529 || contains(text, "overloaded") ||
             starts_with(f.cause, kTooLong)) {
    f.kind = K::Overloaded;
  } else if (last == "connect" || last == "transport" || starts_with(last, "timeout") ||
             (status >= 500 && status < 600) || status == 408 || last == "truncated_stream") {
    f.kind = K::Outage;
  }
  return f;
}

}  // namespace kd::agents
