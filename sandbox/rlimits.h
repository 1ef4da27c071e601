// Per-command resource limits (setrlimit), applied in the command's process before exec.
#pragma once

#include "sandbox/profile.h"

namespace kd::sandbox {

// Sets RLIMIT_CPU, FSIZE, NOFILE, AS (when non-zero), CORE=0 and, when no pids cgroup holds
// the box, RLIMIT_NPROC as a backstop. Throws kd::Error naming "rlimits" and the resource.
void apply_rlimits(const Limits& limits, bool nproc_backstop);

}  // namespace kd::sandbox
