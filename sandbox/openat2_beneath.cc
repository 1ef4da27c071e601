#include "sandbox/openat2_beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "common/errors.h"

namespace kd::sandbox {

int open_beneath(int root_dirfd, const std::string& rel, int flags, mode_t mode) {
  if (rel.empty()) throw Error("openat2: empty path beneath fd " + std::to_string(root_dirfd));
  open_how how{};
  how.flags = uint64_t(flags | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOFOLLOW));
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd;
  do
    fd = ::syscall(SYS_openat2, root_dirfd, rel.c_str(), &how, sizeof how);
  while (fd < 0 && errno == EAGAIN);
  if (fd < 0) {
    throw_sys("openat2",
              quote(rel) + " beneath fd " + std::to_string(root_dirfd) +
                  ", RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS",
              errno);
  }
  return int(fd);
}

}  // namespace kd::sandbox
