// `kdispatch audit` as a library: reads transcripts and run directories, normalizes them to
// events and applies the rules of policies/audit.json (docs/audit.md). Streaming: memory is
// bounded by the longest line plus per-rule state that grows only with distinct paths,
// candidates and receipts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "audit/context.h"
#include "audit/importer.h"
#include "audit/policy.h"

namespace kd::audit {

// The corrective action and the section to re-read are the rule's (audit_rule(rule)).
struct Finding {
  Rule rule = Rule::ChainIntegrity;
  Severity severity = Severity::Drift;
  std::string defect;    // what is wrong, with the evidence quoted
  std::string evidence;  // file:line (or the file) where it shows
};

struct AuditReport {
  std::vector<Finding> findings;
  std::vector<FileStats> files;
  // Keyed by rule id, so reports list them in the order they always have.
  std::map<std::string, std::string> not_checked;   // rule id -> the missing context
  std::map<std::string, std::uint64_t> suppressed;  // rule id -> findings past the per-file cap
  std::map<std::string, std::uint64_t> events;      // event kind -> count
  // What a supervising person decided other than a plain approval (denials, stops, prefixes,
  // notes): information, not findings; a denial here is no sandbox violation.
  struct SupervisorDecision {
    std::string decision;  // denied | stopped | prefix_approved | approved_by_prefix | note
    std::string text;
    std::string evidence;  // file:line
  };
  std::vector<SupervisorDecision> supervision;
};

// Expands run directories (author/ and verifier/ transcripts, outcome.json), plain directories
// (their *.jsonl and *.jsonl.zst files) and Claude Code sessions (their subagent files), then
// audits each file. `flags` wins over what a transcript says about itself. Throws kd::Error for an
// input that does not exist or cannot be read.
AuditReport run_audit(const std::vector<std::filesystem::path>& inputs, const AuditContext& flags,
                      const AuditPolicy& policy);

// 0 clean, 1 only DRIFT/HYGIENE, 2 any VIOLATION or FABRICATION.
int audit_exit_status(const AuditReport& report);

}  // namespace kd::audit
