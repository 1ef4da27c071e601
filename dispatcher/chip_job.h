// A chip job on shared storage (docs/slurm.md): the file the dispatcher writes into the run
// directory for one piece of chip work (a run_on_chip command or a verification's measurement),
// which `kdispatch-full chip-job FILE` does on a Slurm node inside the same box as locally, and
// the result file it writes beside it. The job file carries no secret: a box's environment is
// its profile's plus the chip's.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "verify/verification.h"

namespace kd::dispatcher {

struct ChipJobFile {
  std::string experiment;  // <slug>/vNNN
  std::string purpose;     // "run_on_chip" | "verify"
  verify::ChipJob job;
  // The chip as the node learns it: Slurm's index (SLURM_STEP_GPUS, SLURM_JOB_GPUS, else this
  // variable as a TaskProlog exports it) becomes this variable in the box, and "{index}" in
  // `devices` the chip's device nodes.
  std::string chip_env;
  std::string chip_kind = "tpu";
  std::vector<std::string> devices;
  // A job given two chips uses the one that is not this ("<node>:<index>"): the author's last.
  std::string avoid_chip;
  // A one-chip try of a verification: given only `avoid_chip`, the job does no work and says so
  // (ChipJobResult::declined), then keeps the chip until `hold_file` exists or `hold_at_most_s`
  // has passed, so that Slurm cannot give the same chip to the dispatcher's next try.
  bool decline_avoided = false;
  std::filesystem::path hold_file;
  double hold_at_most_s = 0;
  // The hold files of earlier declined tries of the same work, created as this job starts: they
  // give their chips back once this one has its own.
  std::vector<std::filesystem::path> releases;
  // The shared-storage check of a run's first job: the file must hold the token.
  std::optional<std::filesystem::path> marker;
  std::string marker_token;
  std::filesystem::path result;  // written atomically by the node
};

nlohmann::json chip_job_json(const ChipJobFile& f);
ChipJobFile chip_job_from_json(const nlohmann::json& j, const std::string& where);

// What the node reports. `error` is a failure of the job itself (a chip it cannot name, storage
// it does not see): no run happened.
struct ChipJobResult {
  std::string chip;                // "<node>:<index>"
  std::vector<std::string> given;  // every chip Slurm gave the job
  verify::ChipRun run;
  double duration_s = 0;
  std::string started_at, finished_at;
  std::string error;
  // Given only the chip to avoid under `decline_avoided`: nothing ran, `chip` is empty.
  bool declined = false;
};

nlohmann::json chip_job_result_json(const ChipJobResult& r);
ChipJobResult chip_job_result_from_json(const nlohmann::json& j, const std::string& where);

// The node's side: reads the job file, checks the marker, names the chip from Slurm's
// environment, does the work and writes the result. Returns the process's exit status: 0 when a
// result was written (whatever the command did), else 1 with the reason on stderr.
int run_chip_job_file(const std::filesystem::path& job_file);

// The message of a node that does not see the run root.
std::string shared_storage_message(const std::string& node, const std::filesystem::path& path);

}  // namespace kd::dispatcher
