// Seccomp denials made observable: the filter sends each call on its deny-list to a listener
// (SECCOMP_RET_USER_NOTIF) held by the process that supervises the command, which records the
// call (system call name, pid, a summary of the arguments) and answers kDeniedErrno. The
// decision is the filter's: the supervisor never lets a call continue, so the time-of-check
// problems of user notification as a policy (seccomp_unotify(2)) do not arise; if the
// supervisor is gone, the kernel answers ENOSYS and the call is still not made.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/result.h"

namespace kd::sandbox {

// Whether the kernel offers SECCOMP_RET_USER_NOTIF (SECCOMP_GET_ACTION_AVAIL).
bool seccomp_notify_available();

// The denials of one command, in the single-threaded process that holds its listener.
class DenialLog {
 public:
  static constexpr size_t kMaxRecorded = 64;  // further ones are only counted

  // Receives one pending notification on `listener`, records it and answers it. False when the
  // listener is unusable (its filter has no process left, or it failed): close it then.
  bool serve(int listener);

  const std::vector<Denial>& denials() const { return denials_; }
  uint64_t dropped() const { return dropped_; }

  // The payload of a wire::Frame::Denials with what was recorded since the last call, or ""
  // when nothing was. Sent as they happen, so a command killed at its deadline still has its
  // denials reported; `final` adds the count of those only counted.
  std::string take(bool final = false);
  // Back into denials; a count of dropped ones becomes one summary entry.
  static std::vector<Denial> decode(const std::string& payload);

 private:
  std::vector<Denial> denials_;
  size_t sent_ = 0;
  uint64_t dropped_ = 0;
};

// "socket(AF_PACKET, 0x3, 0x0)": the call's name and the arguments that say what was asked
// (never memory the call points to: reading it would race the caller).
std::string describe_syscall(int nr, const uint64_t (&args)[6]);

}  // namespace kd::sandbox
