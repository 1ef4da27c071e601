// kdispatch: the front end. It answers `help` and `brief` itself and execs the full binary,
// kdispatch-full next to it, for every other command. The split keeps the brief's process
// small: this binary links only the briefs core (statically where the build allows), so it
// starts without loading the network, sandbox and agent libraries the other commands need.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/command_table.h"
#include "common/errors.h"
#include "common/exit_codes.h"

namespace {

// The full binary's path: next to this executable, as the build and an install lay them out.
std::string full_binary() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) kd::throw_sys("readlink", "/proc/self/exe", n < 0 ? errno : ENAMETOOLONG);
  std::string path(self, size_t(n));
  return path.substr(0, path.rfind('/') + 1) + "kdispatch-full";
}

}  // namespace

int main(int argc, char** argv) {
  int status = 0;
  const kd::cli::CommandUsage* command = kd::cli::route(argc, argv, status);
  if (!command) return status;
  if (command->name == "brief")
    return kd::cli::run_command(*command, kd::cli::cmd_brief, kd::cli::Args(argv + 2, argv + argc));
  try {
    std::string full = full_binary();
    ::execv(full.c_str(), argv);
    int e = errno;
    kd::throw_sys("execv", kd::quote(full), e);
  } catch (const kd::Error& e) {
    std::fprintf(stderr, "kdispatch %s: %s\n", argv[1], e.what());
  }
  return kd::kExitInternal;
}
