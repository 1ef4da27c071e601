#include "audit/rules.h"

namespace kd::audit {
namespace {

using S = Severity;

// The correct/reread texts point at the wiki's process documents, where each rule comes from.
constexpr std::array<AuditRule, kRuleCount> kRules = {{
    {Rule::ChainIntegrity, "chain_integrity", S::Fabrication, false,
     "treat the transcript as untrusted; recover the original from the run's backup and find who "
     "edited it",
     "docs/transcripts.md § The chain"},
    {Rule::TranscriptTorn, "transcript_torn", S::Hygiene, false,
     "the session was cut mid-write; audit what is there and note the gap",
     "docs/transcripts.md § The chain"},
    {Rule::WriteOutsideWorktree, "write_outside_worktree", S::Violation, true,
     "revert the write and keep every edit inside the family worktree",
     "wiki/kernel_experiments/program.md § What you CANNOT do"},
    {Rule::ReferenceWrite, "reference_write", S::Violation, true,
     "restore the reference module from the integration branch; the parity oracle is never edited",
     "wiki/kernel_experiments/program.md § What you CANNOT do"},
    {Rule::NoPeekRead, "no_peek_read", S::Violation, true,
     "void the capability-eval result: the author saw a no-peek path",
     ".claude/skills/author-kernel/SKILL.md § Before authoring (activity)"},
    {Rule::VerdictLanguage, "verdict_language", S::Violation, true,
     "strip verdict words from author output; only the master assigns verdicts, from receipts",
     "wiki/kernel_experiments/program.md § Invariants (Roles)"},
    {Rule::NumbersWithoutReceipt, "numbers_without_receipt", S::Drift, true,
     "cite the saved kgate receipt the number comes from, or drop the number",
     ".claude/skills/author-kernel/SKILL.md § Output contract (receipt column)"},
    {Rule::CommitGrammar, "commit_grammar", S::Drift, true,
     "reword the commit as candN(<family> vNNN): <what> — <signal>",
     "wiki/kernel_experiments/program.md § Discipline (commit grammar)"},
    {Rule::LoadedLine, "loaded_line", S::Drift, true,
     "read BRIEFS.md, concepts/pallas-kernel.md and the class page, then add the loaded: line "
     "first",
     ".claude/agents/process-auditor.md § Kernel checks (5)"},
    {Rule::LedgerVsCommits, "ledger_vs_commits", S::Drift, true,
     "give every ledger row its candN commit and every candN commit its ledger row",
     ".claude/agents/process-auditor.md § Kernel checks (2)"},
    {Rule::PlanCoverage, "plan_coverage", S::Drift, true,
     "run the plan item or record it as abandoned with a reason before finishing",
     "wiki/kernel_experiments/program.md § Stop rule"},
    {Rule::StubOrder, "stub_order", S::Violation, true,
     "file a new stub and re-run: candidates must come after the pre-registered stub",
     "wiki/kernel_experiments/program.md § Invariants (Stub-first)"},
    {Rule::ReceiptInvalid, "receipt_invalid", S::Fabrication, true,
     "cite the receipt kgate actually wrote; an edited or missing receipt voids the row",
     ".claude/agents/process-auditor.md § Kernel checks (1)"},
    {Rule::SandboxViolation, "sandbox_violation", S::Violation, true,
     "find what the author tried the box refused (the denial names layer, call and path); the "
     "attempt itself is the finding, whatever the box kept it from",
     "docs/sandbox.md § What is observed and reported as a denial"},
    {Rule::WorktreeTampering, "worktree_tampering", S::Violation, false,
     "restore the worktree from its branch: links, special files and moved directories the branch "
     "does not commit are attempts on the host's view of the tree",
     "docs/dispatcher.md § What an author leaves behind"},
    {Rule::CandidateScan, "candidate_scan", S::Drift, true,
     "explain each pattern or remove it: a candidate that patches timers, reaches into other "
     "modules or frames, starts threads or touches files is verified at most inconclusive",
     "docs/audit.md § candidate_scan"},
    {Rule::SupportedWithoutPass, "supported_without_pass", S::Violation, true,
     "relabel: supported needs a full PASS receipt that fired and meets the bar",
     ".claude/agents/process-auditor.md § Kernel checks (6)"},
}};

constexpr bool indexed_by_enum() {
  for (std::size_t i = 0; i < kRules.size(); ++i)
    if (static_cast<std::size_t>(kRules[i].rule) != i) return false;
  return true;
}
static_assert(indexed_by_enum(), "kRules lists every Rule once, in the enum's order");

}  // namespace

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Fabrication:
      return "FABRICATION";
    case Severity::Violation:
      return "VIOLATION";
    case Severity::Drift:
      return "DRIFT";
    case Severity::Hygiene:
      return "HYGIENE";
  }
  return "?";
}

const std::array<AuditRule, kRuleCount>& audit_rules() {
  return kRules;
}

const AuditRule& audit_rule(Rule rule) {
  return kRules[static_cast<std::size_t>(rule)];
}

std::optional<Rule> rule_by_id(std::string_view id) {
  for (const auto& r : kRules)
    if (r.id == id) return r.rule;
  return std::nullopt;
}

}  // namespace kd::audit
