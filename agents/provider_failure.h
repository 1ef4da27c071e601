// Why a provider gave up on a session, as one of a few kinds a campaign can act on: an outage
// (nothing answers) and an overloaded provider are worth waiting for; a refused key or an
// exhausted spend cap is not, and stops a campaign at once. The kind is decided from what the
// retry loop saw last (its cause, e.g. "retries_exhausted:connect" or
// "http_401:authentication_error", and the error body's message), so the same call also classifies
// a recorded end reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kd::agents {

enum class ProviderFailureKind {
  Outage,       // connection refused, DNS, timeouts, 5xx until the retries ran out
  AuthRefused,  // 401 / 403: the key is wrong, revoked or not allowed the model
  SpendCap,     // 429 that will not pass (no retry-after, quota or billing in the body)
  Overloaded,   // 529 / overloaded / rate limited for longer than the retries allow
  Protocol,     // a request the provider rejects (400, 404) or answers it cannot be read
};

struct ProviderFailure {
  ProviderFailureKind kind = ProviderFailureKind::Protocol;
  std::string cause;   // the retry loop's cause, as in the end reason
  std::string detail;  // the provider's message or the transport error
};

// "outage", "auth_refused", "spend_cap", "overloaded", "protocol".
std::string_view to_string(ProviderFailureKind k);
std::optional<ProviderFailureKind> parse_provider_failure_kind(std::string_view s);

// Classifies a give-up. `cause` is the end reason's provider detail; `detail` the message with
// it (may be empty, e.g. for a reason read back from a transcript).
ProviderFailure classify_provider_failure(std::string cause, std::string detail);

}  // namespace kd::agents
