#include "sandbox/netns.h"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace kd::sandbox {

void bring_loopback_up() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_sys("netns: socket", "AF_INET", errno);
  ifreq req{};
  std::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
  int err = 0;
  if (::ioctl(fd, SIOCGIFFLAGS, &req) != 0) {
    err = errno;
  } else {
    req.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (::ioctl(fd, SIOCSIFFLAGS, &req) != 0) err = errno;
  }
  ::close(fd);
  if (err != 0) throw_sys("netns: ioctl(SIOCSIFFLAGS)", "lo up", err);
}

}  // namespace kd::sandbox
