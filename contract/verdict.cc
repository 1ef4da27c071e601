#include "contract/verdict.h"

namespace kd::contract {
namespace {

constexpr std::string_view kVerdicts[] = {"supported", "refuted", "inconclusive", "invalid"};
constexpr std::string_view kOtherKinds[] = {"", "refused", "error", "not dispatched"};
constexpr std::string_view kCauses[] = {
    "provider_outage",     "provider_auth",     "provider_spend_cap",
    "provider_overloaded", "provider_protocol", "budget_misconfigured",
    "verify_tool",         "chip_unavailable",  "internal"};
constexpr int kCauseCount = sizeof kCauses / sizeof kCauses[0];

}  // namespace

std::string_view to_string(Verdict v) {
  return kVerdicts[static_cast<int>(v)];
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  for (int i = 0; i < 4; ++i)
    if (kVerdicts[i] == s) return static_cast<Verdict>(i);
  return std::nullopt;
}

std::string_view to_string(ErrorCause c) {
  return kCauses[static_cast<int>(c)];
}

std::optional<ErrorCause> parse_error_cause(std::string_view s) {
  for (int i = 0; i < kCauseCount; ++i)
    if (kCauses[i] == s) return static_cast<ErrorCause>(i);
  return std::nullopt;
}

bool stops_campaign(ErrorCause c) {
  return c == ErrorCause::ProviderAuth || c == ErrorCause::ProviderSpendCap ||
         c == ErrorCause::BudgetMisconfigured;
}

bool pauses_campaign(ErrorCause c) {
  return c == ErrorCause::ProviderOutage || c == ErrorCause::ProviderOverloaded;
}

std::string to_string(const ExperimentOutcome& o) {
  if (o.is_verdict()) return std::string(to_string(o.verdict));
  if (o.kind == OutcomeKind::Error) return "error (" + std::string(to_string(o.cause)) + ")";
  return std::string(kOtherKinds[static_cast<int>(o.kind)]);
}

std::optional<ExperimentOutcome> parse_outcome(std::string_view s) {
  if (auto v = parse_verdict(s)) return ExperimentOutcome::of(*v);
  if (s.starts_with("error (") && s.ends_with(")")) {
    if (auto c = parse_error_cause(s.substr(7, s.size() - 8))) return ExperimentOutcome::error(*c);
    return std::nullopt;
  }
  for (int i = 1; i < 4; ++i)
    if (kOtherKinds[i] == s) return ExperimentOutcome::of(static_cast<OutcomeKind>(i));
  return std::nullopt;
}

}  // namespace kd::contract
