// The long-lived box of one agent session (docs/sandbox.md): the namespaces, the mount tree and the
// cgroup are made once in Box::open; every command or file operation is a child spawned inside
// them and confined again (Landlock, seccomp, no capabilities, rlimits) before it runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"
#include "contract/chips.h"
#include "sandbox/box_user.h"
#include "sandbox/file_op.h"
#include "sandbox/profile.h"
#include "sandbox/result.h"

namespace kd::sandbox {

class Cgroup;

struct BoxSpec {
  Profile profile;
  std::filesystem::path worktree;               // read-write (nodev,nosuid); the default cwd
  std::vector<std::filesystem::path> ro;        // read-only binds, e.g. the reference, wt/.git
  std::vector<std::filesystem::path> rw_extra;  // e.g. the author's artifact dir
  std::vector<std::filesystem::path> mask;      // no-peek paths: unreadable and empty inside
  std::optional<contract::Chip> chip;           // its devices and env only for use_chip calls
};

struct RunRequest {
  std::vector<std::string> argv;
  std::string cwd;                         // inside the box; empty = the worktree
  std::map<std::string, std::string> env;  // added to the profile's environment
  bool use_chip = false;                   // expose the chip's devices and env to this call
  double timeout_s = 0;                    // 0 = the profile's default
  std::string stdin_data;
};

class Box {
 public:
  // Builds every layer the profile asks for; throws kd::Error naming the layer that failed.
  static std::unique_ptr<Box> open(const BoxSpec& spec);
  Box(const Box&) = delete;
  Box& operator=(const Box&) = delete;
  ~Box();  // kills everything inside

  // Thread-safe and blocking. Throws kd::Error when the box itself is broken or a request is
  // refused before it runs (e.g. use_chip without a chip); a command's own failure is a result.
  RunResult run(const RunRequest& request);
  // Done by a forked child under exactly the confinement of commands, without exec.
  FileResult file(const FileRequest& request);

  pid_t init_pid() const { return init_pid_; }  // pid 1 of the box, as the host sees it

 private:
  Box() = default;
  friend RunResult exec_once(const BoxSpec& spec, const RunRequest& request);
  // Starts the box program and returns once pid 1 is reported and in the cgroup; the tree may
  // still be in the making (await_ready, which the first run() does).
  static std::unique_ptr<Box> start(const BoxSpec& spec);
  void read_startup_message();
  void await_ready();
  RunResult run(const RunRequest& request, bool own_pid_namespace);
  void send_request(const std::string& message, const std::vector<int>& fds);
  // Sends a request with the box's ends of its streams (closed here once pid 1 holds them) and
  // waits until pid 1 built every layer.
  void send_call(const std::string& request, std::vector<UniqueFd> box_ends);
  void shutdown();

  std::mutex send_mu_;
  UniqueFd control_;
  pid_t holder_pid_ = -1;  // kdispatch-box as started; it exits once pid 1 is made
  pid_t init_pid_ = -1;    // also a child of this process (CLONE_PARENT)
  bool ready_ = false;     // pid 1 built every layer
  std::chrono::steady_clock::time_point startup_deadline_;
  std::unique_ptr<Cgroup> cgroup_;
  Profile profile_;
  std::optional<contract::Chip> chip_;
  bool notify_ = false;  // seccomp denials are observed
};

// A fresh box for a single command (the CLI): open, run, close. Returns when everything that
// ran inside is gone.
RunResult exec_once(const BoxSpec& spec, const RunRequest& request);

}  // namespace kd::sandbox
