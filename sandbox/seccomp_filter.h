// The seccomp deny-list (docs/sandbox.md), built with libseccomp: EPERM for mounts and the new
// mount API, namespace creation, ptrace and process_vm_*, bpf, perf_event_open, userfaultfd,
// keyrings, io_uring, kexec and modules, personality, TIOCSTI/TIOCLINUX (compared on the low 32
// bits the kernel uses), socket families other than AF_UNIX/AF_INET/AF_INET6; clone3 gets
// ENOSYS so libc falls back to the inspectable clone; calls of any other architecture, x32
// included, kill the process.
#pragma once

#include <linux/filter.h>

#include <cerrno>

#include <string>
#include <vector>

namespace kd::sandbox {

// What a call on the deny-list gets from the filter. Notify hands it to the supervisor holding
// the listener (seccomp_notify.h), which records it and answers kDeniedErrno; the decision is
// the filter's either way, the supervisor never lets a call through. Errno answers in the
// kernel and leaves no record.
enum class DenyAction { Errno, Notify };
inline constexpr int kDeniedErrno = EPERM;

class SeccompFilter {
 public:
  // Builds the filter; throws kd::Error naming "seccomp" and the call.
  explicit SeccompFilter(DenyAction action = DenyAction::Errno);
  ~SeccompFilter();
  SeccompFilter(const SeccompFilter&) = delete;
  SeccompFilter& operator=(const SeccompFilter&) = delete;

  std::string pfc() const;               // libseccomp's readable pseudo-code, for inspection
  std::vector<sock_filter> bpf() const;  // the program to load

 private:
  void* ctx_ = nullptr;
};

// Installs a program in the calling thread (no_new_privs must already be set): a system call
// only, usable between clone and exec. With `new_listener`, returns the close-on-exec listener
// of its notifications, else 0; -1 with errno set when the kernel refused.
int load_seccomp(const std::vector<sock_filter>& program, bool new_listener = false) noexcept;

// The message for a refused load_seccomp: "seccomp: seccomp(SECCOMP_SET_MODE_FILTER)(...): E".
std::string seccomp_load_error(const std::vector<sock_filter>& program, bool new_listener, int err);

}  // namespace kd::sandbox
