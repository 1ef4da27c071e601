// The seccomp filter, built with libseccomp and evaluated in-process without being loaded.
#include "sandbox/seccomp_filter.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>

#include "common/errors.h"
#include "sandbox/seccomp_notify.h"
#include "tests/sandbox/bpf_eval.h"

namespace kd::sandbox {
namespace {

using kd::test::bpf_eval;
using kd::test::syscall_data;

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kEperm = SECCOMP_RET_ERRNO | EPERM;
constexpr uint32_t kEnosys = SECCOMP_RET_ERRNO | ENOSYS;
constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;

class SeccompFilterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prog_ = new std::vector<sock_filter>(SeccompFilter().bpf()); }
  static void TearDownTestSuite() { delete prog_; }
  uint32_t decide(int nr, std::initializer_list<uint64_t> args = {}) {
    return bpf_eval(*prog_, syscall_data(nr, args));
  }
  static std::vector<sock_filter>* prog_;
};
std::vector<sock_filter>* SeccompFilterTest::prog_ = nullptr;

TEST_F(SeccompFilterTest, OrdinaryCallsAreAllowed) {
  for (int nr :
       {SYS_read, SYS_write, SYS_openat, SYS_execve, SYS_getpid, SYS_mmap, SYS_exit_group}) {
    EXPECT_EQ(decide(nr), kAllow) << nr;
  }
  EXPECT_EQ(decide(SYS_clone, {SIGCHLD}), kAllow);
  EXPECT_EQ(decide(SYS_unshare, {CLONE_FILES}), kAllow);
  EXPECT_EQ(decide(SYS_ioctl, {1, TCGETS}), kAllow);
}

TEST_F(SeccompFilterTest, DenyListGetsEperm) {
  for (int nr : {SYS_mount,
                 SYS_umount2,
                 SYS_pivot_root,
                 SYS_chroot,
                 SYS_fsopen,
                 SYS_fsmount,
                 SYS_move_mount,
                 SYS_open_tree,
                 SYS_mount_setattr,
                 SYS_setns,
                 SYS_ptrace,
                 SYS_process_vm_readv,
                 SYS_process_vm_writev,
                 SYS_bpf,
                 SYS_perf_event_open,
                 SYS_userfaultfd,
                 SYS_keyctl,
                 SYS_add_key,
                 SYS_request_key,
                 SYS_io_uring_setup,
                 SYS_io_uring_enter,
                 SYS_io_uring_register,
                 SYS_kexec_load,
                 SYS_kexec_file_load,
                 SYS_init_module,
                 SYS_finit_module,
                 SYS_delete_module,
                 SYS_personality,
                 SYS_open_by_handle_at,
                 SYS_name_to_handle_at}) {
    EXPECT_EQ(decide(nr), kEperm) << nr;
  }
  EXPECT_EQ(decide(SYS_clone3), kEnosys);
}

TEST_F(SeccompFilterTest, NamespaceFlagsAreDeniedInCloneAndUnshare) {
  for (uint64_t flag : {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
                        CLONE_NEWUTS, CLONE_NEWCGROUP}) {
    EXPECT_EQ(decide(SYS_unshare, {flag}), kEperm) << flag;
    EXPECT_EQ(decide(SYS_clone, {flag | SIGCHLD}), kEperm) << flag;
    EXPECT_EQ(decide(SYS_unshare, {flag | CLONE_FILES}), kEperm) << flag;
  }
}

TEST_F(SeccompFilterTest, TtyInjectionIsComparedOnTheLow32Bits) {
  EXPECT_EQ(decide(SYS_ioctl, {0, TIOCSTI}), kEperm);
  EXPECT_EQ(decide(SYS_ioctl, {0, (0x123ULL << 32) | TIOCSTI}), kEperm);  // CVE-2019-10063
  EXPECT_EQ(decide(SYS_ioctl, {0, TIOCLINUX}), kEperm);
  EXPECT_EQ(decide(SYS_ioctl, {0, (1ULL << 63) | TIOCLINUX}), kEperm);
}

TEST_F(SeccompFilterTest, OnlyUnixAndInetSocketFamilies) {
  for (uint64_t fam : {AF_UNIX, AF_INET, AF_INET6})
    EXPECT_EQ(decide(SYS_socket, {fam, SOCK_STREAM}), kAllow) << fam;
  for (uint64_t fam :
       {0, AF_NETLINK, AF_PACKET, 40 /* AF_VSOCK */, AF_BLUETOOTH, AF_ALG, 3, 9, 11, 1000}) {
    EXPECT_EQ(decide(SYS_socket, {fam, SOCK_RAW}), kEperm) << fam;
  }
  EXPECT_EQ(decide(SYS_socketpair, {AF_NETLINK, SOCK_RAW}), kEperm);
  EXPECT_EQ(decide(SYS_socketpair, {AF_UNIX, SOCK_STREAM}), kAllow);
}

