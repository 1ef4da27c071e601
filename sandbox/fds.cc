#include "sandbox/fds.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/errors.h"

namespace kd::sandbox {

StepFailure cloexec_from_3() noexcept {
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    return {Step::CloseOnExec, errno};
  return {};
}

int send_datagram(int sock, const void* data, size_t size, const int* fds, size_t nfds) noexcept {
  if (nfds > kMaxPassedFds) return EINVAL;
  iovec iov{const_cast<void*>(data), size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  ssize_t n;
  do
    n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  return n == ssize_t(size) ? 0 : EMSGSIZE;
}

void send_with_fds(int sock, const std::string& data, const std::vector<int>& fds) {
  if (int err = send_datagram(sock, data.data(), data.size(), fds.data(), fds.size()))
    throw_sys("box: sendmsg", "control socket", err);
}

bool recv_with_fds(int sock, std::string& data, std::vector<int>& fds, size_t max_fds,
                   size_t max_bytes) {
  // Not zero-filled: only the pages the message lands on are touched. A box's processes are
  // forks of its pid 1, where zeroing the whole buffer copied every page of it per command.
  std::unique_ptr<char[]> buf(new char[max_bytes]);
  iovec iov{buf.get(), max_bytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * (max_fds ? max_fds : 1)));
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n;
  do
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) throw_sys("box: recvmsg", "control socket", errno);
  fds.clear();
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds.push_back(fd);
    }
  }
  if (n == 0 && fds.empty()) return false;
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    for (int fd : fds)
      ::close(fd);
    throw Error("box: recvmsg: message or descriptors truncated");
  }
  data.assign(buf.get(), size_t(n));
  return true;
}

FdPair make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_sys("box: pipe2", "O_CLOEXEC", errno);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

FdPair make_stream_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw_sys("box: socketpair", "AF_UNIX, SOCK_STREAM", errno);
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace kd::sandbox
