// Per-command resource limits (setrlimit): computed by the parent of the command's process, set
// by that process before exec with system calls only.
#pragma once

#include <sys/resource.h>

#include <array>
#include <cstddef>
#include <string>

#include "sandbox/profile.h"
#include "sandbox/steps.h"

namespace kd::sandbox {

struct RlimitPlan {
  struct Entry {
    int resource = 0;
    const char* name = "";
    rlimit value{};
  };
  std::array<Entry, 6> entries;
  size_t count = 0;
};

// RLIMIT_CORE=0, CPU, FSIZE, NOFILE, AS (when non-zero) and, when no pids cgroup holds the box,
// RLIMIT_NPROC as a backstop; never raising a limit the caller already has lower. Throws
// kd::Error naming "rlimits" and the resource.
RlimitPlan plan_rlimits(const Limits& limits, bool nproc_backstop);

// Sets them in order: no allocation, usable between clone and exec. Step::Rlimits with the
// entry that failed.
StepFailure apply_rlimits(const RlimitPlan& plan) noexcept;

// "rlimits: setrlimit(RLIMIT_CPU=60): EPERM"
std::string rlimit_error(const RlimitPlan& plan, const StepFailure& failure);

}  // namespace kd::sandbox