TEST_F(SeccompFilterTest, ForeignArchitecturesAndX32AreKilled) {
  EXPECT_EQ(bpf_eval(*prog_, syscall_data(20, {}, AUDIT_ARCH_I386)), kKill);
  EXPECT_EQ(bpf_eval(*prog_, syscall_data(20, {}, AUDIT_ARCH_AARCH64)), kKill);
  EXPECT_EQ(decide(0x40000000 | SYS_getpid), kKill);
  EXPECT_EQ(decide(0x40000000 | SYS_ptrace), kKill);
}

TEST(SeccompNotifyFilter, SameDecisionsHandedToTheSupervisor) {
  const auto notify = SeccompFilter(DenyAction::Notify).bpf();
  const auto plain = SeccompFilter(DenyAction::Errno).bpf();
  auto decide = [&](int nr, std::initializer_list<uint64_t> args) {
    return bpf_eval(notify, syscall_data(nr, args));
  };
  EXPECT_EQ(decide(SYS_mount, {}), SECCOMP_RET_USER_NOTIF);
  EXPECT_EQ(decide(SYS_unshare, {CLONE_NEWUSER}), SECCOMP_RET_USER_NOTIF);
  EXPECT_EQ(decide(SYS_ioctl, {0, (0x123ULL << 32) | TIOCSTI}), SECCOMP_RET_USER_NOTIF);
  EXPECT_EQ(decide(SYS_socket, {AF_NETLINK, SOCK_RAW}), SECCOMP_RET_USER_NOTIF);
  EXPECT_EQ(decide(SYS_clone3, {}), kEnosys);  // a redirection, not a denial
  EXPECT_EQ(decide(SYS_read, {}), kAllow);
  EXPECT_EQ(decide(SYS_socket, {AF_INET, SOCK_STREAM}), kAllow);
  EXPECT_EQ(bpf_eval(notify, syscall_data(20, {}, AUDIT_ARCH_I386)), kKill);
  // Call for call, notify wherever the plain filter says EPERM, the same answer elsewhere.
  for (int nr = 0; nr < 460; ++nr) {
    for (uint64_t a0 : {uint64_t(0), uint64_t(AF_PACKET), uint64_t(CLONE_NEWNS)}) {
      const uint32_t p = bpf_eval(plain, syscall_data(nr, {a0, TIOCSTI}));
      const uint32_t n = bpf_eval(notify, syscall_data(nr, {a0, TIOCSTI}));
      EXPECT_EQ(n, p == kEperm ? SECCOMP_RET_USER_NOTIF : p) << nr << " " << a0;
    }
  }
}

TEST(SeccompNotify, DescribesWhatWasAsked) {
  uint64_t socket_args[6] = {AF_VSOCK, SOCK_STREAM, 0, 0, 0, 0};
  EXPECT_EQ(describe_syscall(SYS_socket, socket_args), "socket(AF_VSOCK, 0x1, 0x0)");
  uint64_t unshare_args[6] = {CLONE_NEWUSER | CLONE_FILES, 0, 0, 0, 0, 0};
  EXPECT_EQ(describe_syscall(SYS_unshare, unshare_args), "unshare(CLONE_NEWUSER (0x10000400))");
  uint64_t ioctl_args[6] = {0, TIOCSTI, 0x7ffd0000, 0, 0, 0};
  EXPECT_EQ(describe_syscall(SYS_ioctl, ioctl_args), "ioctl(fd 0, 0x5412)");
  uint64_t mount_args[6] = {0, 0x1000, 0, 0x1020, 0, 0};
  EXPECT_EQ(describe_syscall(SYS_mount, mount_args), "mount(0x0, 0x1000, 0x0, ...)");
}

TEST(SeccompNotify, AMalformedDenialsFrameIsAnError) {
  EXPECT_EQ(DenialLog().take(true), "");  // nothing recorded, nothing to send
  EXPECT_THROW(DenialLog::decode(std::string("\x05", 1)), Error);
}

TEST_F(SeccompFilterTest, PseudoCodeShowsTheRules) {
  const std::string pfc = SeccompFilter().pfc();
  EXPECT_NE(pfc.find("x86_64"), std::string::npos);
  EXPECT_NE(pfc.find("ptrace"), std::string::npos);
  EXPECT_NE(pfc.find("io_uring_setup"), std::string::npos);
  EXPECT_NE(pfc.find("action ERRNO(1)"), std::string::npos);
  EXPECT_EQ(pfc.find("i386"), std::string::npos);  // only the native architecture is admitted
}

}  // namespace
}  // namespace kd::sandbox
