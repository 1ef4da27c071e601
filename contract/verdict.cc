#include "contract/verdict.h"

namespace kd::contract {
namespace {

constexpr std::string_view kVerdicts[] = {"supported", "refuted", "inconclusive", "invalid"};
constexpr std::string_view kOtherKinds[] = {"", "refused", "error", "not dispatched"};

}  // namespace

std::string_view to_string(Verdict v) {
  return kVerdicts[static_cast<int>(v)];
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  for (int i = 0; i < 4; ++i)
    if (kVerdicts[i] == s) return static_cast<Verdict>(i);
  return std::nullopt;
}

std::string to_string(const ExperimentOutcome& o) {
  if (o.is_verdict()) return std::string(to_string(o.verdict));
  return std::string(kOtherKinds[static_cast<int>(o.kind)]);
}

std::optional<ExperimentOutcome> parse_outcome(std::string_view s) {
  if (auto v = parse_verdict(s)) return ExperimentOutcome::of(*v);
  for (int i = 1; i < 4; ++i)
    if (kOtherKinds[i] == s) return ExperimentOutcome::of(static_cast<OutcomeKind>(i));
  return std::nullopt;
}

}  // namespace kd::contract
