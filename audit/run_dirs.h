// Auditing what `kdispatch run` left (docs/audit.md): the experiment runs under a path (a run
// directory, a campaign directory, a run root or a demo root), each audited with the wiki
// context its run.json names, and the cross-check of every transcript's head against the heads
// the journal, run.json and outcome.json recorded: a transcript cut and resealed verifies as a
// chain, but its head is no longer the one the dispatcher saw.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "audit/auditor.h"
#include "audit/context.h"

namespace kd::audit {

// Experiment run directories (holding run.json) at or below `path`, a few levels deep, sorted;
// empty when `path` holds none (a transcript, a folder of transcripts).
std::vector<std::filesystem::path> experiment_runs(const std::filesystem::path& path);

// The context of one run from its run.json and the wiki it names; nullopt with `why` set when
// the wiki no longer gives it (the rules that need it then say "not checked" and why).
std::optional<AuditContext> context_from_run(const std::filesystem::path& run_dir,
                                             std::string& why);

// One finding (ChainIntegrity, a violation) for each recorded head that differs from the
// transcript's chain head: run.json's and outcome.json's author head, the journal's last head
// of the experiment (its finished or error record), outcome.json's verifier head.
std::vector<Finding> transcript_head_findings(const std::filesystem::path& run_dir);

// Adds `part` to `into`: findings, files, events and suppressions summed, not-checked reasons
// kept (the first reason of each rule).
void merge_report(AuditReport& into, AuditReport part);

}  // namespace kd::audit
