// Host-side access to paths an agent could have touched (receipts, finish payloads, transcripts
// read back, the commit tool, candidate snapshots; docs/receipts.md): resolved beneath a directory
// the host trusts, never through a symbolic link, a /proc magic link or onto another mount, and
// read only when the result is a regular file of bounded size. A FIFO, a device or a link there
// is refused with an error naming it, never waited on, read to the end or followed.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace kd {

// The most of a receipt (or any other JSON an agent leaves for the host) that is ever read.
inline constexpr std::uint64_t kMaxAgentJsonBytes = 16ull << 20;

// openat2(root_dirfd, rel, flags, RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS | extra_resolve);
// O_CLOEXEC is added and, unless the caller asks for O_PATH, O_NOFOLLOW, so a link at the last
// component is refused too. Returns the fd; throws kd::Error naming the path
// ("openat2(\"out\" beneath fd 5, RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS): EXDEV").
int open_beneath(int root_dirfd, const std::string& rel, int flags, mode_t mode = 0,
                 std::uint64_t extra_resolve = 0);

// Reads `rel` beneath the directory `dir`: opened with O_NOFOLLOW|O_NONBLOCK and
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV (no link anywhere on
// the path, no other mount), checked to be a regular file before it is opened for reading and
// again after, and read up to `max_bytes`. `dir` itself is opened as given. Throws kd::Error
// naming the path and the problem (not a regular file, over the cap, a link on the way).
std::string read_agent_file(const std::filesystem::path& dir, const std::filesystem::path& rel,
                            std::uint64_t max_bytes);
// The same with `path`'s parent as the trusted directory.
std::string read_agent_file(const std::filesystem::path& path, std::uint64_t max_bytes);

// Whether `rel` beneath `dir` is a regular file, resolved as read_agent_file does (an absolute
// path, "..", a link or a special file is "no"); nothing is opened for reading.
bool agent_regular_file(const std::filesystem::path& dir, const std::filesystem::path& rel);

}  // namespace kd
