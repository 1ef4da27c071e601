// Every step of making a box and of confining a command in it, in the order they run
// (docs/sandbox.md, Processes). Each stage is one function that takes its steps in this order,
// so the order can be read in one place: the holder (box_main.cc, hold), the box's pid 1
// (box_init.cc, start_pid1), the init of a command's pid namespace (spawn.cc,
// run_command_init) and the command itself, between clone and exec (command_exec.cc,
// command_steps and confine).
// That last stage shares its parent's memory and cannot build a message: a step of it that
// fails is sent as a StepFailure, and the parent names the call (CommandPlan::describe).
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace kd::sandbox {

enum class Step : int32_t {
  None,
  // The holder, as the dispatcher started it.
  ReadConfig,
  DetachSources,        // as root before the drop, else after Namespaces
  DropHostCredentials,  // as root: no groups, the worktree owner's uid and gid
  UserNamespace,
  Namespaces,  // mount, pid, network, IPC, UTS, cgroup
  StartPid1,
  // The box's pid 1, once per box.
  Pid1Signals,  // all default, SIGCHLD read from a signalfd, SIGPIPE ignored
  Hostname,
  Loopback,
  StageRoot,  // the host's root moved aside, the box's built beside it
  MountTree,
  ChipView,  // a second mount namespace with the chip's nodes, its Landlock ruleset made there
  EnterTree,
  LandlockRuleset,
  // The init of one command's pid namespace (a box's sole command has none).
  InitSignals,
  SpawnCommand,
  // The command between clone and exec; a file operation takes the steps from EnterChipView to
  // CloseOnExec (confine), then its own seccomp filter.
  Stdin,
  Stdout,
  Stderr,
  Session,
  Chdir,
  EnterChipView,
  Rlimits,  // detail: the entry of the RlimitPlan
  NoNewPrivs,
  Landlock,
  BoundingSet,  // detail: the capability
  AmbientSet,
  Capabilities,
  CheckCapabilities,  // err 0: one is still held
  CheckBoundingSet,   // detail: the capability still there
  CheckNoNewPrivs,
  CloseOnExec,
  Seccomp,
  HandOverListener,
  Exec,
};

// "mount tree", "landlock_restrict_self", ...
std::string_view step_name(Step step);

// A failed step of the command's stage, as the child sends it to its parent: fixed size, sent
// with one system call.
struct StepFailure {
  Step step = Step::None;
  int32_t err = 0;     // errno of the failed call
  int32_t detail = 0;  // what the step names beside it (see Step)
  explicit operator bool() const { return step != Step::None; }
};

// The step a stage is at, so that a failure which does not name its own call (std::bad_alloc, a
// filesystem error) is still reported with the step's name.
class Progress {
 public:
  void at(Step step) { step_ = step; }
  // A kd::Error's message as it is (it names its call); any other "box: <step>: <what>".
  std::string message(const std::exception& e) const;

 private:
  Step step_ = Step::None;
};

}  // namespace kd::sandbox
