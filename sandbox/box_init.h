// The box's pid 1 (the reaper): builds the tree once, then serves requests from the host,
// spawns each command in its own pid namespace, enforces wall-clock deadlines, reaps every
// child and reports exit statuses. When it dies, the kernel kills everything in the box.
#pragma once

#include <linux/filter.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/mount_tree.h"
#include "sandbox/profile.h"

namespace kd::sandbox {

struct InitConfig {
  MountPlan plan;
  std::string hostname;
  int landlock_abi = 0;                    // 0: no Landlock
  std::vector<sock_filter> seccomp;        // commands
  std::vector<sock_filter> seccomp_files;  // file operations (no listener)
  bool notify = false;                     // `seccomp` notifies a supervisor
  Limits limits;
  bool nproc_backstop = false;
};

// Requests on the control socket (SOCK_SEQPACKET), one datagram each.
enum class Request : char { Run = 'R', File = 'F' };
// Messages from the box on the control socket while it starts.
enum class Startup : char { Pid = 'P', Ready = 'R', Error = 'E' };

// Never returns. `control_fd` is the box's end of the control socket.
[[noreturn]] void box_init_main(const InitConfig& config, int control_fd);

}  // namespace kd::sandbox
