// A command line as words, split the way a shell would quote them ('...', "...", backslash) but
// never run by one: no expansion, no globbing, no operators. For commands a user gives as one
// option value (`run --notify-cmd CMD`).
#pragma once

#include <string>
#include <vector>

namespace kd {

// Throws kd::Error naming `what` for an unterminated quote or an empty command.
std::vector<std::string> split_words(const std::string& line, const std::string& what);

}  // namespace kd
