// Where chip work runs (docs/slurm.md): the backend the inventory given to --chips selects.
// `local` is the flock of each listed chip on this host (dispatcher/chip_lock.h); `slurm` makes
// each piece of chip work a Slurm job that asks the partition for a chip by GRES, runs
// `kdispatch-full chip-job FILE` on the node and is collected from its result file. One backend
// serves a whole process (the campaign's author and verifier threads alike).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contract/chips.h"
#include "sandbox/box.h"
#include "verify/verification.h"

namespace kd::dispatcher {

struct ChipTask {
  std::string experiment;  // <slug>/vNNN
  std::string purpose;     // "run_on_chip" | "verify"
  std::string call_id;     // run_on_chip: the tool call's id
  std::filesystem::path run_dir;
  verify::ChipJob job;
  // Local run_on_chip: the author's session box, which already holds the chip's devices; the
  // command runs there under the chip's lock.
  sandbox::Box* session_box = nullptr;
  std::vector<contract::Chip> candidates;  // local: the chips it may use, in preference order
  std::optional<std::chrono::steady_clock::time_point> deadline;  // local: the wait for a lock
  std::string avoid_chip;  // Slurm: the author's last chip, which a verification avoids
  // Slurm: this experiment's jobs of this purpose that an earlier process submitted and never
  // saw end (job_submitted data): collected or awaited instead of submitting again.
  std::vector<nlohmann::json> in_flight;
  // Slurm: this experiment's verification tries that an earlier process saw declined (their
  // job_submitted data): counted, and the chips those still hold are given back.
  std::vector<nlohmann::json> declined;
  // Journals a record (job_submitted, job_finished) of the experiment.
  std::function<void(const char* type, nlohmann::json data)> record;
};

class ChipBackend {
 public:
  virtual ~ChipBackend() = default;
  // Runs the task on a chip and returns what ran on which chip; `on_start` gets the chip's id
  // once it is known (locally before the command starts; under Slurm once the job has run).
  // Throws ExperimentError (chip_unavailable) when no chip could be had or a Slurm job ended
  // without a result (failed, cancelled, node down, out of time): Slurm's state and reason are
  // in the message; never a result to judge.
  virtual verify::ChipRun run(const ChipTask& task,
                              const std::function<void(const std::string&)>& on_start) = 0;
  // Waits until each of `in_flight` (job_submitted data) has ended, collecting nothing: a
  // resumed verification lets an earlier job finish before it remakes the files the job reads.
  virtual void settle(const std::vector<nlohmann::json>& in_flight) = 0;
  // Chips a campaign may keep busy at once.
  virtual int parallel() = 0;
  // Cancels every job this backend submitted and is still waiting on (a second SIGINT).
  virtual void cancel_all() = 0;
  virtual bool is_slurm() const = 0;
};

std::unique_ptr<ChipBackend> make_local_backend(const contract::ChipInventory& inventory);
std::unique_ptr<ChipBackend> make_slurm_backend(const contract::ChipInventory& inventory);
// The inventory's backend.
std::unique_ptr<ChipBackend> make_chip_backend(const contract::ChipInventory& inventory);

}  // namespace kd::dispatcher
