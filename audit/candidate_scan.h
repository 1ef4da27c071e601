// The static scan of a candidate's Python source (docs/audit.md, rule candidate_scan): the
// patterns a candidate needs to bend a measurement from inside its own process: patching timers
// or other modules, reaching into frames, writing sys.modules or builtins, starting threads or
// processes, writing files, reading the environment, the network. A finding is a reason to look,
// not proof: it caps a verdict at inconclusive and never makes one invalid alone (the measuring
// parent is what defeats these tricks; the scan says someone tried).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kd::audit {

struct ScanFinding {
  int line = 0;      // 1-based
  std::string rule;  // "timer_patch", "frame_access", "module_write", "concurrency",
                     // "file_write", "environment", "network", "native_access"
  std::string what;  // the rule in words and the offending text
};

// Scans `source` (`name` only labels findings). Comments and string literals are skipped, so a
// docstring that mentions threads is not a finding.
std::vector<ScanFinding> scan_candidate(std::string_view source, std::string_view name);

}  // namespace kd::audit
