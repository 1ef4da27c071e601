// The record types of a campaign's journal (docs/dispatcher.md), in pipeline order: written by
// the dispatcher and the verification, folded by `status` and `--resume`, read by the report.
// An experiment is terminal at a verdict; an error record leaves it to be retried.
#pragma once

namespace kd::contract::journal {

// Beside the journal in the run root: the campaign's record of itself (pid, host, heartbeat,
// command line, model, mode, budgets, start and end), written by `kdispatch run`, read by
// `status` and the report.
inline constexpr const char* kCampaignProcessFile = "campaign-process.json";

inline constexpr const char* kDispatched = "dispatched";   // branch, worktree, chip, run_dir, brief
inline constexpr const char* kAuthorTurn = "author_turn";  // turn, tokens, cost
inline constexpr const char* kCommitted = "committed";     // candidate, sha, message
inline constexpr const char* kFinished = "finished";       // end_reason, final sha, head
inline constexpr const char* kVerifyStarted = "verify_started";  // chip, snapshot sha
inline constexpr const char* kReceiptValidated = "receipt_validated";
inline constexpr const char* kVerdict = "verdict";  // verdict, reasons
// A Slurm job of the experiment's chip work (job_id, purpose, dir, result), and its end (job_id,
// state, reason, chip). Not steps: they leave the experiment's phase as it was.
inline constexpr const char* kJobSubmitted = "job_submitted";
inline constexpr const char* kJobFinished = "job_finished";
// Not a step but an end: the infrastructure failed (cause, message). The experiment is retried
// by `kdispatch run --resume` from where it stood: re-authored when no finished record precedes
// the error, else verified again.
inline constexpr const char* kError = "error";

}  // namespace kd::contract::journal
