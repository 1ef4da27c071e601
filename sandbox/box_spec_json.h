// A box and a command as data (docs/slurm.md): what the dispatcher writes into a chip job's file
// so that a node opens the very box the host would. The profile travels as the file it was loaded
// from (the install every node shares), reloaded and validated there; the chip is left out, since
// only the node knows which one Slurm gave it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sandbox/box.h"

namespace kd::sandbox {

nlohmann::json box_spec_json(const BoxSpec& spec);
// Throws kd::Error naming `where` and the field.
BoxSpec box_spec_from_json(const nlohmann::json& j, const std::string& where);

nlohmann::json run_request_json(const RunRequest& request);
RunRequest run_request_from_json(const nlohmann::json& j, const std::string& where);

// RunResult::to_json read back; throws kd::Error naming `where` and the field.
RunResult run_result_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace kd::sandbox
