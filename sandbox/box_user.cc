#include "sandbox/box_user.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/errors.h"

namespace kd::sandbox {
namespace fs = std::filesystem;

namespace {
constexpr uid_t kBoxUid = 65534;
constexpr gid_t kBoxGid = 65534;

void own(const fs::path& p) {
  if (::lchown(p.c_str(), kBoxUid, kBoxGid) != 0) throw_sys("lchown", quote(p.string()), errno);
}
}  // namespace

void hand_to_box_user(const fs::path& root) {
  if (::geteuid() != 0) return;
  own(root);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path().filename() == ".git" && !it->is_directory()) continue;
    own(it->path());
  }
}

BoxUser box_user(const std::filesystem::path& worktree) {
  BoxUser u{::geteuid(), ::getegid(), ::geteuid() == 0};
  if (!u.as_root) return u;
  struct stat st;
  if (::stat(worktree.c_str(), &st) != 0) throw_sys("stat", worktree.string(), errno);
  if (st.st_uid == 0) {
    throw Error("user namespace: worktree " + quote(worktree.string()) +
                " is owned by root; as root a box runs as the worktree's owner and never as "
                "host root (chown it to an unprivileged user)");
  }
  u.uid = st.st_uid;
  u.gid = st.st_gid == 0 ? st.st_uid : st.st_gid;
  return u;
}

}  // namespace kd::sandbox
