// File descriptors crossing into and out of the box: passing them over a Unix socket, and the
// hygiene before exec (only 0-2 survive).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/fd.h"
#include "sandbox/steps.h"

namespace kd::sandbox {

// Marks every descriptor from 3 up close-on-exec, so a command inherits only 0, 1 and 2 while
// the spawning code can still report errors until the exec. A system call only, usable between
// clone and exec; Step::CloseOnExec when it fails.
StepFailure cloexec_from_3() noexcept;

// The largest request the box accepts (argv, environment and paths of one call).
inline constexpr size_t kMaxMessage = 128 * 1024;
// The most descriptors one datagram carries (a Run request's four streams).
inline constexpr size_t kMaxPassedFds = 4;

// Sends one datagram (SOCK_SEQPACKET) with up to kMaxPassedFds descriptors attached, in one
// sendmsg and without allocating (usable between clone and exec). Returns 0 or the errno
// (EMSGSIZE for a short send, EINVAL for too many descriptors).
int send_datagram(int sock, const void* data, size_t size, const int* fds, size_t nfds) noexcept;

// send_datagram for the rest of the code; throws kd::Error.
void send_with_fds(int sock, const std::string& data, const std::vector<int>& fds);

// Receives one datagram of up to `max_bytes` and up to `max_fds` descriptors (made
// close-on-exec). Returns false on end of stream; throws kd::Error on failure.
bool recv_with_fds(int sock, std::string& data, std::vector<int>& fds, size_t max_fds,
                   size_t max_bytes = kMaxMessage);

// A pipe (read end first) or a stream socketpair, both ends close-on-exec; throws kd::Error
// naming the call.
struct FdPair {
  UniqueFd first, second;
};
FdPair make_pipe();
FdPair make_stream_pair();

// Closes a descriptor if open and sets it to -1.
void close_fd(int& fd);

}  // namespace kd::sandbox
