#include "sandbox/box_program.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/policy_path.h"

namespace kd::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProgramName = "kdispatch-box";
constexpr int kControlFd = 3;  // where box_main.cc reads its control socket

// The spawn's file actions, the attributes, and their cleanup in one place.
class SpawnSetup {
 public:
  SpawnSetup() {
    if (int rc = ::posix_spawn_file_actions_init(&actions_))
      throw_sys("box: posix_spawn_file_actions_init", kProgramName, rc);
    if (int rc = ::posix_spawnattr_init(&attr_)) {
      ::posix_spawn_file_actions_destroy(&actions_);
      throw_sys("box: posix_spawnattr_init", kProgramName, rc);
    }
  }
  ~SpawnSetup() {
    ::posix_spawnattr_destroy(&attr_);
    ::posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

void check(int rc, const char* call) {
  if (rc != 0) throw_sys(std::string("box: ") + call, kProgramName, rc);
}

}  // namespace

fs::path box_program_path() {
  const fs::path next = executable_path().parent_path() / kProgramName;
  fs::path path = next;
  struct stat st;
  int found = ::stat(path.c_str(), &st);
  int err = errno;
  // A test or benchmark of the build tree sits below it, not beside the programs: it uses the
  // build's bin/, found as the policies are. An installed program has it beside itself.
  if (found != 0 && err == ENOENT) {
    if (const std::optional<fs::path> prefix = installation_prefix()) {
      if (const fs::path other = *prefix / "bin" / kProgramName; other != next) {
        found = ::stat(other.c_str(), &st);
        err = errno;
        if (found == 0) path = other;
      }
    }
  }
  if (found != 0) {
    throw Error("box: the box program " + quote(next.string()) + " cannot be used (stat: " +
                errno_name(err) + "); it is installed next to kdispatch");
  }
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
    throw Error("box: the box program " + quote(path.string()) +
                " is not an executable regular file");
  }
  return path;
}

pid_t spawn_box_program(int control_fd) {
  const fs::path program = box_program_path();
  SpawnSetup s;
  // dup2 onto itself would keep close-on-exec: move the socket off fd 3 first.
  int fd = control_fd;
  if (fd == kControlFd) {
    fd = ::fcntl(control_fd, F_DUPFD_CLOEXEC, kControlFd + 1);
    if (fd < 0) throw_sys("box: fcntl", "F_DUPFD_CLOEXEC control socket", errno);
  }
  struct CloseCopy {
    int fd, original;
    ~CloseCopy() {
      if (fd != original) ::close(fd);
    }
  } copy{fd, control_fd};
  check(::posix_spawn_file_actions_adddup2(&s.actions_, fd, kControlFd),
        "posix_spawn_file_actions_adddup2");
  check(::posix_spawn_file_actions_addclosefrom_np(&s.actions_, kControlFd + 1),
        "posix_spawn_file_actions_addclosefrom_np");
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  check(::posix_spawnattr_setsigmask(&s.attr_, &none), "posix_spawnattr_setsigmask");
  check(::posix_spawnattr_setsigdefault(&s.attr_, &all), "posix_spawnattr_setsigdefault");
  check(::posix_spawnattr_setflags(&s.attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF),
        "posix_spawnattr_setflags");
  std::string name = kProgramName;
  char* argv[] = {name.data(), nullptr};
  char* envp[] = {nullptr};
  pid_t pid = -1;
  if (int rc = ::posix_spawn(&pid, program.c_str(), &s.actions_, &s.attr_, argv, envp))
    throw_sys("box: posix_spawn", program.string(), rc);
  return pid;
}

}  // namespace kd::sandbox
