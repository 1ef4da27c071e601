// Who a box runs as, and what the host prepares for that user. As root a box runs as the owner
// of its worktree and never as host root, so whatever a box may write is first handed to an
// unprivileged user (hand_to_box_user) and the box then runs as that owner (box_user).
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace kd::sandbox {

// Who a box on `worktree` runs as: the caller, or as root the worktree's owner and its group
// (the owner's id when the group is root), never host root. Throws kd::Error, as root, for a
// root-owned worktree or one that cannot be stat'ed.
struct BoxUser {
  uid_t uid;
  gid_t gid;
  bool as_root;  // the holder starts as root and drops to uid/gid itself
};
BoxUser box_user(const std::filesystem::path& worktree);

// As root: hands `root` and everything beneath it to the unprivileged box user (nobody), so a
// box on it runs as that user. A no-op when not root. A `.git` file (a worktree's pointer to its
// git directory) stays the host's, read-only inside.
void hand_to_box_user(const std::filesystem::path& root);

}  // namespace kd::sandbox
