// Verdicts and what else an experiment can end in, as types. A verdict is a statement about a
// measured candidate or an author's conduct, decided by fixed rules from a validated receipt;
// everything else an experiment can end in is not a verdict and is never filed as one. The
// table of outcome kinds and verdict rules is in docs/architecture.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kd::contract {

enum class Verdict { Supported, Refuted, Inconclusive, Invalid };

std::string_view to_string(Verdict v);  // "supported", "refuted", "inconclusive", "invalid"
std::optional<Verdict> parse_verdict(std::string_view s);

// How an experiment of a campaign ended.
enum class OutcomeKind {
  Verdict,        // measured (or refused to measure) and decided by the rules
  Refused,        // its brief was refused: the wiki is incomplete
  Error,          // the infrastructure failed (provider, chip, tool, crash): no verdict
  NotDispatched,  // a stop request came before it was dispatched, or before its verifier (the
                  // supervising person stopped its author session)
};

// Why an experiment ended in an error. None of these says anything about the candidate: an
// error is journalled with its cause, retried by `kdispatch run --resume`, never filed.
enum class ErrorCause {
  ProviderOutage,       // the provider did not answer (connection refused, timeouts, 5xx)
  ProviderAuth,         // the provider refused the key (401/403)
  ProviderSpendCap,     // the account's spend cap or quota is exhausted
  ProviderOverloaded,   // overloaded or rate limited for longer than the retries wait
  ProviderProtocol,     // the provider rejected the request or answered unreadably
  BudgetMisconfigured,  // a budget that cannot be enforced (no price for a cost budget)
  VerifyTool,           // the verify command is missing or crashed in its box
  ChipUnavailable,      // no chip could be locked or opened
  Internal,             // anything else: a bug or an environment failure
};

// "provider_outage", "provider_auth", ..., "internal".
std::string_view to_string(ErrorCause c);
std::optional<ErrorCause> parse_error_cause(std::string_view s);
// Spend cap and auth: waiting does not help, so a campaign stops at once.
bool stops_campaign(ErrorCause c);
// Outage and overload: a campaign pauses dispatch and tries again later.
bool pauses_campaign(ErrorCause c);

struct ExperimentOutcome {
  OutcomeKind kind = OutcomeKind::Error;
  Verdict verdict = Verdict::Inconclusive;  // meaningful only for OutcomeKind::Verdict
  ErrorCause cause = ErrorCause::Internal;  // meaningful only for OutcomeKind::Error

  static ExperimentOutcome of(Verdict v) { return {OutcomeKind::Verdict, v}; }
  static ExperimentOutcome of(OutcomeKind k) { return {k, Verdict::Inconclusive}; }
  static ExperimentOutcome error(ErrorCause c) {
    return {OutcomeKind::Error, Verdict::Inconclusive, c};
  }
  bool is_verdict() const { return kind == OutcomeKind::Verdict; }
  bool operator==(const ExperimentOutcome& o) const {
    return kind == o.kind && (kind != OutcomeKind::Verdict || verdict == o.verdict) &&
           (kind != OutcomeKind::Error || cause == o.cause);
  }
};

// The verdict's word, else "refused", "error (<cause>)" or "not dispatched".
std::string to_string(const ExperimentOutcome& o);
// Reads what to_string writes ("error" alone is an internal error).
std::optional<ExperimentOutcome> parse_outcome(std::string_view s);

}  // namespace kd::contract
