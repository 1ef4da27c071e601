// Verdicts and what else an experiment can end in, as types. A verdict is a statement about a
// measured candidate or an author's conduct, decided by fixed rules from a validated receipt;
// everything else an experiment can end in is not a verdict and is never filed as one.
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
  NotDispatched,  // a stop request came before it was dispatched
};

struct ExperimentOutcome {
  OutcomeKind kind = OutcomeKind::Error;
  Verdict verdict = Verdict::Inconclusive;  // meaningful only for OutcomeKind::Verdict

  static ExperimentOutcome of(Verdict v) { return {OutcomeKind::Verdict, v}; }
  static ExperimentOutcome of(OutcomeKind k) { return {k, Verdict::Inconclusive}; }
  bool is_verdict() const { return kind == OutcomeKind::Verdict; }
  bool operator==(const ExperimentOutcome& o) const {
    return kind == o.kind && (kind != OutcomeKind::Verdict || verdict == o.verdict);
  }
};

// The verdict's word, else "refused", "error" or "not dispatched".
std::string to_string(const ExperimentOutcome& o);
std::optional<ExperimentOutcome> parse_outcome(std::string_view s);

}  // namespace kd::contract
