// The audit that follows each verdict of a campaign (docs/dispatcher.md): the same rules as
// `kdispatch audit RUN_DIR`, with the wiki context from run.json and the transcript heads
// checked against the journal, so a cheating author does not read as a plain `inconclusive` in
// the morning. The summary and the author box's denial count go into outcome.json.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kd::dispatcher {

struct AuditSummary {
  nlohmann::json record;  // {"exit": N, "findings": {...by severity}, "not_checked": [...], ...}
  std::string line;       // "audit: 1 VIOLATION, 0 FABRICATION (kdispatch audit RUN_DIR)"
  bool violations = false;
};

// Audits the run and records the summary under "audit" and the denial count under
// "sandbox_denials" in <run_dir>/outcome.json. Never throws: an audit that could not run says
// so in its record.
AuditSummary audit_after_verdict(const std::filesystem::path& run_dir);

}  // namespace kd::dispatcher
