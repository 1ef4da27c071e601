#include "audit/context.h"

#include <ctime>

namespace kd::audit {

bool path_within(std::string_view path, std::string_view dir) {
  if (dir.empty()) return false;
  if (dir == "/") return !path.empty() && path[0] == '/';
  if (path.substr(0, dir.size()) != dir) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

}  // namespace kd::audit
