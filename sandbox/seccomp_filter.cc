#include "sandbox/seccomp_filter.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace kd::sandbox {
namespace {

constexpr const char* kDenied[] = {"mount",
                                   "umount2",
                                   "pivot_root",
                                   "chroot",
                                   "fsopen",
                                   "fsconfig",
                                   "fsmount",
                                   "fspick",
                                   "move_mount",
                                   "open_tree",
                                   "mount_setattr",
                                   "setns",
                                   "ptrace",
                                   "process_vm_readv",
                                   "process_vm_writev",
                                   "bpf",
                                   "perf_event_open",
                                   "userfaultfd",
                                   "keyctl",
                                   "add_key",
                                   "request_key",
                                   "io_uring_setup",
                                   "io_uring_enter",
                                   "io_uring_register",
                                   "kexec_load",
                                   "kexec_file_load",
                                   "init_module",
                                   "finit_module",
                                   "delete_module",
                                   "personality",
                                   "open_by_handle_at",
                                   "name_to_handle_at",
                                   "acct",
                                   "swapon",
                                   "swapoff",
                                   "reboot",
                                   "lookup_dcookie",
                                   "quotactl",
                                   "quotactl_fd",
                                   "fanotify_init"};

constexpr unsigned long kNamespaceFlags[] = {CLONE_NEWNS,     CLONE_NEWUSER, CLONE_NEWPID,
                                             CLONE_NEWNET,    CLONE_NEWIPC,  CLONE_NEWUTS,
                                             CLONE_NEWCGROUP, 0x00000080 /* CLONE_NEWTIME */};

int resolve(const char* name) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) throw Error(std::string("seccomp: unknown system call ") + name);
  return nr;
}

void add(scmp_filter_ctx ctx, uint32_t action, const char* name, std::vector<scmp_arg_cmp> args,
         const std::string& what) {
  int r = seccomp_rule_add_array(ctx, action, resolve(name), unsigned(args.size()), args.data());
  if (r != 0) throw_sys("seccomp: seccomp_rule_add", std::string(name) + " " + what, -r);
}

}  // namespace

SeccompFilter::SeccompFilter(DenyAction action) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) throw Error("seccomp: seccomp_init(SCMP_ACT_ALLOW) failed");
  ctx_ = ctx;
  const uint32_t eperm =
      action == DenyAction::Notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(kDeniedErrno);
  // Only the native architecture is in the filter: int 0x80 and x32 numbers kill the process.
  int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (r != 0) throw_sys("seccomp: seccomp_attr_set", "SCMP_FLTATR_ACT_BADARCH", -r);
  // The filter is installed after no_new_privs; libseccomp must not set it on its own.
  r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r != 0) throw_sys("seccomp: seccomp_attr_set", "SCMP_FLTATR_CTL_NNP", -r);
  for (const char* name : kDenied)
    add(ctx, eperm, name, {}, "(deny)");
  // Not a denial: libc falls back to clone, which the rules below inspect.
  add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", {}, "(ENOSYS)");
  for (unsigned long flag : kNamespaceFlags) {
    add(ctx, eperm, "unshare", {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)}, "namespace flag");
    add(ctx, eperm, "clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)}, "namespace flag");
  }
  // The kernel reads the ioctl request as 32 bits; compare only those (CVE-2019-10063).
  for (unsigned long req : {TIOCSTI, TIOCLINUX}) {
    add(ctx, eperm, "ioctl", {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, req)}, "tty injection");
  }
  // socket families: AF_UNIX (1), AF_INET (2) and AF_INET6 (10) only.
  for (const char* call : {"socket", "socketpair"}) {
    add(ctx, eperm, call, {SCMP_A0(SCMP_CMP_EQ, 0)}, "AF_UNSPEC");
    for (int fam = 3; fam <= 9; ++fam) {
      add(ctx, eperm, call, {SCMP_A0(SCMP_CMP_EQ, uint64_t(fam))}, "family");
    }
    add(ctx, eperm, call, {SCMP_A0(SCMP_CMP_GE, 11)}, "family");
  }
}

SeccompFilter::~SeccompFilter() {
  seccomp_release(static_cast<scmp_filter_ctx>(ctx_));
}

namespace {

std::string export_to_memfd(void* ctx, bool pfc) {
  int fd = memfd_create("kd-seccomp", MFD_CLOEXEC);
  if (fd < 0) throw_sys("seccomp: memfd_create", "kd-seccomp", errno);
  int r = pfc ? seccomp_export_pfc(static_cast<scmp_filter_ctx>(ctx), fd)
              : seccomp_export_bpf(static_cast<scmp_filter_ctx>(ctx), fd);
  if (r != 0) {
    ::close(fd);
    throw_sys(pfc ? "seccomp: seccomp_export_pfc" : "seccomp: seccomp_export_bpf", "memfd", -r);
  }
  std::string out;
  char buf[8192];
  ::lseek(fd, 0, SEEK_SET);
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0)
    out.append(buf, size_t(n));
  ::close(fd);
  return out;
}

}  // namespace

std::string SeccompFilter::pfc() const {
  return export_to_memfd(ctx_, true);
}

std::vector<sock_filter> SeccompFilter::bpf() const {
  const std::string raw = export_to_memfd(ctx_, false);
  if (raw.empty() || raw.size() % sizeof(sock_filter) != 0) {
    throw Error("seccomp: seccomp_export_bpf produced " + std::to_string(raw.size()) + " bytes");
  }
  std::vector<sock_filter> prog(raw.size() / sizeof(sock_filter));
  std::memcpy(prog.data(), raw.data(), raw.size());
  return prog;
}

int load_seccomp(const std::vector<sock_filter>& program, bool new_listener) noexcept {
  sock_fprog prog{static_cast<unsigned short>(program.size()),
                  const_cast<sock_filter*>(program.data())};
  const unsigned flags = new_listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
  const long r = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (r < 0) return -1;
  return new_listener ? int(r) : 0;
}

std::string seccomp_load_error(const std::vector<sock_filter>& program, bool new_listener,
                               int err) {
  return sys_message(new_listener ? "seccomp: seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER)"
                                  : "seccomp: seccomp(SECCOMP_SET_MODE_FILTER)",
                     std::to_string(program.size()) + " instructions", err);
}

}  // namespace kd::sandbox
