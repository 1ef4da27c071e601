#include "sandbox/box_init.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <map>
#include <memory>

#include "common/errors.h"
#include "common/fd.h"
#include "sandbox/fds.h"
#include "sandbox/ipc_uts.h"
#include "sandbox/landlock.h"
#include "sandbox/mount_tree.h"
#include "sandbox/netns.h"
#include "sandbox/seccomp_notify.h"
#include "sandbox/signals.h"
#include "sandbox/spawn.h"
#include "sandbox/steps.h"
#include "sandbox/wire.h"

namespace kd::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  UniqueFd reply;
  Clock::time_point deadline;
  bool timed_out = false;
  bool sole = false;  // the box's only command, without an init of its own
  UniqueFd listener;  // a sole command's seccomp listener: this process supervises it
  std::unique_ptr<DenialLog> log;
};
using Children = std::map<pid_t, Child>;

void send_startup(int fd, Startup kind, const std::string& text) {
  send_with_fds(fd, std::string(1, char(kind)) + text, {});
}

// The Landlock ruleset for the paths as this mount namespace shows them; -1 without Landlock.
int landlock_ruleset(const InitConfig& cfg, bool with_chip) {
  if (cfg.landlock_abi <= 0) return -1;
  LandlockPaths paths;
  paths.write.push_back(cfg.plan.worktree);
  for (const auto& p : cfg.plan.rw_extra)
    paths.write.push_back(p);
  for (const auto& t : cfg.plan.tmpfs)
    paths.write.push_back(t.path);
  paths.devices.push_back("/dev");
  if (with_chip) {
    for (const auto& d : cfg.plan.devices)
      paths.devices.push_back(d);
  }
  return make_landlock_ruleset(paths, cfg.landlock_abi);
}

// Two views of one tree: the chip's device nodes exist only in the second, kept open as
// `chip_ns_fd`. Landlock rules attach to inodes, which both views share, so the ruleset is
// made there. Returns in the plain view, not yet entered.
void make_chip_view(InitConfig& cfg, Confinement& c) {
  const UniqueFd plain(::open("/newroot/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
  if (!plain) throw_sys("mount: open", "/proc/self/ns/mnt", errno);
  if (::unshare(CLONE_NEWNS) != 0) throw_sys("mount: unshare", "CLONE_NEWNS (chip view)", errno);
  c.chip_ns_fd = ::open("/newroot/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  if (c.chip_ns_fd < 0) throw_sys("mount: open", "/proc/self/ns/mnt (chip view)", errno);
  add_device_nodes(cfg.plan);
  enter_tree();
  c.landlock_fd = landlock_ruleset(cfg, true);
  if (::setns(plain.get(), CLONE_NEWNS) != 0) throw_sys("mount: setns", "plain view", errno);
}

// Pid 1's own signals: SIGCHLD read from the returned signalfd, SIGPIPE ignored. No
// parent-death signal: the parent is a thread of the dispatcher (CLONE_PARENT), which may end
// while the dispatcher lives on; the end of the dispatcher closes the control socket, and pid 1
// exits on that end of stream.
int pid1_signals() {
  // The dispatcher may have inherited ignored signals (SIGXCPU, SIGXFSZ) that survive exec and
  // would disarm the rlimits: start clean once, so a command only undoes what is set here.
  reset_all_signals();
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  const int sig_fd = ::signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sig_fd < 0) throw_sys("pid namespace: signalfd", "SIGCHLD", errno);
  return sig_fd;
}

struct Pid1 {
  int sig_fd = -1;
  Confinement confinement;  // what each child applies to itself
};

// Pid 1's stage, its steps in the order of steps.h: its signals, then every layer of the box.
Pid1 start_pid1(InitConfig& cfg, Progress& progress) {
  Pid1 pid1;
  progress.at(Step::Pid1Signals);
  pid1.sig_fd = pid1_signals();
  progress.at(Step::Hostname);
  set_box_hostname(cfg.hostname);
  progress.at(Step::Loopback);
  bring_loopback_up();
  progress.at(Step::StageRoot);
  prepare_staging();
  progress.at(Step::MountTree);
  build_tree(cfg.plan);
  Confinement& c = pid1.confinement;
  if (!cfg.plan.devices.empty()) {
    progress.at(Step::ChipView);
    make_chip_view(cfg, c);
  }
  progress.at(Step::EnterTree);
  enter_tree();
  progress.at(Step::LandlockRuleset);
  if (cfg.plan.devices.empty()) c.landlock_fd = landlock_ruleset(cfg, false);
  c.seccomp = cfg.seccomp;
  c.seccomp_files = cfg.seccomp_files;
  c.notify = cfg.notify;
  c.limits = cfg.limits;
  c.nproc_backstop = cfg.nproc_backstop;
  c.worktree = cfg.plan.worktree.string();
  return pid1;
}

void finish(Children& children, pid_t pid, int status) {
  auto it = children.find(pid);
  if (it == children.end()) return;  // an orphan that ended up with us
  Child& ch = it->second;
  // What the sole command left behind would hold its output open: end it before reporting.
  if (ch.sole) ::kill(-1, SIGKILL);
  ch.listener.reset();
  if (ch.log) {
    const std::string frame = ch.log->take(true);
    if (!frame.empty()) wire::write_frame(ch.reply.get(), wire::Frame::Denials, frame);
  }
  wire::Writer w;
  w.u64(uint64_t(status)).u64(ch.timed_out);
  wire::write_frame(ch.reply.get(), wire::Frame::Status, w.bytes());
  children.erase(it);
}

// Kills what is past its deadline; returns the poll timeout until the next one (-1: none).
int enforce_deadlines(Children& children) {
  int timeout_ms = -1;
  const auto now = Clock::now();
  for (auto& [pid, ch] : children) {
    if (ch.timed_out) continue;
    if (ch.deadline <= now) {
      ch.timed_out = true;
      ::kill(pid, SIGKILL);  // the init of its namespace (or the sole command): all goes
      continue;
    }
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(ch.deadline - now).count() + 1;
    if (timeout_ms < 0 || ms < timeout_ms) timeout_ms = int(ms);
  }
  return timeout_ms;
}

// Records and answers a sole command's seccomp notification; its denials go out as they come.
void serve_listener(Child& ch, short revents) {
  if (revents & POLLIN) {
    if (!ch.log->serve(ch.listener.get())) ch.listener.reset();
    const std::string frame = ch.log->take();
    if (!frame.empty()) wire::write_frame(ch.reply.get(), wire::Frame::Denials, frame);
  } else if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
    ch.listener.reset();
  }
}

void reap(Children& children, int sig_fd) {
  signalfd_siginfo info;
  while (::read(sig_fd, &info, sizeof info) == ssize_t(sizeof info)) {
  }
  int status;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG | __WALL)) > 0)
    finish(children, pid, status);
}

