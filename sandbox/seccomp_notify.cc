#include "sandbox/seccomp_notify.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sandbox/seccomp_filter.h"
#include "sandbox/wire.h"

namespace kd::sandbox {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string syscall_name(int nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  std::string out = name ? name : "syscall_" + std::to_string(nr);
  std::free(name);
  return out;
}

std::string family_name(uint64_t f) {
  switch (f) {
    case AF_UNSPEC:
      return "AF_UNSPEC";
    case AF_NETLINK:
      return "AF_NETLINK";
    case AF_PACKET:
      return "AF_PACKET";
    case AF_VSOCK:
      return "AF_VSOCK";
    case AF_BLUETOOTH:
      return "AF_BLUETOOTH";
    case AF_ALG:
      return "AF_ALG";
    default:
      return "family " + std::to_string(f);
  }
}

std::string namespace_flags(uint64_t flags) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {CLONE_NEWNS, "CLONE_NEWNS"},         {CLONE_NEWUSER, "CLONE_NEWUSER"},
      {CLONE_NEWPID, "CLONE_NEWPID"},       {CLONE_NEWNET, "CLONE_NEWNET"},
      {CLONE_NEWIPC, "CLONE_NEWIPC"},       {CLONE_NEWUTS, "CLONE_NEWUTS"},
      {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {0x00000080, "CLONE_NEWTIME"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (flags & bit) out += std::string(out.empty() ? "" : "|") + name;
  }
  return out.empty() ? hex(flags) : out + " (" + hex(flags) + ")";
}

}  // namespace

bool seccomp_notify_available() {
  uint32_t action = SECCOMP_RET_USER_NOTIF;
  return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

std::string describe_syscall(int nr, const uint64_t (&a)[6]) {
  const std::string name = syscall_name(nr);
  std::string args;
  if (name == "socket" || name == "socketpair") {
    args = family_name(a[0]) + ", " + hex(a[1]) + ", " + hex(a[2]);
  } else if (name == "unshare") {
    args = namespace_flags(a[0]);
  } else if (name == "clone") {
    args = namespace_flags(a[0]) + ", ...";
  } else if (name == "ioctl") {
    args = "fd " + std::to_string(int(a[0])) + ", " + hex(a[1]);
  } else {
    args = hex(a[0]) + ", " + hex(a[1]) + ", " + hex(a[2]) + ", ...";
  }
  return name + "(" + args + ")";
}

bool DenialLog::serve(int listener) {
  seccomp_notif req;
  std::memset(&req, 0, sizeof req);
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
    // ENOENT: the caller went away (killed) between the wake-up and the receive.
    return errno == ENOENT || errno == EINTR;
  }
  seccomp_notif_resp resp;
  std::memset(&resp, 0, sizeof resp);
  resp.id = req.id;
  resp.error = -kDeniedErrno;
  // ENOENT here too only means the caller is gone; the call was not made either way.
  (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  if (denials_.size() >= kMaxRecorded) {
    ++dropped_;
    return true;
  }
  uint64_t args[6];
  std::memcpy(args, req.data.args, sizeof args);
  const std::string call = describe_syscall(req.data.nr, args);
  denials_.push_back({"seccomp", syscall_name(req.data.nr), "",
                      "pid " + std::to_string(req.pid) + ": " + call + " is on the deny-list",
                      kDeniedErrno});
  return true;
}

std::string DenialLog::take(bool final) {
  const bool report_dropped = final && dropped_ > 0;
  if (sent_ == denials_.size() && !report_dropped) return "";
  wire::Writer w;
  w.u64(denials_.size() - sent_);
  for (; sent_ < denials_.size(); ++sent_)
    w.str(denials_[sent_].op).str(denials_[sent_].detail);
  w.u64(report_dropped ? dropped_ : 0);
  if (report_dropped) dropped_ = 0;
  return w.bytes();
}

std::vector<Denial> DenialLog::decode(const std::string& payload) {
  wire::Reader rd(payload);
  std::vector<Denial> out;
  const uint64_t n = rd.u64();
  for (uint64_t i = 0; i < n && i <= kMaxRecorded; ++i) {
    std::string op = rd.str();
    std::string detail = rd.str();
    out.push_back({"seccomp", std::move(op), "", std::move(detail), kDeniedErrno});
  }
  if (const uint64_t dropped = rd.u64()) {
    out.push_back({"seccomp", "more", "",
                   std::to_string(dropped) + " more denied calls, not itemized", kDeniedErrno});
  }
  return out;
}

}  // namespace kd::sandbox
