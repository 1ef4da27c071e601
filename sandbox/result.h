// What one command run inside a box produced, in a form the transcript can record.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::sandbox {

// One refusal the sandbox observed: a call the seccomp filter denied, a limit hit, a timeout,
// a refused file operation.
struct Denial {
  std::string layer;   // "seccomp" | "timeout" | "cgroup" | "rlimit" | "mount" | "landlock" ...
  std::string op;      // the system call ("mount", "socket"), or "fork", "write", "run", ...
  std::string path;    // inside the box, when one applies
  std::string detail;  // human-readable
  int err = 0;         // errno, when one applies
};

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  bool killed_by_limit = false;
  std::string limit;  // "cpu" | "fsize" | "memory" when killed_by_limit
  std::string out, err;
  bool out_truncated = false, err_truncated = false;
  std::vector<Denial> denials;
  // Layers whose refusals reach the command only as an errno and are not in `denials`: always
  // "mount" and "landlock" for commands, and "seccomp" when the profile let the box run without
  // user notification.
  std::vector<std::string> unobserved_layers;
  double wall_s = 0;

  nlohmann::json to_json() const;
};

nlohmann::json denial_json(const Denial& d);

}  // namespace kd::sandbox
