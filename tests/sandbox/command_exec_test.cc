// The command's process between clone and exec: what its parent prepares (the execvp search,
// the rlimits), the failure it reports by step, and the message the parent makes of it, which
// is the text each call gave before the child stopped building messages itself.
#include "sandbox/command_exec.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"
#include "common/fd.h"
#include "sandbox/seccomp_filter.h"

namespace kd::sandbox {
namespace {

Confinement confinement() {
  Confinement c;
  c.landlock_fd = 7;
  c.seccomp = SeccompFilter(DenyAction::Notify).bpf();
  c.notify = true;
  c.limits.address_space_mb = 64;
  c.worktree = "/wt";
  return c;
}

CommandSpec spec(std::vector<std::string> argv, std::vector<std::string> env) {
  CommandSpec s;
  s.argv = std::move(argv);
  s.env = std::move(env);
  return s;
}

TEST(CommandPlan, SearchesAsExecvp) {
  const Confinement c = confinement();
  CommandPlan searched(c, spec({"cc", "-c", "x.c"}, {"HOME=/tmp", "PATH=:/a:/b/"}), 5, 6, 8, 9);
  EXPECT_TRUE(searched.search);
  EXPECT_EQ(searched.candidates, (std::vector<std::string>{"cc", "/a/cc", "/b//cc"}));
  EXPECT_EQ(searched.cwd, "/wt");
  ASSERT_EQ(searched.argv.size(), 4u);
  EXPECT_STREQ(searched.argv[2], "x.c");
  EXPECT_EQ(searched.argv[3], nullptr);
  ASSERT_EQ(searched.envp.size(), 3u);
  EXPECT_STREQ(searched.envp[1], "PATH=:/a:/b/");
  // /bin/sh, the candidate (filled in by the child), then the arguments after argv[0].
  ASSERT_EQ(searched.script_argv.size(), 5u);
  EXPECT_STREQ(searched.script_argv[0], "/bin/sh");
  EXPECT_STREQ(searched.script_argv[2], "-c");
  EXPECT_EQ(searched.script_argv[4], nullptr);

  CommandPlan defaulted(c, spec({"cc"}, {}), 5, 6, 8, 9);
  EXPECT_EQ(defaulted.candidates, (std::vector<std::string>{"/bin/cc", "/usr/bin/cc"}));
  CommandPlan direct(c, spec({"./run.sh"}, {"PATH=/a"}), 5, 6, 8, 9);
  EXPECT_FALSE(direct.search);
  EXPECT_EQ(direct.candidates, std::vector<std::string>{"./run.sh"});
  CommandPlan overlong(c, spec({std::string(300, 'x')}, {"PATH=/a"}), 5, 6, 8, 9);
  EXPECT_TRUE(overlong.candidates.empty());
  EXPECT_EQ(overlong.search_error, ENAMETOOLONG);
  try {
    CommandPlan empty(c, spec({}, {}), 5, 6, 8, 9);
    ADD_FAILURE() << "a plan without a command";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "run: empty command");
  }
}

TEST(CommandPlan, RlimitsArePlannedInOrderNeverAboveTheHardLimit) {
  Limits l;
  l.address_space_mb = 64;
  const RlimitPlan plan = plan_rlimits(l, true);
  ASSERT_EQ(plan.count, 6u);
  const char* names[] = {"RLIMIT_CORE",   "RLIMIT_CPU", "RLIMIT_FSIZE",
                         "RLIMIT_NOFILE", "RLIMIT_AS",  "RLIMIT_NPROC"};
  for (size_t i = 0; i < plan.count; ++i) {
    EXPECT_STREQ(plan.entries[i].name, names[i]);
    rlimit cur{};
    ASSERT_EQ(::getrlimit(plan.entries[i].resource, &cur), 0);
    EXPECT_LE(plan.entries[i].value.rlim_max, cur.rlim_max) << names[i];
  }
  EXPECT_EQ(plan.entries[1].value.rlim_max, plan.entries[1].value.rlim_cur + 1);  // SIGXCPU first
  EXPECT_EQ(plan_rlimits(Limits{}, false).count, 4u);
}

TEST(CommandPlan, AFailedStepIsNamedAsItsCallWas) {
  const Confinement c = confinement();
  CommandPlan p(c, spec({"cc"}, {}), 5, 6, 8, 9);
  auto text = [&](Step step, int err, int detail = 0) {
    return p.describe(StepFailure{step, err, detail});
  };
  EXPECT_EQ(text(Step::Stdin, EBADF), "fds: dup2(5 -> 0): EBADF");
  EXPECT_EQ(text(Step::Stderr, EBADF), "fds: dup2(8 -> 2): EBADF");
  EXPECT_EQ(text(Step::Session, EPERM), "pid namespace: setsid(command): EPERM");
  EXPECT_EQ(text(Step::Chdir, ENOENT), "run: chdir(/wt): ENOENT");
  EXPECT_EQ(text(Step::EnterChipView, EINVAL), "mount: setns(chip view): EINVAL");
  EXPECT_EQ(text(Step::Rlimits, EPERM, 4), "rlimits: setrlimit(RLIMIT_AS=67108864): EPERM");
  EXPECT_EQ(text(Step::NoNewPrivs, EINVAL), "no_new_privs: prctl(PR_SET_NO_NEW_PRIVS): EINVAL");
  EXPECT_EQ(text(Step::Landlock, E2BIG), "landlock: landlock_restrict_self(ruleset fd 7): E2BIG");
  EXPECT_EQ(text(Step::BoundingSet, EPERM, 3), "capabilities: prctl(PR_CAPBSET_DROP)(3): EPERM");
  EXPECT_EQ(text(Step::AmbientSet, EINVAL),
            "capabilities: prctl(PR_CAP_AMBIENT_CLEAR_ALL): EINVAL");
  EXPECT_EQ(text(Step::Capabilities, EPERM), "capabilities: capset(all empty): EPERM");
  EXPECT_EQ(text(Step::CheckCapabilities, EFAULT), "capabilities: capget(self): EFAULT");
  EXPECT_EQ(text(Step::CheckCapabilities, 0),
            "capabilities: a capability is still held before exec (refusing to run)");
  EXPECT_EQ(text(Step::CheckBoundingSet, 0, 21),
            "capabilities: bounding set still holds capability 21");
  EXPECT_EQ(text(Step::CheckNoNewPrivs, 0), "no_new_privs: not set before exec (refusing to run)");
  EXPECT_EQ(text(Step::CloseOnExec, EINVAL),
            "fds: close_range(3..~0, CLOSE_RANGE_CLOEXEC): EINVAL");
  EXPECT_EQ(text(Step::Seccomp, EINVAL),
            "seccomp: seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER)(" +
                std::to_string(c.seccomp.size()) + " instructions): EINVAL");
  EXPECT_EQ(text(Step::HandOverListener, EPIPE), "box: sendmsg(control socket): EPIPE");
  EXPECT_EQ(p.exec_error(ENOENT), "sandbox: execvp(\"cc\"): ENOENT\n");
}

TEST(CommandPlan, TheChildReportsTheStepThatFailedAndExits125) {
  Confinement c = confinement();
  c.worktree = "/nonexistent-kd-worktree";
  int sock[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock), 0);
  const UniqueFd ours(sock[0]);
  UniqueFd theirs(sock[1]);
  const UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(null);
  CommandPlan plan(c, spec({"/bin/true"}, {}), null.get(), null.get(), null.get(), theirs.get());
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) exec_command(plan);
  theirs.reset();
  StepFailure f;
  ASSERT_EQ(::recv(ours.get(), &f, sizeof f, 0), ssize_t(sizeof f));
  EXPECT_EQ(f.step, Step::Chdir);
  EXPECT_EQ(f.err, ENOENT);
  EXPECT_EQ(plan.describe(f), "run: chdir(/nonexistent-kd-worktree): ENOENT");
  EXPECT_EQ(::recv(ours.get(), &f, sizeof f, 0), 0);  // then the end of the stream
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125);
}

}  // namespace
}  // namespace kd::sandbox
