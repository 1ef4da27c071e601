// IPC and UTS namespaces: private System V IPC and message queues, and the box's own hostname.
#pragma once

#include <string>

namespace kd::sandbox {

// Sets the hostname inside the caller's (new) UTS namespace; throws kd::Error naming "uts".
void set_box_hostname(const std::string& name);

}  // namespace kd::sandbox
