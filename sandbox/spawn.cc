#include "sandbox/spawn.h"

#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "common/errors.h"
#include "common/fd.h"
#include "sandbox/command_exec.h"
#include "sandbox/fds.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/seccomp_notify.h"
#include "sandbox/signals.h"
#include "sandbox/wire.h"

namespace kd::sandbox {
namespace {

// The box's pid 1 is single-threaded, so a raw clone is as safe as fork here.
pid_t clone_child(unsigned long flags) {
  return pid_t(::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

[[noreturn]] void fail_setup(int reply_fd, const std::string& message) {
  wire::write_frame(reply_fd, wire::Frame::SetupError, message);
  ::_exit(125);
}

void write_all(int fd, const std::string& text) {
  for (size_t off = 0; off < text.size();) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader is gone: nobody left to tell
    off += size_t(n);
  }
}

#if !defined(__SANITIZE_ADDRESS__)
int exec_entry(void* plan) {
  exec_command(*static_cast<CommandPlan*>(plan));
}
#endif

// The command shares the caller's memory until it execs (as posix_spawn does), on its own
// stack: no page tables are copied, and the caller waits until the exec or the exit.
pid_t clone_command(CommandPlan& plan) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer cannot follow a child running on a stack of its own (its reports become
  // false positives written into the command's stderr): sanitizer builds pay a plain fork, and
  // the caller waits on the report socket instead.
  pid_t pid = ::fork();
  if (pid == 0) exec_command(plan);
  return pid;
#else
  constexpr size_t kStack = 1 << 20;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -1;
  pid_t pid = ::clone(exec_entry, static_cast<char*>(stack) + kStack,
                      CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  int e = errno;
  ::munmap(stack, kStack);  // the child has exec'd or exited
  errno = e;
  return pid;
#endif
}

// What the command's process sent before it exec'd or exited: its seccomp listener, a failed
// step, or both (a listener handed over before an exec that failed).
struct ChildReport {
  int listener = -1;
  StepFailure failure;
};

// Reads until the child's end is closed, by its exec (close-on-exec) or its exit. A broken
// socket counts as the end: the child's exit status still tells.
ChildReport read_report(int sock) {
  ChildReport r;
  for (;;) {
    std::string msg;
    std::vector<int> fds;
    try {
      if (!recv_with_fds(sock, msg, fds, 1, sizeof(StepFailure))) break;
    } catch (const Error&) {
      break;
    }
    for (int fd : fds) {
      if (r.listener < 0) {
        r.listener = fd;
      } else {
        ::close(fd);
      }
    }
    if (msg.size() == sizeof(StepFailure)) std::memcpy(&r.failure, msg.data(), sizeof r.failure);
  }
  return r;
}

// Spawns the command and takes its seccomp listener (-1 when the profile has none or the
// command failed before loading the filter). A step that failed is reported here: a setup
// error on `reply_fd`, an exec that failed on the command's stderr. Throws kd::Error when the
// command cannot be prepared; pid -1 (errno set) when the clone failed.
Spawned start_command(const Confinement& c, const CommandSpec& cmd, int reply_fd, int in, int out,
                      int err) {
  int sock[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) != 0) {
    throw_sys("box: socketpair", "command report", errno);
  }
  const UniqueFd ours(sock[0]);
  UniqueFd theirs(sock[1]);
  CommandPlan plan(c, cmd, in, out, err, theirs.get());
  Spawned s;
  s.pid = clone_command(plan);
  const int clone_errno = errno;
  theirs.reset();
  if (s.pid < 0) {
    errno = clone_errno;
    return s;
  }
  const ChildReport report = read_report(ours.get());
  s.listener = report.listener;
  if (report.failure.step == Step::Exec) {
    write_all(err, plan.exec_error(report.failure.err));
  } else if (report.failure) {
    wire::write_frame(reply_fd, wire::Frame::SetupError, plan.describe(report.failure));
  }
  return s;
}

// Receives the command's seccomp notifications and reports each denial on `reply_fd` as it
// happens, reaps whatever ends up with this process, and returns the command's wait status.
// SIGCHLD must be blocked.
int supervise(pid_t command, int listener, int reply_fd) {
  DenialLog log;
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  const int sig_fd = ::signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  for (;;) {
    pollfd pfd[2] = {{sig_fd, POLLIN, 0}, {listener, POLLIN, 0}};
    // Without a signalfd (no descriptors left), waitpid's own wake-ups pace the loop.
    if (::poll(pfd, 2, sig_fd < 0 ? 10 : -1) < 0 && errno != EINTR) break;
    if (pfd[1].revents & POLLIN) {
      if (!log.serve(listener)) close_fd(listener);
      const std::string frame = log.take();
      if (!frame.empty()) wire::write_frame(reply_fd, wire::Frame::Denials, frame);
    } else if (pfd[1].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      close_fd(listener);
    }
    if (sig_fd >= 0 && (pfd[0].revents & POLLIN)) {
      signalfd_siginfo info;
      while (::read(sig_fd, &info, sizeof info) == ssize_t(sizeof info)) {
      }
    }
    int st;
    pid_t p;
    while ((p = ::waitpid(-1, &st, WNOHANG)) > 0) {
      if (p == command) {
        close_fd(listener);
        if (sig_fd >= 0) ::close(sig_fd);
        const std::string frame = log.take(true);
        if (!frame.empty()) wire::write_frame(reply_fd, wire::Frame::Denials, frame);
        return st;
      }
    }
    if (p < 0 && errno == ECHILD) break;
  }
  // Unreachable short of a broken poll: stop supervising (pending calls get ENOSYS, still not
  // made) and wait for the command plainly; never report a status that was not seen.
  close_fd(listener);
  if (sig_fd >= 0) ::close(sig_fd);
  int status = SIGKILL;
  while (::waitpid(command, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Pid 1 of the command's namespace: a pid-namespace init ignores default-action signals, so
// the command runs as its child (and gets SIGXCPU, SIGPIPE, SIGTERM as usual) while this
// process supervises its listener, reaps, reports the command's status and denials and, by
// exiting, ends whatever is left. Its steps in the order of steps.h.
[[noreturn]] void run_command_init(const Confinement& c, const CommandSpec& cmd, int reply_fd,
                                   int in, int out, int err) {
  Progress progress;
  Spawned command;
  try {
    progress.at(Step::InitSignals);
    reset_child_signals();
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &chld, nullptr);  // the command resets its own mask
    progress.at(Step::SpawnCommand);
    command = start_command(c, cmd, reply_fd, in, out, err);
    if (command.pid < 0) throw_sys("pid namespace: clone", "command", errno);
  } catch (const std::exception& e) {
    fail_setup(reply_fd, progress.message(e));
  }
  for (int fd : {in, out, err})
    ::close(fd);
  const int status = supervise(command.pid, command.listener, reply_fd);
  // What the command left behind is killed and reaped before its status goes out: the caller
  // returns on CommandStatus without waiting for the box's pid 1 to reap this process.
  ::kill(-1, SIGKILL);
  while (::waitpid(-1, nullptr, __WALL) > 0 || errno == EINTR) {
  }
  wire::Writer w;
  w.u64(uint64_t(status));
  ::_exit(wire::write_frame(reply_fd, wire::Frame::CommandStatus, w.bytes()) ? 0 : 1);
}

}  // namespace

Spawned spawn_command(const Confinement& c, const CommandSpec& cmd, int reply_fd, int in, int out,
                      int err, bool own_pid_namespace) {
  if (!own_pid_namespace) return start_command(c, cmd, reply_fd, in, out, err);
  Spawned init;
  init.pid = clone_child(CLONE_NEWPID);
  if (init.pid == 0) run_command_init(c, cmd, reply_fd, in, out, err);
  return init;
}

pid_t spawn_file_op(const Confinement& c, FileRequest::Op op, const std::string& path,
                    uint64_t max_bytes, int reply_fd, int data_fd) {
  pid_t pid = clone_child(0);
  if (pid != 0) return pid;
  try {
    reset_child_signals();
    if (::chdir(c.worktree.c_str()) != 0) throw_sys("file: chdir", c.worktree, errno);
    const ConfinePlan plan = plan_confinement(c, false);
    if (StepFailure f = confine(plan)) throw Error(describe(f, plan));
    if (load_seccomp(c.seccomp_files) < 0)
      throw Error(seccomp_load_error(c.seccomp_files, false, errno));
  } catch (const std::exception& e) {
    fail_setup(reply_fd, e.what());
  }
  const FileResult r = perform_file_op(op, path, max_bytes, data_fd);
  ::_exit(wire::write_frame(reply_fd, wire::Frame::FileResult, encode_file_result(r)) ? 0 : 1);
}

}  // namespace kd::sandbox
