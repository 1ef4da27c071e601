// The audit rules as one table (docs/audit.md): each rule's id, as policies/audit.json and every
// report spell it, its default severity, what it reads, the corrective action and the section to
// re-read. Code names a rule by its enum value, so a misspelt rule does not compile; the id
// strings exist only in this table.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace kd::audit {

enum class Severity { Fabrication, Violation, Drift, Hygiene };
const char* severity_name(Severity s);  // "FABRICATION", ...

// In report order; SupportedWithoutPass stays last (kRuleCount counts from it).
enum class Rule {
  ChainIntegrity,
  TranscriptTorn,
  WriteOutsideWorktree,
  ReferenceWrite,
  NoPeekRead,
  VerdictLanguage,
  NumbersWithoutReceipt,
  CommitGrammar,
  LoadedLine,
  LedgerVsCommits,
  PlanCoverage,
  StubOrder,
  ReceiptInvalid,
  SandboxViolation,
  WorktreeTampering,
  CandidateScan,
  SupportedWithoutPass,
};
inline constexpr std::size_t kRuleCount = static_cast<std::size_t>(Rule::SupportedWithoutPass) + 1;

struct AuditRule {
  Rule rule;
  std::string_view id;
  Severity default_severity;  // as docs/audit.md gives it; the policy file sets the one used
  bool reads_events;          // false: judged from the file's chain and line framing alone
  std::string_view correct;   // the corrective action
  std::string_view reread;    // the rule's source section
};

// Every rule, indexed by its enum value.
const std::array<AuditRule, kRuleCount>& audit_rules();
const AuditRule& audit_rule(Rule rule);
inline std::string_view rule_id(Rule rule) {
  return audit_rule(rule).id;
}
// The rule an id names, or nullopt for an id no rule has.
std::optional<Rule> rule_by_id(std::string_view id);

}  // namespace kd::audit
