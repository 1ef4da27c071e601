// A file operation of the agent's (read, write, list, stat) and its result. It is done inside the
// box by a confined child of pid 1 (spawn_file_op in spawn.h), without exec; the result comes
// back to the host as one FileResult frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/result.h"

namespace kd::sandbox {

struct FileRequest {
  enum Op { Read, Write, List, Stat } op = Read;
  std::string path;            // inside the box; relative to the worktree unless absolute
  std::string data;            // Write
  size_t max_bytes = 1 << 20;  // Read
};

struct FileResult {
  bool ok = false;
  int err = 0;        // errno of the failed call
  std::string error;  // "open(\"ref.py\", O_WRONLY|O_CREAT|O_TRUNC): EROFS"
  std::string data;   // Read: the bytes (up to max_bytes)
  bool truncated = false;
  std::vector<std::pair<std::string, char>> entries;  // List: name, 'f' 'd' 'l' 'c' 'b' 'p' 's'
  char type = 0;                                      // Stat
  uint64_t size = 0;                                  // Stat
  uint32_t mode = 0;                                  // Stat: permission bits
  // A refusal by the sandbox, told apart from a missing file: "mount" (EROFS), "landlock"
  // (EACCES where the file's mode and the mount allow the access) or "permissions" (EACCES by
  // the file's mode; a no-peek path is an empty mode-0 file).
  std::vector<Denial> denials;
};

// Done in the calling process, which is already confined: a failure is a result naming the call
// and, for a refusal, the layer. `data_fd` carries the bytes of a Write.
FileResult perform_file_op(FileRequest::Op op, const std::string& path, uint64_t max_bytes,
                           int data_fd);

std::string encode_file_result(const FileResult& r);
FileResult decode_file_result(const std::string& payload);

}  // namespace kd::sandbox
