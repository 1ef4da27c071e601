// User namespace and credentials: the box runs as one unprivileged host id, and every command
// starts with no capabilities and no_new_privs (checked before exec).
#pragma once

#include <sys/types.h>

#include <string>

#include "sandbox/steps.h"

namespace kd::sandbox {

// As host root: clear supplementary groups, then become gid/uid (never 0).
void drop_host_credentials(uid_t uid, gid_t gid);

// unshare(CLONE_NEWUSER) and map the caller's own uid/gid to themselves (setgroups denied).
void enter_user_namespace(uid_t uid, gid_t gid);

// Between clone and exec, system calls only (the failed step is returned).
// Empties the bounding, ambient, effective, permitted and inheritable sets.
StepFailure drop_all_capabilities() noexcept;
// Fails unless every capability set is empty and no_new_privs is 1.
StepFailure check_unprivileged() noexcept;
// The message of a step of those two: "capabilities: capset(all empty): EPERM".
std::string capability_error(const StepFailure& failure);

}  // namespace kd::sandbox
