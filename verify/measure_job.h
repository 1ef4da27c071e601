// The measuring parent's chip work as data (docs/slurm.md): its workers (the reference's, whose
// box also serves the inputs worker, and the candidate's, each a box and a program) and its plan.
// The verification describes the work; whoever holds the chip (this host under a flock, or a Slurm
// node) runs it with run_measure_job and hands back the ParentMeasurement, which travels as JSON
// too.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contract/chips.h"
#include "verify/measuring_parent.h"
#include "verify/worker_process.h"

namespace kd::verify {

struct MeasureJob {
  std::vector<WorkerSpec> workers;  // reference (companion: inputs), candidate; chip left unset
  ParentPlan plan;                  // clock left to the chip: "cpu" for a CPU chip, else "wall"
  std::filesystem::path log;        // the workers' boxes' output and results, written here
};

// Prepares each worker's scratch (emptied, handed to the box user) and pipe directory, starts
// the workers on `chip`, runs the protocol and writes the log.
ParentMeasurement run_measure_job(const MeasureJob& job, const contract::Chip& chip);

nlohmann::json measure_job_json(const MeasureJob& job);
MeasureJob measure_job_from_json(const nlohmann::json& j, const std::string& where);

nlohmann::json parent_measurement_json(const ParentMeasurement& m);
ParentMeasurement parent_measurement_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace kd::verify
