#include "common/policy_path.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <system_error>

#include "common/errors.h"

namespace kd {
namespace {

namespace fs = std::filesystem;

constexpr const char* kShare = "share/kdispatch";

// $variable when set and not empty, else PREFIX/share/kdispatch/folder with links resolved: in
// the build tree, the sources' folder. A box binds a folder at its real path, so a path through
// the build tree's links would not exist inside (the demo's tools on a box's PATH).
fs::path data_dir(const char* variable, const char* folder) {
  if (const char* env = std::getenv(variable); env && *env) return env;
  if (std::optional<fs::path> prefix = installation_prefix()) {
    const fs::path dir = *prefix / kShare / folder;
    std::error_code ec;
    const fs::path real = fs::canonical(dir, ec);
    return ec ? dir : real;
  }
  const fs::path self = executable_path();
  const fs::path bin = self.parent_path();
  throw Error("the " + std::string(folder) + " of " + quote(self.string()) + ": neither " +
              quote((bin.parent_path() / kShare).string()) + " nor " +
              quote((bin.parent_path().parent_path() / kShare).string()) +
              " is a directory (an installation is PREFIX/bin/kdispatch beside "
              "PREFIX/share/kdispatch; " +
              variable + " names another folder)");
}

}  // namespace

fs::path executable_path() {
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size());
  if (n <= 0 || size_t(n) >= self.size())
    throw_sys("readlink", "/proc/self/exe", n < 0 ? errno : ENAMETOOLONG);
  self.resize(size_t(n));
  return self;
}

std::optional<fs::path> installation_prefix() {
  const fs::path bin = executable_path().parent_path();
  std::error_code ec;
  for (const fs::path& prefix : {bin.parent_path(), bin.parent_path().parent_path()})
    if (fs::is_directory(prefix / kShare, ec)) return prefix;
  return std::nullopt;
}

fs::path policy_dir() {
  return data_dir("KDISPATCH_POLICY_DIR", "policies");
}

fs::path policy_file(std::string_view relative) {
  return policy_dir() / relative;
}

fs::path examples_dir() {
  return data_dir("KDISPATCH_EXAMPLES_DIR", "examples");
}

fs::path workers_dir() {
  return data_dir("KDISPATCH_WORKERS_DIR", "workers");
}

}  // namespace kd
