#include "dispatcher/audit_after_verdict.h"

#include <map>

#include "audit/auditor.h"
#include "audit/rules.h"
#include "audit/run_dirs.h"
#include "common/files.h"
#include "common/policy_path.h"

namespace kd::dispatcher {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Records of the box's refusals in a transcript (its `violation` records).
long denials(const fs::path& transcript) {
  if (!fs::is_regular_file(transcript)) return 0;
  const std::string text = read_file(transcript);
  long n = 0;
  for (size_t p = text.find("\"type\":\"violation\""); p != std::string::npos;
       p = text.find("\"type\":\"violation\"", p + 1))
    ++n;
  return n;
}

}  // namespace

AuditSummary audit_after_verdict(const fs::path& run_dir) {
  AuditSummary s;
  try {
    std::string why;
    audit::AuditContext ctx;
    if (auto c = audit::context_from_run(run_dir, why)) ctx = *c;
    audit::AuditReport report =
        audit::run_audit({run_dir}, ctx, audit::load_audit_policy(policy_file("audit.json")));
    for (auto& f : audit::transcript_head_findings(run_dir))
      report.findings.push_back(std::move(f));
    if (!why.empty()) report.not_checked.emplace("wiki-context", why);
    std::map<std::string, int> by_severity = {
        {"FABRICATION", 0}, {"VIOLATION", 0}, {"DRIFT", 0}, {"HYGIENE", 0}};
    json findings = json::array();
    for (const auto& f : report.findings) {
      ++by_severity[audit::severity_name(f.severity)];
      findings.push_back({{"rule", std::string(audit::rule_id(f.rule))},
                          {"severity", audit::severity_name(f.severity)},
                          {"defect", f.defect},
                          {"evidence", f.evidence}});
    }
    s.record = {{"exit", audit::audit_exit_status(report)},
                {"by_severity", by_severity},
                {"findings", findings},
                {"not_checked", report.not_checked}};
    s.violations = by_severity["VIOLATION"] + by_severity["FABRICATION"] > 0;
    s.line = "audit: " + std::to_string(by_severity["FABRICATION"]) + " FABRICATION, " +
             std::to_string(by_severity["VIOLATION"]) + " VIOLATION, " +
             std::to_string(by_severity["DRIFT"] + by_severity["HYGIENE"]) +
             " advisory (kdispatch audit " + run_dir.string() + ")";
  } catch (const std::exception& e) {
    s.record = {{"error", std::string("the audit could not run: ") + e.what()}};
    s.line = "audit: could not run (" + std::string(e.what()) + ")";
  }
  const fs::path outcome = run_dir / "outcome.json";
  try {
    json o = json::parse(read_file(outcome));
    o["audit"] = s.record;
    o["sandbox_denials"] = denials(run_dir / "author/transcript.jsonl");
    write_file_atomic(outcome, o.dump(2) + "\n");
  } catch (const std::exception& e) {
    s.line += "; not recorded in outcome.json: " + std::string(e.what());
  }
  return s;
}

}  // namespace kd::dispatcher
