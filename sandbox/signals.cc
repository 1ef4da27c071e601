#include "sandbox/signals.h"

#include <csignal>

namespace kd::sandbox {
namespace {

void unblock_all_signals() noexcept {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace

void reset_all_signals() {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  unblock_all_signals();
}

void reset_child_signals() noexcept {
  ::signal(SIGPIPE, SIG_DFL);
  unblock_all_signals();
}

}  // namespace kd::sandbox
