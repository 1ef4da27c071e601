// The box program (kdispatch-box, sandbox/box_main.cc) and how the dispatcher starts it: there
// is one way to start a box, and it never forks the dispatcher.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace kd::sandbox {

// kdispatch-box next to the running executable (kdispatch and kdispatch-full are installed
// beside it), else in the bin/ of the installation the program belongs to (common/policy_path.h:
// the build tree's tests and benchmarks). Throws kd::Error naming the path when it is missing or
// not an executable regular file.
std::filesystem::path box_program_path();

// Starts the box program with `control_fd` as its fd 3, every other descriptor closed, an
// empty environment, default signal dispositions and an empty signal mask, by posix_spawn
// (CLONE_VM|CLONE_VFORK: no copy of the caller's page tables). Throws kd::Error.
pid_t spawn_box_program(int control_fd);

}  // namespace kd::sandbox
