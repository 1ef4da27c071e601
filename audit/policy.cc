#include "audit/policy.h"

#include <optional>

#include "common/files.h"
#include "common/json_read.h"

namespace kd::audit {

std::array<RulePolicy, kRuleCount> AuditPolicy::default_rules() {
  std::array<RulePolicy, kRuleCount> out;
  for (const auto& r : audit_rules())
    out[static_cast<std::size_t>(r.rule)] = {true, r.default_severity};
  return out;
}

AuditPolicy load_audit_policy(const std::filesystem::path& path) {
  const std::string origin = path.string();
  const nlohmann::json doc = parse_json_document(read_file(path), origin);
  // Messages name a key by its path ("rules.x.enabled"), as the policy's readers know it.
  JsonObjectReader top(doc, origin, FieldNames::Path);
  top.allow_only({"rules", "verdict_words", "verdict_context", "verdict_markers",
                  "commit_other_prefixes", "allowed_write_roots", "max_findings_per_rule"});
  AuditPolicy p;
  JsonObjectReader rules = top.object("rules");
  std::array<bool, kRuleCount> seen{};
  for (const auto& member : rules.raw().items()) {
    const std::string& id = member.key();
    JsonObjectReader rule = rules.object(id);
    std::optional<Rule> known = rule_by_id(id);
    if (!known) rule.error("unknown rule");
    rule.allow_only({"enabled", "severity"});
    const bool enabled = rule.boolean("enabled");
    const std::string severity =
        rule.choice("severity", {"FABRICATION", "VIOLATION", "DRIFT", "HYGIENE"});
    Severity s = Severity::Fabrication;
    for (Severity each :
         {Severity::Fabrication, Severity::Violation, Severity::Drift, Severity::Hygiene})
      if (severity == severity_name(each)) s = each;
    p.rule(*known) = {enabled, s};
    seen[static_cast<std::size_t>(*known)] = true;
  }
  for (const auto& r : audit_rules())
    if (!seen[static_cast<std::size_t>(r.rule)])
      rules.field_error(std::string(r.id), "is missing (every rule needs a switch)");
  p.verdict_words = top.strings("verdict_words");
  p.verdict_context = top.strings("verdict_context");
  p.verdict_markers = top.strings("verdict_markers");
  p.commit_other_prefixes = top.strings("commit_other_prefixes");
  p.allowed_write_roots = top.strings("allowed_write_roots");
  p.max_findings_per_rule = top.count_in("max_findings_per_rule", 1, 1'000'000);
  return p;
}

}  // namespace kd::audit
