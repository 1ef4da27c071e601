// A reason a brief is refused: the checklist item (or "binding", "stub") and why.
#pragma once

#include <string>
#include <vector>

namespace kd::briefs {

struct Problem {
  std::string item;
  std::string reason;
  bool operator==(const Problem&) const = default;
};

using Problems = std::vector<Problem>;

}  // namespace kd::briefs
