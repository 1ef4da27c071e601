#include "common/policy_path.h"

#include <cstdlib>

namespace kd {

std::filesystem::path policy_dir() {
  if (const char* env = std::getenv("KDISPATCH_POLICY_DIR"); env && *env) return env;
  return KD_DEFAULT_POLICY_DIR;
}

std::filesystem::path policy_file(std::string_view relative) {
  return policy_dir() / relative;
}

std::filesystem::path examples_dir() {
  if (const char* env = std::getenv("KDISPATCH_EXAMPLES_DIR"); env && *env) return env;
  return KD_DEFAULT_EXAMPLES_DIR;
}

}  // namespace kd
