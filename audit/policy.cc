#include "audit/policy.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"

namespace kd::audit {

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

const std::vector<std::string>& known_rules() {
  static const std::vector<std::string> ids = {
      "chain_integrity", "transcript_torn",       "write_outside_worktree",  "reference_write",
      "no_peek_read",    "verdict_language",      "numbers_without_receipt", "commit_grammar",
      "loaded_line",     "ledger_vs_commits",     "plan_coverage",           "stub_order",
      "receipt_invalid", "supported_without_pass"};
  return ids;
}

bool AuditPolicy::enabled(const std::string& rule) const {
  auto it = rules.find(rule);
  return it != rules.end() && it->second.enabled;
}

namespace {

std::vector<std::string> string_list(const nlohmann::json& doc, const char* key,
                                     const std::string& origin) {
  auto it = doc.find(key);
  if (it == doc.end()) throw Error(origin + ": missing " + quote(key));
  if (!it->is_array()) throw Error(origin + ": " + quote(key) + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string()) throw Error(origin + ": " + quote(key) + " must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Severity parse_severity(const nlohmann::json& v, const std::string& where) {
  std::string s = v.is_string() ? v.get<std::string>() : "";
  if (s == "FABRICATION") return Severity::Fabrication;
  if (s == "VIOLATION") return Severity::Violation;
  if (s == "DRIFT") return Severity::Drift;
  if (s == "HYGIENE") return Severity::Hygiene;
  throw Error(where + ": severity must be FABRICATION, VIOLATION, DRIFT or HYGIENE");
}

}  // namespace

AuditPolicy load_audit_policy(const std::filesystem::path& path) {
  std::string origin = path.string();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": not JSON: " + e.what());
  }
  if (!doc.is_object()) throw Error(origin + ": the top level must be an object");
  AuditPolicy p;
  auto rules = doc.find("rules");
  if (rules == doc.end() || !rules->is_object()) throw Error(origin + ": missing object \"rules\"");
  for (const auto& [id, spec] : rules->items()) {
    std::string where = origin + ": rules." + id;
    bool known = false;
    for (const auto& k : known_rules())
      known = known || k == id;
    if (!known) throw Error(where + ": unknown rule");
    if (!spec.is_object() || !spec.contains("enabled") || !spec["enabled"].is_boolean() ||
        !spec.contains("severity"))
      throw Error(where + ": needs \"enabled\" (true/false) and \"severity\"");
    p.rules[id] = {spec["enabled"].get<bool>(), parse_severity(spec["severity"], where)};
  }
  for (const auto& k : known_rules())
    if (!p.rules.count(k))
      throw Error(origin + ": rules." + k + " is missing (every rule needs a switch)");
  p.verdict_words = string_list(doc, "verdict_words", origin);
  p.verdict_context = string_list(doc, "verdict_context", origin);
  p.verdict_markers = string_list(doc, "verdict_markers", origin);
  p.commit_other_prefixes = string_list(doc, "commit_other_prefixes", origin);
  p.allowed_write_roots = string_list(doc, "allowed_write_roots", origin);
  auto max = doc.find("max_findings_per_rule");
  if (max == doc.end() || !max->is_number_unsigned() || max->get<std::size_t>() == 0)
    throw Error(origin + ": \"max_findings_per_rule\" must be a positive integer");
  p.max_findings_per_rule = max->get<std::size_t>();
  return p;
}

}  // namespace kd::audit
