// Runs a real child process for CLI-level tests and captures what it printed.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kd::test {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

// Runs argv[0] (searched in PATH) with argv, optional stdin text and extra environment.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdin_text = "",
                          const std::map<std::string, std::string>& env = {});

// Runs the kdispatch binary built alongside the tests.
ProcessResult run_kdispatch(const std::vector<std::string>& args,
                            const std::string& stdin_text = "",
                            const std::map<std::string, std::string>& env = {});

// A fresh directory under the temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir();
  explicit TempDir(const std::string& parent);
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// A folder for test trees that boxes must see as they are on the host: inside a box /tmp,
// /var/tmp, /run and /dev/shm are private tmpfs mounts, so a tree below them would have writable
// (if private) parents there. The build tree, unless it sits below one of them.
std::string outside_box_tmpfs();

}  // namespace kd::test
