// The kernel's floor for a fresh sandbox: the namespaces and the mount tree the issue asks for
// (user, mount, pid, net with loopback up, ipc, uts, cgroup; read-only system directories, the
// worktree read-write, size-limited tmpfs for /tmp, /run and /dev/shm, a minimal /dev, a fresh
// /proc), made by raw system calls in a clone3 of this process, and pid 1 forking /bin/true. No
// Landlock, seccomp, cgroup limits, capability drop, environment or status protocol: what any
// sandbox with this isolation pays before its own work.
#pragma once

#include <sys/types.h>

#include <string>

// Root inside maps to `uid`/`gid` on the host. The command's exit code; 97-99 when a step of the
// floor itself failed (named on stderr).
int kernel_floor(const std::string& worktree, uid_t uid, gid_t gid);
