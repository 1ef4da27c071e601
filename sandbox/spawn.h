// Spawning inside the box: every command and file operation is a child of the box's pid 1 (or
// of its command's init) that confines itself (chip view, rlimits, no_new_privs, Landlock, no
// capabilities, fds, seccomp) and checks the result before it runs anything of the agent's.
// A command's process shares its parent's memory until it execs and makes system calls only
// (command_exec.h); a file operation's is a plain fork and runs ordinary code.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/file_op.h"
#include "sandbox/profile.h"

namespace kd::sandbox {

struct Confinement {
  int chip_ns_fd = -1;   // mount namespace with the chip's device nodes
  int landlock_fd = -1;  // -1 when the profile turned Landlock off or it is best-effort absent
  std::vector<sock_filter> seccomp;        // for commands: DenyAction::Notify when notify
  std::vector<sock_filter> seccomp_files;  // for file operations: DenyAction::Errno
  bool notify = false;                     // commands hand their listener to a supervisor
  Limits limits;
  bool nproc_backstop = false;
  std::string worktree;
};

struct CommandSpec {
  std::vector<std::string> argv, env;
  std::string cwd;
  bool use_chip = false;
};

struct Spawned {
  pid_t pid = -1;     // -1 if no process
  int listener = -1;  // the command's seccomp listener, for the caller to supervise
};

// A command, by default under an init of its own pid namespace: when it exits, whatever it
// left behind is killed, and that init supervises its seccomp listener and sends a Denials
// frame before CommandStatus. Without (a box that runs one command and closes) it is a direct
// child and the listener is returned. Setup failures go to `reply_fd` as a SetupError frame
// (exit 125); a command that cannot be executed exits 127 (126: not executable) with the
// reason on its stderr.
Spawned spawn_command(const Confinement& c, const CommandSpec& cmd, int reply_fd, int in, int out,
                      int err, bool own_pid_namespace);

// A file operation done by a confined child without exec, a plain fork that may allocate and
// throw; the result goes to `reply_fd` as a FileResult frame. `data_fd` carries the bytes of a
// Write.
pid_t spawn_file_op(const Confinement& c, FileRequest::Op op, const std::string& path,
                    uint64_t max_bytes, int reply_fd, int data_fd);

}  // namespace kd::sandbox
