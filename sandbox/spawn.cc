#include "sandbox/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "common/errors.h"
#include "sandbox/fds.h"
#include "sandbox/landlock.h"
#include "sandbox/rlimits.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/seccomp_notify.h"
#include "sandbox/userns.h"
#include "sandbox/wire.h"

namespace kd::sandbox {
namespace {

// The box's pid 1 is single-threaded, so a raw clone is as safe as fork here.
pid_t clone_child(unsigned long flags) {
  return pid_t(::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

// Everything but exec, in the order the kernel requires: namespace switches need the
// capabilities that are dropped later; Landlock needs no_new_privs; seccomp comes last so the
// setup itself is not filtered.
void confine(const Confinement& c, bool use_chip) {
  if (use_chip && ::setns(c.chip_ns_fd, CLONE_NEWNS) != 0)
    throw_sys("mount: setns", "chip view", errno);
  // When the box's memory runs out, the command is the one the OOM killer takes, never the
  // box's pid 1 that reports its status. Raising the score needs no privilege.
  if (int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); fd >= 0) {
    if (::write(fd, "1000", 4) != 4) {
      // Best effort: the memory limit still holds, only the choice of victim is at stake.
    }
    ::close(fd);
  }
  apply_rlimits(c.limits, c.nproc_backstop);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    throw_sys("no_new_privs: prctl", "PR_SET_NO_NEW_PRIVS", errno);
  if (c.landlock_fd >= 0) landlock_restrict(c.landlock_fd);
  drop_all_capabilities();
  assert_unprivileged();
  cloexec_from_3();
}

void unblock_all_signals() {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Undoes what pid 1 set for itself after reset_all_signals: SIGPIPE ignored, SIGCHLD blocked.
void reset_signals() {
  ::signal(SIGPIPE, SIG_DFL);
  unblock_all_signals();
}

[[noreturn]] void fail_setup(int reply_fd, const std::string& message) {
  wire::write_frame(reply_fd, wire::Frame::SetupError, message);
  ::_exit(125);
}

void move_fd(int from, int to) {
  if (from == to) {
    ::fcntl(to, F_SETFD, 0);
    return;
  }
  if (::dup2(from, to) < 0)
    throw_sys("fds: dup2", std::to_string(from) + " -> " + std::to_string(to), errno);
}

}  // namespace

void reset_all_signals() {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  unblock_all_signals();
}

namespace {

[[noreturn]] void exec_command(const Confinement& c, const CommandSpec& cmd, int reply_fd, int in,
                               int out, int err, int notify_sock) {
  try {
    reset_signals();
    move_fd(in, 0);
    move_fd(out, 1);
    move_fd(err, 2);
    if (::setsid() < 0) throw_sys("pid namespace: setsid", "command", errno);
    const std::string cwd = cmd.cwd.empty() ? c.worktree : cmd.cwd;
    if (::chdir(cwd.c_str()) != 0) throw_sys("run: chdir", cwd, errno);
    confine(c, cmd.use_chip);
  } catch (const std::exception& e) {
    fail_setup(reply_fd, e.what());
  }
  std::vector<char*> argv, envp;
  for (const auto& a : cmd.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : cmd.env)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  environ = envp.data();
  try {
    // The listener is close-on-exec: the command never holds it, only its supervisor.
    const int listener = load_seccomp(c.seccomp, c.notify);
    if (c.notify) send_with_fds(notify_sock, "L", {listener});
  } catch (const std::exception& e) {
    fail_setup(reply_fd, e.what());
  }
  ::execvp(argv[0], argv.data());
  int e = errno;
  std::string msg = "sandbox: execvp(" + quote(cmd.argv[0]) + "): " + errno_name(e) + "\n";
  ssize_t ignored = ::write(2, msg.data(), msg.size());
  (void)ignored;
  ::_exit(e == ENOENT ? 127 : 126);
}

#if !defined(__SANITIZE_ADDRESS__)
struct ExecArgs {
  const Confinement* c;
  const CommandSpec* cmd;
  int reply_fd, in, out, err, notify_sock;
};

int exec_entry(void* p) {
  auto* a = static_cast<ExecArgs*>(p);
  exec_command(*a->c, *a->cmd, a->reply_fd, a->in, a->out, a->err, a->notify_sock);
}
#endif

}  // namespace

namespace {

// The command shares the caller's memory until it execs (as posix_spawn does), on its own
// stack: no page tables are copied, and the caller waits until the exec or the exit.
pid_t clone_command(const Confinement& c, const CommandSpec& cmd, int reply_fd, int in, int out,
                    int err, int notify_sock) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer cannot follow a child running on a stack of its own (its reports become
  // false positives written into the command's stderr): sanitizer builds pay a plain fork.
  pid_t pid = ::fork();
  if (pid == 0) exec_command(c, cmd, reply_fd, in, out, err, notify_sock);
  return pid;
#else
  constexpr size_t kStack = 1 << 20;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -1;
  ExecArgs args{&c, &cmd, reply_fd, in, out, err, notify_sock};
  pid_t pid = ::clone(exec_entry, static_cast<char*>(stack) + kStack,
                      CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  int e = errno;
  ::munmap(stack, kStack);  // the child has exec'd or exited
  errno = e;
  return pid;
#endif
}

// Spawns the command and takes its seccomp listener (-1 when the profile has none or the
// command failed before loading the filter). Throws kd::Error when the hand-over socket cannot
// be made; pid -1 (errno set) when the clone failed.
Spawned start_command(const Confinement& c, const CommandSpec& cmd, int reply_fd, int in, int out,
                      int err) {
  int sock[2] = {-1, -1};
  Spawned s;
  if (c.notify && ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) != 0) {
    throw_sys("seccomp: socketpair", "listener hand-over", errno);
  }
  s.pid = clone_command(c, cmd, reply_fd, in, out, err, sock[1]);
  const int clone_errno = errno;
  close_fd(sock[1]);
  if (s.pid > 0 && sock[0] >= 0) {
    // The child sent it before exec, or closed its end by exec or exit: this never blocks
    // for long (a fork-based sanitizer build waits for the child's setup).
    std::string msg;
    std::vector<int> fds;
    try {
      if (recv_with_fds(sock[0], msg, fds, 1) && fds.size() == 1) s.listener = fds[0];
    } catch (const Error&) {
      // No listener: the command failed its setup and reports that itself.
    }
  }
  close_fd(sock[0]);
  errno = clone_errno;
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

}  // namespace

Spawned spawn_command(const Confinement& c, const CommandSpec& cmd, int reply_fd, int in, int out,
                      int err, bool own_pid_namespace) {
  if (!own_pid_namespace) return start_command(c, cmd, reply_fd, in, out, err);
  Spawned init;
  init.pid = clone_child(CLONE_NEWPID);
  if (init.pid != 0) return init;
  // Pid 1 of the command's namespace: a pid-namespace init ignores default-action signals,
  // so the command runs as its child (and gets SIGXCPU, SIGPIPE, SIGTERM as usual) while this
  // process supervises its listener, reaps, reports the command's status and denials and, by
  // exiting, ends whatever is left.
  reset_signals();
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);  // the command resets its own mask
  Spawned command;
  try {
    command = start_command(c, cmd, reply_fd, in, out, err);
  } catch (const Error& e) {
    fail_setup(reply_fd, e.what());
  }
  if (command.pid < 0) fail_setup(reply_fd, sys_message("pid namespace: clone", "command", errno));
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

pid_t spawn_file_op(const Confinement& c, FileRequest::Op op, const std::string& path,
                    uint64_t max_bytes, int reply_fd, int data_fd) {
  pid_t pid = clone_child(0);
  if (pid != 0) return pid;
  FileResult r;
  try {
    reset_signals();
    if (::chdir(c.worktree.c_str()) != 0) throw_sys("file: chdir", c.worktree, errno);
    confine(c, false);
    load_seccomp(c.seccomp_files);
  } catch (const std::exception& e) {
    fail_setup(reply_fd, e.what());
  }
  r = perform_file_op(op, path, max_bytes, data_fd);
  ::_exit(wire::write_frame(reply_fd, wire::Frame::FileResult, encode_file_result(r)) ? 0 : 1);
}

}  // namespace kd::sandbox
