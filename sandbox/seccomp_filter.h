// The seccomp deny-list of DESIGN §5, built with libseccomp: EPERM for mounts and the new
// mount API, namespace creation, ptrace and process_vm_*, bpf, perf_event_open, userfaultfd,
// keyrings, io_uring, kexec and modules, personality, TIOCSTI/TIOCLINUX (compared on the low 32
// bits the kernel uses), socket families other than AF_UNIX/AF_INET/AF_INET6; clone3 gets
// ENOSYS so libc falls back to the inspectable clone; calls of any other architecture, x32
// included, kill the process.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

namespace kd::sandbox {

class SeccompFilter {
 public:
  SeccompFilter();  // builds the filter; throws kd::Error naming "seccomp" and the call
  ~SeccompFilter();
  SeccompFilter(const SeccompFilter&) = delete;
  SeccompFilter& operator=(const SeccompFilter&) = delete;

  std::string pfc() const;               // libseccomp's readable pseudo-code, for inspection
  std::vector<sock_filter> bpf() const;  // the program to load

 private:
  void* ctx_ = nullptr;
};

// Installs a program in the calling thread (no_new_privs must already be set).
void load_seccomp(const std::vector<sock_filter>& program);

}  // namespace kd::sandbox
