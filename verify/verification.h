// One verification of an ended author phase, phase by phase: the candidate the finish names,
// its frozen snapshot (what the candidate may see), the measurement on a chip the pipeline
// provides, the receipt's check, an optional reviewer of the receipt, then the verdict by the
// fixed rules with its outcome.json and filing proposal. The measurement is kdispatch's own
// (verify/measuring_parent.h: reference and candidate workers in separate boxes, the parent's
// clock, a signed receipt) unless an external verify tool is named; then the tool's receipt is
// cross-checked by the parent's own measurement. The pipeline (dispatcher/verify_run.h) supplies
// the chip and the journal; nothing here picks a chip, locks one or runs a model.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "briefs/brief.h"
#include "contract/run_record.h"
#include "sandbox/box.h"
#include "verify/measure_job.h"
#include "verify/verdict_rules.h"

namespace kd::verify {

// Chip work, all of it data so that a Slurm node can do it as well as this host: the box to open
// (its chip left unset) and the command to run in it (none when request.argv is empty), then,
// when `measure` is set, the measuring parent's workers on the same chip.
struct ChipJob {
  sandbox::BoxSpec spec;
  sandbox::RunRequest request;
  std::optional<MeasureJob> measure;
};

struct ChipRun {
  std::string chip;           // the chip's id
  sandbox::RunResult result;  // the box command's; exit 0 when there was none
  std::optional<ParentMeasurement> parent;
};

// Does `job` on `chip`, which the caller holds: the command's box is closed before the parent
// measures, so nothing the command left running (a thread resealing a receipt) outlives it.
ChipRun run_chip_job_on(const ChipJob& job, const contract::Chip& chip);

// Runs a job on a chip the pipeline chooses and holds for the whole run; calls `on_start` with
// the chip's id once it is held and before the command starts.
using ChipRunner = std::function<ChipRun(const ChipJob& job,
                                         const std::function<void(const std::string&)>& on_start)>;

// Appends a journal record (type, data) for this experiment.
using Recorder = std::function<void(const char* type, nlohmann::json data)>;

// What an optional reviewer of a valid receipt (the LLM verifier) returns: its sections replace
// the ones written from the receipt in the filing; the verdict stays the rules'.
struct Review {
  nlohmann::json record;                // end reason, transcript head, accepted
  std::optional<std::string> sections;  // accepted report, rendered
  std::string transcript_head;
};
struct ReviewInput {
  std::filesystem::path snapshot, reference, candidate, receipt, artifact_dir;
  std::string receipt_rel;  // wiki-relative
  std::string chip;
  std::string mode;
};
using Reviewer = std::function<Review(const ReviewInput&)>;

struct VerificationInput {
  std::filesystem::path run_dir;
  contract::RunRecord run;
  std::optional<nlohmann::json> finish;  // author/finish.json, when the author finished
  briefs::Brief brief;
  std::string mode = "full";              // screen | full
  std::optional<std::string> verify_cmd;  // else the binding's verify_command, else kgate
  std::vector<std::filesystem::path> tool_dirs;
  // The dispatcher's receipt key (contract/receipt_signature.h): the parent signs with it and
  // the check requires its signature. Empty: receipts are sealed, not signed.
  std::string signing_key;
  // The worker program of the measuring parent; empty: workers_dir()/kd-pyworker.
  std::filesystem::path worker_program;
  // The receipt record a previous attempt validated (journal): reused when it is of this very
  // candidate and the file is unchanged, so a resumed verification measures nothing twice.
  std::optional<nlohmann::json> prior;
  // Where the chip work runs, when the pipeline has more to say than the chip's id (under Slurm:
  // the scheduler and the author's last chip): into the receipt's and outcome's "environment",
  // with the verifier's chip added.
  nlohmann::json environment;
};

struct VerificationResult {
  Decision decision;
  nlohmann::json outcome;  // as written to <run>/outcome.json
};

// Runs the verification and writes outcome.json and filing.md into the run directory. Throws
// kd::Error for environment failures (git, a layer of the box); everything the author or the
// verify command did wrong ends in a verdict with its reasons.
VerificationResult run_verification(const VerificationInput& input, const ChipRunner& chips,
                                    const Recorder& record, const Reviewer& reviewer = {});

}  // namespace kd::verify
