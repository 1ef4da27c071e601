// kdispatch-box: the program the dispatcher starts (posix_spawn, no fork of the dispatcher) for
// every box. Started, it is the holder: it reads the InitConfig from the control socket (fd 3),
// detaches the caller's sources and drops to the box's user when started as root, makes the
// namespaces and forks the box's pid 1, a copy of this small program whose forks (one per
// command) are cheap. Pid 1 is made with CLONE_PARENT, a child of the dispatcher: the holder
// reports its pid and exits, and on teardown the dispatcher waits for pid 1 itself.
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <string>
#include <vector>

#include "common/errors.h"
#include "sandbox/box_init.h"
#include "sandbox/fds.h"
#include "sandbox/mount_tree.h"
#include "sandbox/steps.h"
#include "sandbox/userns.h"

namespace {

using namespace kd::sandbox;

constexpr int kControlFd = 3;

void report(Startup kind, const std::string& text) {
  send_with_fds(kControlFd, std::string(1, char(kind)) + text, {});
}

// The holder's stage, its steps in the order of steps.h.
[[noreturn]] void hold(Progress& progress) {
  progress.at(Step::ReadConfig);
  std::string msg;
  std::vector<int> fds;
  if (!recv_with_fds(kControlFd, msg, fds, 0)) ::_exit(0);  // the dispatcher gave up
  InitConfig cfg = decode_init_config(msg);
  // Root reaches sources the box's user may not (a worktree under a root-only directory):
  // their detached copies are made before the drop and carried into the box as fds.
  if (cfg.as_root) {
    if (::geteuid() != 0)
      throw kd::Error("box: started as uid " + std::to_string(::geteuid()) +
                      " with a configuration for root");
    progress.at(Step::DetachSources);
    clone_sources(cfg.plan);
    progress.at(Step::DropHostCredentials);
    drop_host_credentials(cfg.uid, cfg.gid);
  }
  progress.at(Step::UserNamespace);
  enter_user_namespace(cfg.uid, cfg.gid);
  progress.at(Step::Namespaces);
  const int flags =
      CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (::unshare(flags) != 0)
    kd::throw_sys("namespaces: unshare", "NEWNS|NEWPID|NEWNET|NEWIPC|NEWUTS|NEWCGROUP", errno);
  if (!cfg.as_root) {
    progress.at(Step::DetachSources);
    clone_sources(cfg.plan);
  }
  progress.at(Step::StartPid1);
  // Single-threaded, so a raw clone is as safe as fork. CLONE_PARENT takes this process's
  // exit signal (SIGCHLD) for the child.
  const pid_t init = pid_t(::syscall(SYS_clone, CLONE_PARENT, nullptr, nullptr, nullptr, nullptr));
  if (init < 0) kd::throw_sys("pid namespace: clone", "pid 1, CLONE_PARENT", errno);
  if (init == 0) box_init_main(cfg, kControlFd);
  report(Startup::Pid, std::to_string(init));
  ::_exit(0);
}

}  // namespace

int main() {
  Progress progress;
  try {
    hold(progress);
  } catch (const std::exception& e) {
    try {
      report(Startup::Error, progress.message(e));
    } catch (...) {
    }
  }
  // _exit everywhere: nothing of a process in a namespace of its own runs at-exit code.
  ::_exit(1);
}
