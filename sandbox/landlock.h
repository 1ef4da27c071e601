// Landlock, the second layer for writes: read and execute everywhere in the box, writes only
// beneath the declared writable trees, no device nodes made, signals and abstract sockets
// scoped to the command (ABI 6).
#pragma once

#include <filesystem>
#include <vector>

#include "sandbox/steps.h"

namespace kd::sandbox {

// The kernel's Landlock ABI version, or 0 when Landlock is absent or disabled.
int landlock_abi();

struct LandlockPaths {
  std::vector<std::filesystem::path> read = {"/"};  // read + execute
  std::vector<std::filesystem::path> write;         // full write rights, no mknod
  std::vector<std::filesystem::path> devices;       // write + ioctl on device nodes
};

// Creates a ruleset for the paths as the caller sees them; returns its fd. Throws kd::Error
// naming "landlock" and the call that failed.
int make_landlock_ruleset(const LandlockPaths& paths, int abi);

// Applies a ruleset to the calling thread (no_new_privs must already be set). A system call
// only, usable between clone and exec; Step::Landlock when it fails.
StepFailure landlock_restrict(int ruleset_fd) noexcept;

}  // namespace kd::sandbox
