// The audit policy (`policies/audit.json`): which rules run, at what severity, and the word lists
// the text rules use. Validated at load; a bad policy is an error naming the key.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "audit/rules.h"

namespace kd::audit {

struct RulePolicy {
  bool enabled = true;
  Severity severity = Severity::Drift;
};

struct AuditPolicy {
  // By rule; each rule on at its default severity until a policy file says otherwise.
  std::array<RulePolicy, kRuleCount> rules = default_rules();
  std::vector<std::string> verdict_words;    // whole words that grade ("supported", "refuted")
  std::vector<std::string> verdict_context;  // a verdict word counts near one of these
  std::vector<std::string> verdict_markers;  // substrings that always grade ("verdict:")
  std::vector<std::string> commit_other_prefixes;  // non-candidate subjects the process allows
  std::vector<std::string> allowed_write_roots;    // writes outside the worktree that are fine
  std::size_t max_findings_per_rule = 50;          // per file; the rest are counted

  RulePolicy& rule(Rule r) { return rules[static_cast<std::size_t>(r)]; }
  const RulePolicy& rule(Rule r) const { return rules[static_cast<std::size_t>(r)]; }
  bool enabled(Rule r) const { return rule(r).enabled; }

  static std::array<RulePolicy, kRuleCount> default_rules();
};

// Every rule must have its switch and severity in the file, by id; an unknown id is refused.
AuditPolicy load_audit_policy(const std::filesystem::path& path);

}  // namespace kd::audit
