// Signal dispositions and masks of the box's processes. The box's pid 1 starts clean once
// (the dispatcher may have inherited ignored SIGXCPU or SIGXFSZ, which would disarm the
// rlimits), then sets what it needs itself; what it spawns undoes only that.
#pragma once

namespace kd::sandbox {

// Every signal to its default action, none blocked.
void reset_all_signals();

// Undoes what pid 1 sets for itself after reset_all_signals: SIGPIPE ignored, SIGCHLD blocked.
// System calls only, usable between clone and exec.
void reset_child_signals() noexcept;

}  // namespace kd::sandbox
