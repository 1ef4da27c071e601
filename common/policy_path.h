// Locates the default policy files (policies/ in the source tree, or $KDISPATCH_POLICY_DIR) and
// the shipped examples.
#pragma once

#include <filesystem>
#include <string_view>

namespace kd {

// The directory holding the default policies.
std::filesystem::path policy_dir();

// policy_dir() / relative, e.g. policy_file("sandbox/author.json").
std::filesystem::path policy_file(std::string_view relative);

// The directory holding the example wiki and home repository (examples/ in the source tree, or
// $KDISPATCH_EXAMPLES_DIR).
std::filesystem::path examples_dir();

}  // namespace kd
