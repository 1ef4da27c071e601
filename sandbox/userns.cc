#include "sandbox/userns.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "common/errors.h"

namespace kd::sandbox {
namespace {

void write_proc(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_sys("user namespace: open", path, errno);
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != ssize_t(text.size()))
    throw_sys("user namespace: write", path + " <- " + quote(text), err);
}

bool capget_all(__user_cap_data_struct (&data)[2]) {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  return ::syscall(SYS_capget, &hdr, data) == 0;
}

}  // namespace

void drop_host_credentials(uid_t uid, gid_t gid) {
  if (uid == 0 || gid == 0) throw Error("user namespace: refusing to run a box as host root");
  if (::setgroups(0, nullptr) != 0) throw_sys("user namespace: setgroups", "0 groups", errno);
  if (::setresgid(gid, gid, gid) != 0)
    throw_sys("user namespace: setresgid", std::to_string(gid), errno);
  if (::setresuid(uid, uid, uid) != 0)
    throw_sys("user namespace: setresuid", std::to_string(uid), errno);
  // A credential change makes the process non-dumpable, which makes its /proc files root's;
  // it needs to write its own uid_map next, and holds nothing of root's any more.
  if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
    throw_sys("user namespace: prctl", "PR_SET_DUMPABLE", errno);
}

void enter_user_namespace(uid_t uid, gid_t gid) {
  if (::unshare(CLONE_NEWUSER) != 0) throw_sys("user namespace: unshare", "CLONE_NEWUSER", errno);
  write_proc("/proc/self/setgroups", "deny");
  write_proc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n");
  write_proc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n");
}

StepFailure drop_all_capabilities() noexcept {
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      return {Step::BoundingSet, errno, cap};
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    return {Step::AmbientSet, errno};
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &hdr, data) != 0) return {Step::Capabilities, errno};
  return {};
}

StepFailure check_unprivileged() noexcept {
  __user_cap_data_struct data[2] = {};
  if (!capget_all(data)) return {Step::CheckCapabilities, errno};
  for (const auto& d : data) {
    if (d.effective || d.permitted || d.inheritable) return {Step::CheckCapabilities, 0};
  }
  for (int cap = 0; cap <= 63; ++cap) {
    int r = ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (r < 0) break;
    if (r == 1) return {Step::CheckBoundingSet, 0, cap};
  }
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) return {Step::CheckNoNewPrivs, 0};
  return {};
}

std::string capability_error(const StepFailure& f) {
  switch (f.step) {
    case Step::BoundingSet:
      return sys_message("capabilities: prctl(PR_CAPBSET_DROP)", std::to_string(f.detail), f.err);
    case Step::AmbientSet:
      return sys_message("capabilities: prctl", "PR_CAP_AMBIENT_CLEAR_ALL", f.err);
    case Step::Capabilities:
      return sys_message("capabilities: capset", "all empty", f.err);
    case Step::CheckCapabilities:
      if (f.err != 0) return sys_message("capabilities: capget", "self", f.err);
      return "capabilities: a capability is still held before exec (refusing to run)";
    case Step::CheckBoundingSet:
      return "capabilities: bounding set still holds capability " + std::to_string(f.detail);
    case Step::CheckNoNewPrivs:
      return "no_new_privs: not set before exec (refusing to run)";
    default:
      return "capabilities: " + std::string(step_name(f.step)) + ": " + errno_name(f.err);
  }
}

}  // namespace kd::sandbox
