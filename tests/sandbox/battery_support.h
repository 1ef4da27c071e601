// The escape battery's fixture: a planted host tree (worktree with a reference file, a .git
// directory and no-peek paths, plus an outside directory), kdispatch run as root or as
// nobody, and a fingerprint of everything the sandbox must leave unchanged.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::test {

struct BoxOutcome {
  int exit_code = -1;              // of kdispatch
  nlohmann::json result;           // the --json result (or {"refused": ...})
  std::vector<std::string> lines;  // the probe's stdout lines
  std::string err;                 // kdispatch's stderr
};

class BatteryHost {
 public:
  explicit BatteryHost(bool as_nobody);  // plants the tree
  ~BatteryHost();

  const std::string& root() const { return root_; }
  std::string wt() const { return root_ + "/wt"; }
  std::string outside() const { return root_ + "/outside"; }
  const std::string& token() const { return token_; }  // unique per fixture, for escape markers

  // kdispatch sandbox exec --json with the fixture's --ro/--mask, then the probe with `probe_args`
  // (';' separates operations). `flags` go before "--".
  BoxOutcome probe(const std::vector<std::string>& probe_args,
                   const std::vector<std::string>& flags = {}) const;
  // Any command line as the fixture's user (root or nobody), with the fixture's environment.
  BoxOutcome run(const std::vector<std::string>& argv) const;

  // sha256 over paths, types, modes, owners and contents of everything planted outside the
  // worktree's writable area.
  std::string fingerprint() const;

 private:
  bool nobody_;
  std::string root_, token_;
};

// True when this process may run the "as root" variant.
bool running_as_root();

}  // namespace kd::test
