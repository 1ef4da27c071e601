// A command's process from clone to execve (spawn.cc starts it). It shares its parent's memory
// (CLONE_VM|CLONE_VFORK, as posix_spawn does), so the parent prepares everything as plain data
// first: argv, envp, the paths PATH leads to, the rlimits. The child then makes system calls
// only, in the order of steps.h: no allocation, no exception, no write to `environ`, nothing
// that could leave its parent's heap or a lock half-changed. A step that fails is sent as a
// StepFailure on the child's report socket, and the parent names it (CommandPlan::describe).
#pragma once

#include <cerrno>
#include <string>
#include <vector>

#include "sandbox/rlimits.h"
#include "sandbox/spawn.h"
#include "sandbox/steps.h"

namespace kd::sandbox {

// What a command and a file operation both take: the chip view, rlimits, no_new_privs,
// Landlock, no capabilities (checked), close-on-exec from fd 3.
struct ConfinePlan {
  int chip_ns_fd = -1;  // -1: stay in the plain view
  RlimitPlan rlimits;
  int landlock_fd = -1;  // -1: no Landlock
};

// Throws kd::Error (rlimits: getrlimit).
ConfinePlan plan_confinement(const Confinement& c, bool use_chip);

// Everything but the seccomp filter and exec, in the order the kernel requires: namespace
// switches need the capabilities dropped later; Landlock needs no_new_privs. System calls only.
StepFailure confine(const ConfinePlan& plan) noexcept;

// The message of a failed step of `confine`, naming the call as the kernel saw it:
// "landlock: landlock_restrict_self(ruleset fd 5): E2BIG".
std::string describe(const StepFailure& failure, const ConfinePlan& plan);

struct CommandPlan {
  // Built by the parent; throws kd::Error. `report` is the child's end of the report socket.
  CommandPlan(const Confinement& c, const CommandSpec& cmd, int in, int out, int err, int report);
  CommandPlan(const CommandPlan&) = delete;
  CommandPlan& operator=(const CommandPlan&) = delete;

  // The setup error for a failed step before Exec: the message of the call that failed.
  std::string describe(const StepFailure& failure) const;
  // What the command's stderr gets when Exec failed: "sandbox: execvp("cc"): ENOENT\n".
  std::string exec_error(int err) const;

  int in, out, err;  // become 0, 1 and 2
  int report;
  std::string cwd;
  ConfinePlan confinement;
  const std::vector<sock_filter>& seccomp;
  bool notify;
  std::vector<std::string> args, env;  // copies: the pointers below point into them
  std::string argv0;
  std::vector<char*> argv, envp;
  // Where execve looks, as execvp would: argv[0] itself when it has a slash, else each entry of
  // the command's PATH (or "/bin:/usr/bin") joined with it; an empty entry is the cwd.
  bool search = false;
  std::vector<std::string> candidates;
  int search_error = ENOENT;  // when no candidate was tried: ENAMETOOLONG for an overlong name
  // A file without "#!" runs under /bin/sh as execvp does: /bin/sh, the candidate, argv[1..].
  // The child fills in the candidate.
  std::vector<char*> script_argv;
};

// The child's whole stage: the steps in order, then execve of each candidate. On failure it
// reports the step and exits 125 (setup), 127 (nothing found to execute) or 126.
[[noreturn]] void exec_command(CommandPlan& plan) noexcept;

}  // namespace kd::sandbox
