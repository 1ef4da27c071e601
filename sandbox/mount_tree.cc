#include "sandbox/mount_tree.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/errors.h"
#include "common/fd.h"

namespace kd::sandbox {
namespace {

namespace fs = std::filesystem;
const std::string kOld = "/oldroot";
const std::string kNew = "/newroot";
const char* kEmptyFile = "/mask-empty";  // in the staging tmpfs, mode 0000

constexpr uint64_t kBeneath = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

// `rel` beneath the directory `dir`, with no link and no ".." that leaves it anywhere on the way.
// -errno on failure.
int open_beneath_fd(int dir, const std::string& rel, int flags = O_PATH) {
  open_how how{};
  how.flags = uint64_t(flags | O_CLOEXEC | O_NOFOLLOW);
  how.resolve = kBeneath;
  long fd = ::syscall(SYS_openat2, dir, rel.empty() ? "." : rel.c_str(), &how, sizeof how);
  return fd < 0 ? -errno : int(fd);
}

// An absolute path, resolved component by component beneath `/`. -errno on failure.
int open_nofollow(const std::string& path, int flags = O_PATH) {
  if (path.empty() || path[0] != '/') return -EINVAL;
  const UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return -errno;
  const size_t first = path.find_first_not_of('/');
  return open_beneath_fd(root.get(), first == std::string::npos ? "" : path.substr(first), flags);
}

UniqueFd must_open(const std::string& path, const std::string& why) {
  int fd = open_nofollow(path);
  if (fd < 0) throw_sys("mount: openat2", path + " (" + why + ")", -fd);
  return UniqueFd(fd);
}

void set_attr(int fd, bool recursive, uint64_t attrs, const std::string& what) {
  mount_attr attr{};
  attr.attr_set = attrs;
  unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  if (::syscall(SYS_mount_setattr, fd, "", flags, &attr, sizeof attr) != 0) {
    throw_sys("mount: mount_setattr", what, errno);
  }
}

// A detached copy of the mount(s) at `src`, with extra attributes set.
UniqueFd clone_tree(int src, bool recursive, uint64_t attrs, const std::string& what) {
  unsigned flags =
      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  long fd = ::syscall(SYS_open_tree, src, "", flags);
  if (fd < 0) throw_sys("mount: open_tree(OPEN_TREE_CLONE)", what, errno);
  UniqueFd tree{int(fd)};
  if (attrs) set_attr(tree.get(), recursive, attrs, what);
  return tree;
}

void attach(int tree, int target, const std::string& what) {
  if (::syscall(SYS_move_mount, tree, "", target, "",
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    throw_sys("mount: move_mount", what, errno);
  }
}

UniqueFd new_tmpfs(const std::string& size, const std::string& mode, uint64_t attrs,
                   const std::string& what) {
  long fsfd = ::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0) throw_sys("mount: fsopen", "tmpfs for " + what, errno);
  const UniqueFd fs{int(fsfd)};
  auto set = [&](const char* key, const std::string& value) {
    if (::syscall(SYS_fsconfig, fs.get(), FSCONFIG_SET_STRING, key, value.c_str(), 0) != 0) {
      throw_sys("mount: fsconfig", std::string(key) + "=" + value + " for " + what, errno);
    }
  };
  set("size", size);
  set("mode", mode);
  if (::syscall(SYS_fsconfig, fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
    throw_sys("mount: fsconfig(FSCONFIG_CMD_CREATE)", "tmpfs for " + what, errno);
  }
  long m = ::syscall(SYS_fsmount, fs.get(), FSMOUNT_CLOEXEC, attrs);
  if (m < 0) throw_sys("mount: fsmount", "tmpfs for " + what, errno);
  return UniqueFd(int(m));
}

// Opens the mount point for `inside` under /newroot, creating it (and its parents) when absent.
UniqueFd ensure_target(const fs::path& inside, bool dir) {
  const std::string full = kNew + inside.string();
  int fd = open_nofollow(full);
  if (fd >= 0) {
    UniqueFd target(fd);
    struct stat st;
    ::fstat(fd, &st);
    if (S_ISDIR(st.st_mode) != dir) {
      throw Error("mount: " + quote(inside.string()) + " exists inside as a " +
                  (dir ? "non-directory" : "directory") + ", cannot mount over it");
    }
    return target;
  }
  if (fd != -ENOENT) throw_sys("mount: openat2", full, -fd);
  if (inside.has_parent_path() && inside.parent_path() != inside)
    ensure_target(inside.parent_path(), true);
  if (dir) {
    if (::mkdir(full.c_str(), 0755) != 0 && errno != EEXIST) throw_sys("mount: mkdir", full, errno);
  } else {
    int f = ::open(full.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (f < 0) throw_sys("mount: create mount point", full, errno);
    ::close(f);
  }
  return must_open(full, "mount point");
}

// Attaches a detached copy made by clone_sources at the same path inside; closes it.
void attach_source(std::map<fs::path, int>& trees, const fs::path& path) {
  auto it = trees.find(path);
  if (it == trees.end()) throw Error("mount: no source was opened for " + quote(path.string()));
  UniqueFd tree{it->second};
  trees.erase(it);
  struct stat st;
  if (::fstat(tree.get(), &st) != 0) throw_sys("mount: fstat", path.string(), errno);
  UniqueFd t = ensure_target(path, S_ISDIR(st.st_mode));
  attach(tree.get(), t.get(), path.string());
}

void bind(const fs::path& host, const fs::path& inside, uint64_t attrs, bool recursive) {
  const std::string src = kOld + host.string();
  UniqueFd s = must_open(src, "bind source");
  struct stat st;
  if (::fstat(s.get(), &st) != 0) throw_sys("mount: fstat", src, errno);
  UniqueFd t = ensure_target(inside, S_ISDIR(st.st_mode));
  UniqueFd tree = clone_tree(s.get(), recursive, attrs, host.string());
  attach(tree.get(), t.get(), host.string() + " -> " + inside.string());
}

void mount_system_dir(const fs::path& p) {
  const std::string src = kOld + p.string();
  struct stat st;
  if (::lstat(src.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // not on this host
    throw_sys("mount: lstat", p.string(), errno);
  }
  if (S_ISLNK(st.st_mode)) {  // merged /usr: /bin -> usr/bin
    char buf[4096];
    ssize_t n = ::readlink(src.c_str(), buf, sizeof buf - 1);
    if (n < 0) throw_sys("mount: readlink", p.string(), errno);
    ensure_target(p.parent_path(), true);
    if (::symlink(std::string(buf, size_t(n)).c_str(), (kNew + p.string()).c_str()) != 0) {
      throw_sys("mount: symlink", p.string(), errno);
    }
    return;
  }
  bind(p, p, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true);
}

void mount_tmpfs(const fs::path& p, uint64_t size_mb) {
  UniqueFd t = ensure_target(p, true);
  UniqueFd m = new_tmpfs(std::to_string(size_mb) + "m", "1777",
                         MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, p.string());
  attach(m.get(), t.get(), "tmpfs -> " + p.string());
}

void mount_dev(const std::vector<std::string>& names) {
  UniqueFd t = ensure_target("/dev", true);
  UniqueFd m = new_tmpfs("1m", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, "/dev");
  attach(m.get(), t.get(), "tmpfs -> /dev");
  for (const auto& name : names) {
    struct stat st;
    if (::stat((kOld + "/dev/" + name).c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) continue;
    bind("/dev/" + name, "/dev/" + name, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false);
  }
  const std::string pts = kNew + "/dev/pts";
  if (::mkdir(pts.c_str(), 0755) != 0) throw_sys("mount: mkdir", pts, errno);
  if (::mount("devpts", pts.c_str(), "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=0620") != 0) {
    throw_sys("mount: mount(devpts)", "/dev/pts", errno);
  }
  const std::pair<const char*, const char*> links[] = {{"pts/ptmx", "/dev/ptmx"},
                                                       {"/proc/self/fd", "/dev/fd"},
                                                       {"/proc/self/fd/0", "/dev/stdin"},
                                                       {"/proc/self/fd/1", "/dev/stdout"},
                                                       {"/proc/self/fd/2", "/dev/stderr"}};
  for (const auto& [to, at] : links) {
    if (::symlink(to, (kNew + at).c_str()) != 0) throw_sys("mount: symlink", at, errno);
  }
}

void mount_mask(const fs::path& p);

void mount_proc() {
  UniqueFd t = ensure_target("/proc", true);
  const std::string p = kNew + "/proc";
  if (::mount("proc", p.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    throw_sys("mount: mount(proc)", "/proc", errno);
  }
  for (const char* sub : {"/proc/sys", "/proc/sysrq-trigger"}) {
    const std::string full = kNew + sub;
    if (::access(full.c_str(), F_OK) != 0) continue;  // not built into this kernel
    UniqueFd s = must_open(full, "read-only proc entry");
    UniqueFd tree =
        clone_tree(s.get(), true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, sub);
    attach(tree.get(), s.get(), std::string(sub) + " read-only");
  }
  // Drivers describe every device they drive there (/proc/driver/nvidia/gpus/*), not only
  // the chip of this box.
  mount_mask("/proc/driver");
}

void mount_mask(const fs::path& p) {
  const std::string full = kNew + p.string();
  int fd = open_nofollow(full);
  if (fd == -ENOENT) return;  // not visible inside anyway
  if (fd == -ELOOP) throw Error("mount: no-peek path " + quote(p.string()) + " is a symbolic link");
  if (fd < 0) throw_sys("mount: openat2", full, -fd);
  UniqueFd t(fd);
  struct stat st;
  ::fstat(t.get(), &st);
  const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  if (S_ISDIR(st.st_mode)) {
    UniqueFd m = new_tmpfs("4k", "0000", ro, "mask " + p.string());
    attach(m.get(), t.get(), "mask -> " + p.string());
  } else {
    UniqueFd s = must_open(kEmptyFile, "mask source");
    UniqueFd tree = clone_tree(s.get(), false, ro, "mask " + p.string());
    attach(tree.get(), t.get(), "mask -> " + p.string());
  }
}

enum class Kind { SystemRo, Tmpfs, Parents, Dev, Proc, Rw, Ro, Mask, Pin };
struct Op {
  fs::path path;
  Kind kind;
  uint64_t size_mb = 0;
};

bool strictly_beneath(const fs::path& p, const fs::path& dir) {
  const std::string d = dir.string(), s = p.string();
  return s.size() > d.size() && s.compare(0, d.size(), d) == 0 && (d == "/" || s[d.size()] == '/');
}

// A bind nested more than one level inside a writable tmpfs (a worktree at /tmp/lab/wiki/wt)
// would have writable parents there, where the root's are read-only: a write beside the
// worktree would land in the private tmpfs and look like it reached the wiki. The parents get
// a tmpfs of their own at the first level (/tmp/lab), made read-only once the binds are in.
std::vector<Op> parent_mounts(const std::vector<Op>& ops) {
  std::vector<Op> out;
  for (const auto& op : ops) {
    if (op.kind != Kind::Rw && op.kind != Kind::Ro) continue;
    const Op* parent = nullptr;  // the deepest other mount above this bind
    for (const auto& other : ops) {
      if (strictly_beneath(op.path, other.path) &&
          (!parent || other.path.string().size() > parent->path.string().size()))
        parent = &other;
    }
    if (!parent || parent->kind != Kind::Tmpfs || op.path.parent_path() == parent->path) continue;
    const fs::path first = parent->path / *op.path.lexically_relative(parent->path).begin();
    auto same = [&](const Op& o) { return o.path == first; };
    if (std::none_of(ops.begin(), ops.end(), same) && std::none_of(out.begin(), out.end(), same))
      out.push_back({first, Kind::Parents});
  }
  return out;
}

// The directories between a writable bind and a read-only bind beneath it: each is made a mount
// point of itself, which rename(2) and rmdir(2) refuse (EBUSY), so the read-only file stays at
// the path the host binds and reads it at; a renamed parent would carry the bind away and leave
// the path to the author.
std::vector<Op> pin_mounts(const std::vector<Op>& ops) {
  std::vector<Op> out;
  for (const auto& op : ops) {
    if (op.kind != Kind::Ro) continue;
    for (const auto& rw : ops) {
      if (rw.kind != Kind::Rw || !strictly_beneath(op.path, rw.path)) continue;
      for (fs::path d = op.path.parent_path(); strictly_beneath(d, rw.path); d = d.parent_path()) {
        auto same = [&](const Op& o) { return o.path == d; };
        if (std::none_of(ops.begin(), ops.end(), same) &&
            std::none_of(out.begin(), out.end(), same))
          out.push_back({d, Kind::Pin});
      }
    }
  }
  return out;
}

void mount_pin(const fs::path& p) {
  UniqueFd t = must_open(kNew + p.string(), "pinned directory");
  struct stat st;
  if (::fstat(t.get(), &st) != 0) throw_sys("mount: fstat", p.string(), errno);
  if (!S_ISDIR(st.st_mode)) throw Error("mount: " + quote(p.string()) + " is not a directory");
  UniqueFd tree = clone_tree(t.get(), false, 0, "pin " + p.string());
  attach(tree.get(), t.get(), "pin " + p.string());
}

void mount_parents(const fs::path& p) {
  UniqueFd t = ensure_target(p, true);
  UniqueFd m = new_tmpfs("1m", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                         "parents " + p.string());
  attach(m.get(), t.get(), "parents tmpfs -> " + p.string());
}

}  // namespace

void clone_sources(MountPlan& plan) {
  // A source inside a writable tree (the reference in the worktree) is resolved beneath that
  // tree's descriptor, component by component: no link the author planted on the way, and no
  // ".." out of it, can redirect the bind.
  std::vector<fs::path> writable = {plan.worktree};
  writable.insert(writable.end(), plan.rw_extra.begin(), plan.rw_extra.end());
  auto open_source = [&](const fs::path& p) {
    for (const auto& root : writable) {
      if (!strictly_beneath(p, root)) continue;
      UniqueFd r = must_open(root.string(), "writable root");
      const std::string rel = p.lexically_relative(root).string();
      int fd = open_beneath_fd(r.get(), rel);
      if (fd < 0) {
        throw_sys("mount: openat2",
                  quote(rel) + " beneath " + quote(root.string()) +
                      " (bind source), RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|"
                      "RESOLVE_NO_MAGICLINKS",
                  -fd);
      }
      return UniqueFd(fd);
    }
    return must_open(p.string(), "bind source");
  };
  auto clone = [&](std::map<fs::path, int>& into, const fs::path& p, uint64_t attrs,
                   bool recursive) {
    if (into.count(p)) return;
    UniqueFd src = open_source(p);
    UniqueFd tree = clone_tree(src.get(), recursive, 0, p.string());
    // Private first: a copy of a shared host mount would otherwise be a peer of it, and what
    // the box mounts beneath it would propagate back to the host.
    mount_attr attr{};
    attr.attr_set = attrs;
    attr.propagation = MS_PRIVATE;
    unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
    if (::syscall(SYS_mount_setattr, tree.get(), "", flags, &attr, sizeof attr) != 0) {
      throw_sys("mount: mount_setattr", p.string() + " (private)", errno);
    }
    into[p] = tree.release();
  };
  const uint64_t rw = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  clone(plan.trees, plan.worktree, rw, true);
  for (const auto& p : plan.rw_extra)
    clone(plan.trees, p, rw, true);
  for (const auto& p : plan.ro)
    clone(plan.trees, p, rw | MOUNT_ATTR_RDONLY, true);
  for (const auto& d : plan.devices) {
    UniqueFd probe = must_open(d.string(), "chip device");
    struct stat st;
    if (::fstat(probe.get(), &st) != 0)
      throw_sys("mount: fstat", "chip device " + d.string(), errno);
    if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
      throw Error("mount: chip device " + quote(d.string()) + " is not a device node");
    }
    clone(plan.device_trees, d, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false);
  }
}

void prepare_staging() {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    throw_sys("mount: mount", "/ MS_REC|MS_PRIVATE", errno);
  }
  UniqueFd staging = new_tmpfs("1m", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "staging");
  UniqueFd tmp = must_open("/tmp", "staging mount point");
  attach(staging.get(), tmp.get(), "staging tmpfs -> /tmp");
  if (::chdir("/tmp") != 0) throw_sys("mount: chdir", "/tmp (staging)", errno);
  for (const char* d : {"oldroot", "newroot"}) {
    if (::mkdir(d, 0755) != 0) throw_sys("mount: mkdir", d, errno);
  }
  if (::syscall(SYS_pivot_root, ".", "oldroot") != 0)
    throw_sys("mount: pivot_root", "staging", errno);
  if (::chdir("/") != 0) throw_sys("mount: chdir", "/", errno);
  int f = ::open(kEmptyFile, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
  if (f < 0) throw_sys("mount: create", kEmptyFile, errno);
  ::close(f);
  UniqueFd root = new_tmpfs("16m", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "box root");
  UniqueFd nr = must_open(kNew, "box root");
  attach(root.get(), nr.get(), "box root tmpfs -> " + kNew);
}

void build_tree(MountPlan& plan) {
  std::vector<Op> ops;
  for (const auto& p : plan.system_ro)
    ops.push_back({p, Kind::SystemRo});
  for (const auto& t : plan.tmpfs)
    ops.push_back({t.path, Kind::Tmpfs, t.size_mb});
  ops.push_back({"/dev", Kind::Dev});
  ops.push_back({"/proc", Kind::Proc});
  ops.push_back({plan.worktree, Kind::Rw});
  for (const auto& p : plan.rw_extra)
    ops.push_back({p, Kind::Rw});
  for (const auto& p : plan.ro)
    ops.push_back({p, Kind::Ro});
  for (const auto& p : plan.mask)
    ops.push_back({p, Kind::Mask});
  const std::vector<Op> pins = pin_mounts(ops);
  ops.insert(ops.end(), pins.begin(), pins.end());
  const std::vector<Op> parents = parent_mounts(ops);
  ops.insert(ops.end(), parents.begin(), parents.end());
  // Parents before children: a path sorts before every path beneath it.
  std::stable_sort(ops.begin(), ops.end(),
                   [](const Op& a, const Op& b) { return a.path.string() < b.path.string(); });
  for (const auto& op : ops) {
    switch (op.kind) {
      case Kind::SystemRo:
        mount_system_dir(op.path);
        break;
      case Kind::Tmpfs:
        mount_tmpfs(op.path, op.size_mb);
        break;
      case Kind::Parents:
        mount_parents(op.path);
        break;
      case Kind::Dev:
        mount_dev(plan.dev);
        break;
      case Kind::Proc:
        mount_proc();
        break;
      case Kind::Rw:
      case Kind::Ro:
        attach_source(plan.trees, op.path);
        break;
      case Kind::Mask:
        mount_mask(op.path);
        break;
      case Kind::Pin:
        mount_pin(op.path);
        break;
    }
  }
  for (const auto& op : parents) {
    UniqueFd t = must_open(kNew + op.path.string(), "parents tmpfs");
    set_attr(t.get(), false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
             op.path.string() + " read-only");
  }
}

void add_device_nodes(MountPlan& plan) {
  for (const auto& d : plan.devices)
    attach_source(plan.device_trees, d);
}

void enter_tree() {
  if (::chdir(kNew.c_str()) != 0) throw_sys("mount: chdir", kNew, errno);
  if (::syscall(SYS_pivot_root, ".", ".") != 0) throw_sys("mount: pivot_root", kNew, errno);
  if (::umount2(".", MNT_DETACH) != 0) throw_sys("mount: umount2", "host root (MNT_DETACH)", errno);
  if (::chdir("/") != 0) throw_sys("mount: chdir", "/", errno);
  UniqueFd root = must_open("/", "box root");
  set_attr(root.get(), false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
           "/ read-only");
}

}  // namespace kd::sandbox