// Run: argv, environment, cwd, use_chip, timeout (ms), own pid namespace; with the reply
// stream, stdin, stdout and stderr.
void handle_run(const Confinement& c, wire::Reader& rd, std::vector<UniqueFd>& fds,
                Children& children) {
  if (fds.size() != 4) return;
  CommandSpec cmd;
  cmd.argv = rd.strs();
  cmd.env = rd.strs();
  cmd.cwd = rd.str();
  cmd.use_chip = rd.u64() != 0 && c.chip_ns_fd >= 0;
  const uint64_t timeout_ms = rd.u64();
  const bool own_pid_namespace = rd.u64() != 0;
  Spawned s = spawn_command(c, cmd, fds[0].get(), fds[1].get(), fds[2].get(), fds[3].get(),
                            own_pid_namespace);
  if (s.pid < 0) throw_sys("pid namespace: clone", "command", errno);
  Child& ch = children[s.pid];
  ch.reply = std::move(fds[0]);
  ch.deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  ch.sole = !own_pid_namespace;
  ch.listener.reset(s.listener);
  if (ch.listener) ch.log = std::make_unique<DenialLog>();
}

// File: the operation, the path, the most bytes to read, timeout (ms); with the reply stream
// and the stream of a Write's bytes.
void handle_file(const Confinement& c, wire::Reader& rd, std::vector<UniqueFd>& fds,
                 Children& children) {
  if (fds.size() != 2) return;
  const auto op = FileRequest::Op(rd.u64());
  const std::string path = rd.str();
  const uint64_t max_bytes = rd.u64();
  const uint64_t timeout_ms = rd.u64();
  const pid_t pid = spawn_file_op(c, op, path, max_bytes, fds[0].get(), fds[1].get());
  if (pid <= 0) return;
  Child& ch = children[pid];
  ch.reply = std::move(fds[0]);
  ch.deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
}

// One request from the host. One that cannot be decoded is answered with the error on its reply
// stream; one of an unknown kind or with the wrong descriptors is dropped with them, and its
// caller sees its streams end without a status.
void handle_request(const Confinement& c, int control_fd, Children& children) {
  std::string msg;
  std::vector<int> received;
  try {
    if (!recv_with_fds(control_fd, msg, received, 4)) {
      ::_exit(0);  // the host went away: pid 1 exits and the kernel kills the rest
    }
  } catch (const Error&) {
    return;  // its descriptors are closed
  }
  std::vector<UniqueFd> fds;
  for (int fd : received)
    fds.emplace_back(fd);
  try {
    wire::Reader rd(msg);
    const std::string kind = rd.str();
    if (kind.size() != 1) return;
    if (Request(kind[0]) == Request::Run) handle_run(c, rd, fds, children);
    if (Request(kind[0]) == Request::File) handle_file(c, rd, fds, children);
  } catch (const Error& e) {
    if (!fds.empty() && fds[0]) wire::write_frame(fds[0].get(), wire::Frame::SetupError, e.what());
  }
}

void serve(const Confinement& c, int control_fd, int sig_fd) {
  Children children;
  for (;;) {
    const int timeout_ms = enforce_deadlines(children);
    std::vector<pollfd> pfd = {{control_fd, POLLIN, 0}, {sig_fd, POLLIN, 0}};
    std::vector<Child*> supervised;
    for (auto& [pid, ch] : children) {
      if (!ch.listener) continue;
      pfd.push_back({ch.listener.get(), POLLIN, 0});
      supervised.push_back(&ch);
    }
    if (::poll(pfd.data(), pfd.size(), timeout_ms) < 0 && errno != EINTR) ::_exit(3);
    for (size_t i = 0; i < supervised.size(); ++i)
      serve_listener(*supervised[i], pfd[2 + i].revents);
    if (pfd[1].revents & POLLIN) reap(children, sig_fd);
    if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) handle_request(c, control_fd, children);
  }
}

}  // namespace

void box_init_main(InitConfig& config, int control_fd) {
  Progress progress;
  Pid1 pid1;
  try {
    pid1 = start_pid1(config, progress);
    send_startup(control_fd, Startup::Ready, "");
  } catch (const std::exception& e) {
    try {
      send_startup(control_fd, Startup::Error, progress.message(e));
    } catch (...) {
    }
    ::_exit(1);
  }
  serve(pid1.confinement, control_fd, pid1.sig_fd);
  ::_exit(0);
}

}  // namespace kd::sandbox
