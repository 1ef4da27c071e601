#include "sandbox/command_exec.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>

#include "common/errors.h"
#include "sandbox/fds.h"
#include "sandbox/landlock.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/signals.h"
#include "sandbox/userns.h"

namespace kd::sandbox {
namespace {

// execvp's search path when the environment has none (confstr(_CS_PATH)).
constexpr const char* kDefaultPath = "/bin:/usr/bin";
constexpr const char* kShell = "/bin/sh";

// When the box's memory runs out, the command is the one the OOM killer takes, never the box's
// pid 1 that reports its status. Raising the score needs no privilege; best effort, since the
// memory limit holds either way and only the choice of victim is at stake.
void raise_oom_score() noexcept {
  const int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t written = ::write(fd, "1000", 4);
  ::close(fd);
}

// A descriptor dup2 makes is not close-on-exec; one already in place keeps its flag, cleared.
bool move_fd(int from, int to) noexcept {
  if (from == to) {
    ::fcntl(to, F_SETFD, 0);
    return true;
  }
  return ::dup2(from, to) >= 0;
}

std::string fd_move(int from, int to) {
  return std::to_string(from) + " -> " + std::to_string(to);
}

// The value of PATH in `env`, as getenv would find it there.
const std::string* path_variable(const std::vector<std::string>& env) {
  for (const auto& e : env) {
    if (e.compare(0, 5, "PATH=") == 0) return &e;
  }
  return nullptr;
}

void plan_search(CommandPlan& p, const std::vector<std::string>& env) {
  if (p.argv0.find('/') != std::string::npos) {
    p.candidates.push_back(p.argv0);
    return;
  }
  p.search = true;
  // As execvp: an empty name is not found anywhere, an overlong one never tried.
  if (p.argv0.empty()) return;
  if (p.argv0.size() > NAME_MAX) {
    p.search_error = ENAMETOOLONG;
    return;
  }
  const std::string* var = path_variable(env);
  const std::string path = var ? var->substr(5) : kDefaultPath;
  for (size_t start = 0;;) {
    const size_t colon = path.find(':', start);
    const std::string dir = path.substr(start, colon - start);
    if (dir.size() < PATH_MAX) p.candidates.push_back(dir.empty() ? p.argv0 : dir + "/" + p.argv0);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
}

// A request without a command is refused before anything is spawned.
const std::vector<std::string>& nonempty_argv(const CommandSpec& cmd) {
  if (cmd.argv.empty()) throw Error("run: empty command");
  return cmd.argv;
}

// The errors after which execvp goes on to the next entry of PATH.
bool try_next(int err) {
  return err == EACCES || err == ENOENT || err == ESTALE || err == ENOTDIR || err == ENODEV ||
         err == ETIMEDOUT;
}

// The command's steps up to the exec, in the order of steps.h.
StepFailure command_steps(const CommandPlan& p) noexcept {
  reset_child_signals();
  if (!move_fd(p.in, 0)) return {Step::Stdin, errno};
  if (!move_fd(p.out, 1)) return {Step::Stdout, errno};
  if (!move_fd(p.err, 2)) return {Step::Stderr, errno};
  if (::setsid() < 0) return {Step::Session, errno};
  if (::chdir(p.cwd.c_str()) != 0) return {Step::Chdir, errno};
  if (StepFailure f = confine(p.confinement)) return f;
  // The listener is close-on-exec: the command never holds it, only its supervisor.
  const int listener = load_seccomp(p.seccomp, p.notify);
  if (listener < 0) return {Step::Seccomp, errno};
  if (p.notify) {
    if (int e = send_datagram(p.report, "L", 1, &listener, 1)) return {Step::HandOverListener, e};
  }
  return {};
}

// execvp over the prepared candidates; returns only when none could be executed.
StepFailure exec_candidates(CommandPlan& p) noexcept {
  bool denied = false;
  for (const std::string& candidate : p.candidates) {
    ::execve(candidate.c_str(), p.argv.data(), p.envp.data());
    if (errno == ENOEXEC) {
      p.script_argv[1] = const_cast<char*>(candidate.c_str());
      ::execve(kShell, p.script_argv.data(), p.envp.data());
    }
    const int err = errno;
    if (!p.search || !try_next(err)) return {Step::Exec, err};
    denied = denied || err == EACCES;
  }
  return {Step::Exec, denied ? EACCES : p.search_error};
}

}  // namespace

ConfinePlan plan_confinement(const Confinement& c, bool use_chip) {
  ConfinePlan plan;
  plan.chip_ns_fd = use_chip ? c.chip_ns_fd : -1;
  plan.rlimits = plan_rlimits(c.limits, c.nproc_backstop);
  plan.landlock_fd = c.landlock_fd;
  return plan;
}

StepFailure confine(const ConfinePlan& p) noexcept {
  if (p.chip_ns_fd >= 0 && ::setns(p.chip_ns_fd, CLONE_NEWNS) != 0)
    return {Step::EnterChipView, errno};
  raise_oom_score();
  if (StepFailure f = apply_rlimits(p.rlimits)) return f;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return {Step::NoNewPrivs, errno};
  if (p.landlock_fd >= 0) {
    if (StepFailure f = landlock_restrict(p.landlock_fd)) return f;
  }
  if (StepFailure f = drop_all_capabilities()) return f;
  if (StepFailure f = check_unprivileged()) return f;
  return cloexec_from_3();
}

std::string describe(const StepFailure& f, const ConfinePlan& p) {
  switch (f.step) {
    case Step::EnterChipView:
      return sys_message("mount: setns", "chip view", f.err);
    case Step::Rlimits:
      return rlimit_error(p.rlimits, f);
    case Step::NoNewPrivs:
      return sys_message("no_new_privs: prctl", "PR_SET_NO_NEW_PRIVS", f.err);
    case Step::Landlock:
      return sys_message("landlock: landlock_restrict_self",
                         "ruleset fd " + std::to_string(p.landlock_fd), f.err);
    case Step::BoundingSet:
    case Step::AmbientSet:
    case Step::Capabilities:
    case Step::CheckCapabilities:
    case Step::CheckBoundingSet:
    case Step::CheckNoNewPrivs:
      return capability_error(f);
    case Step::CloseOnExec:
      return sys_message("fds: close_range", "3..~0, CLOSE_RANGE_CLOEXEC", f.err);
    default:
      return "box: " + std::string(step_name(f.step)) + ": " + errno_name(f.err);
  }
}

CommandPlan::CommandPlan(const Confinement& c, const CommandSpec& cmd, int in_fd, int out_fd,
                         int err_fd, int report_fd)
    : in(in_fd),
      out(out_fd),
      err(err_fd),
      report(report_fd),
      cwd(cmd.cwd.empty() ? c.worktree : cmd.cwd),
      confinement(plan_confinement(c, cmd.use_chip)),
      seccomp(c.seccomp),
      notify(c.notify),
      args(nonempty_argv(cmd)),
      env(cmd.env),
      argv0(args.at(0)) {
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  plan_search(*this, env);
  script_argv = {const_cast<char*>(kShell), nullptr};
  for (size_t i = 1; i < args.size(); ++i)
    script_argv.push_back(argv[i]);
  script_argv.push_back(nullptr);
}

std::string CommandPlan::describe(const StepFailure& f) const {
  switch (f.step) {
    case Step::Stdin:
      return sys_message("fds: dup2", fd_move(in, 0), f.err);
    case Step::Stdout:
      return sys_message("fds: dup2", fd_move(out, 1), f.err);
    case Step::Stderr:
      return sys_message("fds: dup2", fd_move(err, 2), f.err);
    case Step::Session:
      return sys_message("pid namespace: setsid", "command", f.err);
    case Step::Chdir:
      return sys_message("run: chdir", cwd, f.err);
    case Step::Seccomp:
      return seccomp_load_error(seccomp, notify, f.err);
    case Step::HandOverListener:
      return sys_message("box: sendmsg", "control socket", f.err);
    case Step::Exec:
      return exec_error(f.err);
    default:
      return kd::sandbox::describe(f, confinement);
  }
}

std::string CommandPlan::exec_error(int e) const {
  return "sandbox: execvp(" + quote(argv0) + "): " + errno_name(e) + "\n";
}

void exec_command(CommandPlan& p) noexcept {
  StepFailure f = command_steps(p);
  if (!f) f = exec_candidates(p);
  // Nothing to do if this send fails: the exit status still says the command did not run.
  send_datagram(p.report, &f, sizeof f, nullptr, 0);
  ::_exit(f.step != Step::Exec ? 125 : f.err == ENOENT ? 127 : 126);
}

}  // namespace kd::sandbox
