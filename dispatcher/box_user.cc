#include "dispatcher/box_user.h"

#include <unistd.h>

#include <cerrno>

#include "common/errors.h"

namespace kd::dispatcher {
namespace fs = std::filesystem;

namespace {
constexpr uid_t kBoxUid = 65534;
constexpr gid_t kBoxGid = 65534;

void own(const fs::path& p) {
  if (::lchown(p.c_str(), kBoxUid, kBoxGid) != 0) throw_sys("lchown", quote(p.string()), errno);
}
}  // namespace

void hand_to_box_user(const fs::path& root) {
  if (::geteuid() != 0) return;
  own(root);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path().filename() == ".git" && !it->is_directory()) continue;
    own(it->path());
  }
}

std::map<std::string, std::string> tool_env(const std::vector<fs::path>& tool_dirs) {
  if (tool_dirs.empty()) return {};
  std::string path;
  for (const auto& d : tool_dirs)
    path += fs::absolute(d).string() + ":";
  return {{"PATH", path + "/usr/local/bin:/usr/bin:/bin"}};
}

}  // namespace kd::dispatcher
