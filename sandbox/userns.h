// User namespace and credentials: the box runs as one unprivileged host id, and every command
// starts with no capabilities and no_new_privs (checked before exec).
#pragma once

#include <sys/types.h>

namespace kd::sandbox {

// As host root: clear supplementary groups, then become gid/uid (never 0).
void drop_host_credentials(uid_t uid, gid_t gid);

// unshare(CLONE_NEWUSER) and map the caller's own uid/gid to themselves (setgroups denied).
void enter_user_namespace(uid_t uid, gid_t gid);

// Empties the bounding, ambient, effective, permitted and inheritable sets.
void drop_all_capabilities();

// Throws kd::Error unless every capability set is empty and no_new_privs is 1.
void assert_unprivileged();

}  // namespace kd::sandbox
