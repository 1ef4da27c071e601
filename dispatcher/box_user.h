// What the dispatcher prepares on the host for a box (author or verifier).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kd::dispatcher {

// As root a box runs as the owner of its worktree and never as root, so whatever a box may write
// is handed to an unprivileged user (nobody). A no-op when not root. A `.git` file (a worktree's
// pointer to its git directory) stays the host's, read-only inside.
void hand_to_box_user(const std::filesystem::path& root);

// The environment that puts read-only tool directories first on the box's PATH (empty when
// there are none).
std::map<std::string, std::string> tool_env(const std::vector<std::filesystem::path>& tool_dirs);

}  // namespace kd::dispatcher
