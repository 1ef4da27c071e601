#include "sandbox/steps.h"

#include "common/errors.h"

namespace kd::sandbox {

std::string_view step_name(Step step) {
  switch (step) {
    case Step::None:
      return "start";
    case Step::ReadConfig:
      return "configuration";
    case Step::DetachSources:
      return "detach sources";
    case Step::DropHostCredentials:
      return "drop host credentials";
    case Step::UserNamespace:
      return "user namespace";
    case Step::Namespaces:
      return "namespaces";
    case Step::StartPid1:
      return "start pid 1";
    case Step::Pid1Signals:
      return "pid 1 signals";
    case Step::Hostname:
      return "hostname";
    case Step::Loopback:
      return "loopback";
    case Step::StageRoot:
      return "staging root";
    case Step::MountTree:
      return "mount tree";
    case Step::ChipView:
      return "chip view";
    case Step::EnterTree:
      return "enter tree";
    case Step::LandlockRuleset:
      return "landlock ruleset";
    case Step::InitSignals:
      return "command init signals";
    case Step::SpawnCommand:
      return "spawn command";
    case Step::Stdin:
      return "stdin";
    case Step::Stdout:
      return "stdout";
    case Step::Stderr:
      return "stderr";
    case Step::Session:
      return "session";
    case Step::Chdir:
      return "chdir";
    case Step::EnterChipView:
      return "enter chip view";
    case Step::Rlimits:
      return "rlimits";
    case Step::NoNewPrivs:
      return "no_new_privs";
    case Step::Landlock:
      return "landlock_restrict_self";
    case Step::BoundingSet:
      return "bounding set";
    case Step::AmbientSet:
      return "ambient set";
    case Step::Capabilities:
      return "capabilities";
    case Step::CheckCapabilities:
      return "check capabilities";
    case Step::CheckBoundingSet:
      return "check bounding set";
    case Step::CheckNoNewPrivs:
      return "check no_new_privs";
    case Step::CloseOnExec:
      return "close-on-exec";
    case Step::Seccomp:
      return "seccomp";
    case Step::HandOverListener:
      return "listener hand-over";
    case Step::Exec:
      return "execve";
  }
  return "unknown step";
}

std::string Progress::message(const std::exception& e) const {
  if (dynamic_cast<const Error*>(&e)) return e.what();
  return "box: " + std::string(step_name(step_)) + ": " + e.what();
}

}  // namespace kd::sandbox
