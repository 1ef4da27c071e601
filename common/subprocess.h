// Running a program to completion with a deadline and capturing what it printed: for the
// dispatcher's calls to outside tools (Slurm's sbatch, squeue, ...), whose stderr goes into the
// error message. The child gets stdin from /dev/null, the parent's environment plus `env`, an
// empty signal mask and default dispositions (the dispatcher blocks SIGINT/SIGTERM in its
// threads), and its own process group, so that at the deadline the whole group is killed.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kd {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;  // killed at the deadline; out and err hold what came before
  std::string out;
  std::string err;
};

struct CommandOptions {
  std::map<std::string, std::string> env;  // set (or replaced) in the inherited environment
  // Which of the inherited variables the child keeps, by name; all when unset.
  std::function<bool(std::string_view)> inherit_if;
  std::chrono::milliseconds deadline{10000};
  std::size_t max_output = 64u << 20;  // per stream; more is an error naming the program
};

// Runs argv[0] (searched in PATH). Throws kd::Error naming the program when it cannot be started
// or prints more than max_output; a non-zero exit or a timeout is the caller's to judge.
CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options);

}  // namespace kd
