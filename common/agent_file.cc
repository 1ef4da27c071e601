#include "common/agent_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "common/errors.h"
#include "common/fd.h"

namespace kd {
namespace {

constexpr std::uint64_t kStrict = RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV;

std::string resolve_names(std::uint64_t resolve) {
  std::string s = "RESOLVE_BENEATH";
  if (resolve & RESOLVE_NO_SYMLINKS) s += "|RESOLVE_NO_SYMLINKS";
  s += "|RESOLVE_NO_MAGICLINKS";
  if (resolve & RESOLVE_NO_XDEV) s += "|RESOLVE_NO_XDEV";
  return s;
}

const char* type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

UniqueFd open_dir(const std::filesystem::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) throw_sys("open", quote(dir.string()) + ", O_PATH|O_DIRECTORY", errno);
  return fd;
}

std::string relative_text(const std::filesystem::path& rel) {
  std::string r = rel.string();
  if (r.empty() || rel.is_absolute()) throw Error("path " + quote(r) + " must be relative");
  return r;
}

// Stats `rel` beneath `dirfd` without opening it for reading (a device or FIFO is never opened).
struct stat stat_beneath(int dirfd, const std::string& rel) {
  UniqueFd probe(open_beneath(dirfd, rel, O_PATH | O_NOFOLLOW, 0, kStrict));
  struct stat st {};
  if (::fstat(probe.get(), &st) != 0) throw_sys("fstat", quote(rel), errno);
  return st;
}

}  // namespace

int open_beneath(int root_dirfd, const std::string& rel, int flags, mode_t mode,
                 std::uint64_t extra_resolve) {
  if (rel.empty()) throw Error("openat2: empty path beneath fd " + std::to_string(root_dirfd));
  open_how how{};
  how.flags = uint64_t(flags | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOFOLLOW));
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | extra_resolve;
  long fd;
  do
    fd = ::syscall(SYS_openat2, root_dirfd, rel.c_str(), &how, sizeof how);
  while (fd < 0 && errno == EAGAIN);
  if (fd < 0) {
    throw_sys("openat2",
              quote(rel) + " beneath fd " + std::to_string(root_dirfd) + ", " +
                  resolve_names(how.resolve),
              errno);
  }
  return int(fd);
}

std::string read_agent_file(const std::filesystem::path& dir, const std::filesystem::path& rel,
                            std::uint64_t max_bytes) {
  const std::string r = relative_text(rel);
  const std::string where = quote((dir / rel).string());
  UniqueFd d = open_dir(dir);
  const struct stat before = stat_beneath(d.get(), r);
  if (!S_ISREG(before.st_mode))
    throw Error(where + " is " + type_name(before.st_mode) + ", not a regular file; not read");
  UniqueFd f(open_beneath(d.get(), r, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, kStrict));
  struct stat st {};
  if (::fstat(f.get(), &st) != 0) throw_sys("fstat", where, errno);
  if (!S_ISREG(st.st_mode) || st.st_ino != before.st_ino || st.st_dev != before.st_dev)
    throw Error(where + " changed while it was opened; not read");
  if (std::uint64_t(st.st_size) > max_bytes) {
    throw Error(where + " is " + std::to_string(st.st_size) + " bytes, over the " +
                std::to_string(max_bytes) + "-byte limit; not read");
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(f.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_sys("read", where, errno);
    if (n == 0) break;
    // A file still growing (a writer that outlived its box) is refused, not read without end.
    if (out.size() + size_t(n) > max_bytes) {
      throw Error(where + " grew past the " + std::to_string(max_bytes) +
                  "-byte limit while it was read; not read");
    }
    out.append(buf, size_t(n));
  }
  return out;
}

std::string read_agent_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : ".";
  return read_agent_file(parent, path.filename(), max_bytes);
}

bool agent_regular_file(const std::filesystem::path& dir, const std::filesystem::path& rel) {
  try {
    UniqueFd d = open_dir(dir);
    return S_ISREG(stat_beneath(d.get(), relative_text(rel)).st_mode);
  } catch (const Error&) {
    return false;
  }
}

}  // namespace kd
