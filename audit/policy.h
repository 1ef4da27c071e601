// The audit policy (`policies/audit.json`): which rules run, at what severity, and the word lists
// the text rules use. Validated at load; a bad policy is an error naming the key.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kd::audit {

enum class Severity { Fabrication, Violation, Drift, Hygiene };
const char* severity_name(Severity s);  // "FABRICATION", ...

struct RulePolicy {
  bool enabled = true;
  Severity severity = Severity::Drift;
};

struct AuditPolicy {
  std::map<std::string, RulePolicy> rules;   // every known rule id, exactly
  std::vector<std::string> verdict_words;    // whole words that grade ("supported", "refuted")
  std::vector<std::string> verdict_context;  // a verdict word counts near one of these
  std::vector<std::string> verdict_markers;  // substrings that always grade ("verdict:")
  std::vector<std::string> commit_other_prefixes;  // non-candidate subjects the process allows
  std::vector<std::string> allowed_write_roots;    // writes outside the worktree that are fine
  std::size_t max_findings_per_rule = 50;          // per file; the rest are counted

  bool enabled(const std::string& rule) const;
};

// The rule ids, in report order.
const std::vector<std::string>& known_rules();

AuditPolicy load_audit_policy(const std::filesystem::path& path);

}  // namespace kd::audit
