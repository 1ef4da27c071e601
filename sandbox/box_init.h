// The box's pid 1 (the reaper): builds the tree once, then serves requests from the host,
// spawns each command in its own pid namespace, enforces wall-clock deadlines, reaps every
// child and reports exit statuses. When it dies, the kernel kills everything in the box.
#pragma once

#include "sandbox/init_config.h"

namespace kd::sandbox {

// Requests on the control socket (SOCK_SEQPACKET), one datagram each.
enum class Request : char { Run = 'R', File = 'F' };
// Messages from the box on the control socket while it starts.
enum class Startup : char { Pid = 'P', Ready = 'R', Error = 'E' };

// Never returns. `control_fd` is the box's end of the control socket; `config` is consumed
// (the detached source trees are attached and closed).
[[noreturn]] void box_init_main(InitConfig& config, int control_fd);

}  // namespace kd::sandbox
