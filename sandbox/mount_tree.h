// Mount namespace: an explicit tree built on a private tmpfs, never a bind of the host's `/`.
// Read-only system dirs; the worktree and extra writable dirs read-write (nodev, nosuid);
// read-only binds over declared paths (the reference module, the worktree's .git); masked
// no-peek paths (an empty, unreadable file or directory); private size-limited tmpfs (a bind
// nested deep inside one gets read-only parents there, as under the root); a fresh
// /proc with /proc/sys read-only; a minimal /dev. Every source and target is opened without
// following symbolic links, so a link planted in the worktree cannot redirect a mount.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sandbox/profile.h"

namespace kd::sandbox {

struct MountPlan {
  std::vector<std::filesystem::path> system_ro;
  std::vector<TmpfsMount> tmpfs;
  std::vector<std::string> dev;
  std::filesystem::path worktree;
  std::vector<std::filesystem::path> rw_extra, ro, mask;
  std::vector<std::filesystem::path> devices;  // the chip's nodes
  // Detached copies of the worktree, rw_extra, ro and device sources (clone_sources), by host
  // path; each is attached once and closed by build_tree / add_device_nodes.
  std::map<std::filesystem::path, int> trees, device_trees;
};

// Makes a private, detached copy (open_tree(OPEN_TREE_CLONE)) of every caller-named source,
// with its final attributes. Run while the sources can be reached: as root before dropping to
// the box's user (so a worktree or wiki under a root-only directory works), otherwise in the
// box's new mount namespace. Sources are opened without following symbolic links.
void clone_sources(MountPlan& plan);

// Run in order by the box's pid 1, inside its new user, mount and pid namespaces. Each throws
// kd::Error naming "mount" and the call.
void prepare_staging();            // host root moves to /oldroot, the box is built in /newroot
void build_tree(MountPlan& plan);  // everything under /newroot
void add_device_nodes(MountPlan& plan);  // the chip's nodes, in the chip view
void enter_tree();                       // pivot into /newroot, drop the host root, `/` read-only

}  // namespace kd::sandbox
