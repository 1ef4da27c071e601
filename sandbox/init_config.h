// What the box program (kdispatch-box) needs to build a box, as the dispatcher sends it over
// the control socket: one versioned datagram, checked field by field before anything is built.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/mount_tree.h"
#include "sandbox/profile.h"

namespace kd::sandbox {

struct InitConfig {
  uid_t uid = 0;  // the box's single user and group (never 0)
  gid_t gid = 0;
  bool as_root = false;  // the holder starts as host root and drops to uid/gid itself
  MountPlan plan;        // trees and device_trees are made by the holder, never sent
  std::string hostname;
  int landlock_abi = 0;                    // 0: no Landlock
  std::vector<sock_filter> seccomp;        // commands
  std::vector<sock_filter> seccomp_files;  // file operations (no listener)
  bool notify = false;                     // `seccomp` notifies a supervisor
  Limits limits;
  bool nproc_backstop = false;
};

// Bumped whenever the layout changes: a box program of another build is refused by name.
inline constexpr uint64_t kInitConfigVersion = 1;

std::string encode_init_config(const InitConfig& config);
// Throws kd::Error("box: malformed config: <what>") for a wrong version, a short or overlong
// message, or a field out of range (a relative path, a uid of 0, an empty filter, ...).
InitConfig decode_init_config(const std::string& bytes);

}  // namespace kd::sandbox
