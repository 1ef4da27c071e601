// Host-side access to agent-controlled paths (the commit tool, candidate snapshots): resolved
// strictly beneath a directory, never through a symbolic link that leaves it, never through
// /proc magic links.
#pragma once

#include <sys/types.h>

#include <string>

namespace kd::sandbox {

// openat2(root_dirfd, rel, flags, RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS); O_CLOEXEC is added and,
// unless the caller asks for O_PATH, O_NOFOLLOW, so a link at the last component is refused
// too. Returns the fd; throws kd::Error naming the path ("openat2(\"out\" beneath fd 5,
// RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS): EXDEV").
int open_beneath(int root_dirfd, const std::string& rel, int flags, mode_t mode = 0);

}  // namespace kd::sandbox
