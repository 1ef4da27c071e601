// The environment of a command: the profile's fixed variables, host variables on the pass
// list, the caller's additions; names on the deny list never enter (provider keys, LD_*).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sandbox/profile.h"

namespace kd::sandbox {

// The environment that puts read-only tool directories first on the box's PATH (empty when
// there are none).
std::map<std::string, std::string> tool_env(const std::vector<std::filesystem::path>& tool_dirs);

// Throws kd::Error naming the variable when `extra` holds a denied name.
std::vector<std::string> build_environment(const EnvPolicy& policy, char** host_env,
                                           const std::map<std::string, std::string>& extra);

}  // namespace kd::sandbox
