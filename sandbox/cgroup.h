// A per-box cgroup for pids and memory, where the host lets us make one (cgroup v2, or the v1
// pids and memory controllers): a fork storm stops at pids.max and a memory bomb is killed
// inside the box only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "sandbox/profile.h"

namespace kd::sandbox {

class Cgroup {
 public:
  // nullptr when unavailable and the profile says best_effort or off; throws kd::Error naming
  // "cgroup" and the file when required and impossible.
  static std::unique_ptr<Cgroup> create(const Limits& limits, Need need);
  ~Cgroup();  // removes the directories (the box must be gone)

  // Moves a process in: the box's pid 1, before it starts anything. Done by the dispatcher
  // while pid 1 builds its tree: a cgroup v1 migration waits for an RCU grace period, which
  // then costs no time on the way to the first command.
  void attach(pid_t pid) const;
  uint64_t pids_max_hits() const;  // times a fork failed at pids.max
  uint64_t oom_kills() const;      // processes killed for memory
  uint64_t pids_limit() const { return pids_; }

 private:
  Cgroup() = default;
  std::vector<std::filesystem::path> dirs_;  // every directory this cgroup made
  std::filesystem::path pids_dir_, memory_dir_;
  bool v2_ = false;
  uint64_t pids_ = 0;
};

}  // namespace kd::sandbox
