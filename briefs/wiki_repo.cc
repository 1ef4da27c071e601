#include "briefs/wiki_repo.h"

#include <algorithm>
#include <set>
#include <system_error>

#include "common/errors.h"
#include "common/files.h"

namespace fs = std::filesystem;

namespace kd::briefs {
namespace {

// Lexically resolves link `target` relative to the directory of `from`; nullopt if it escapes.
std::optional<std::string> resolve_inside(const std::string& from, const std::string& target) {
  if (target.empty() || target[0] == '/') return std::nullopt;
  fs::path joined = (fs::path(from).parent_path() / target).lexically_normal();
  std::string s = joined.generic_string();
  if (s.empty() || s == "." || s.substr(0, 2) == "..") return std::nullopt;
  return s;
}

bool under(const fs::path& p, const fs::path& root) {
  auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end();
}

}  // namespace

WikiRepo::WikiRepo(fs::path root) : root_(std::move(root)), tree_(root_, "HEAD") {
  std::error_code ec;
  canonical_root_ = fs::canonical(root_, ec);
  if (ec) throw Error("realpath(" + quote(root_.string()) + "): " + ec.message());
}

WikiFile WikiRepo::read(const std::string& path) const {
  WikiFile f;
  f.path = path;
  f.resolved = path;
  // The working tree first: a path that leads outside the wiki on disk is refused even when the
  // committed tree looks harmless, because tools the author runs would follow the disk.
  std::error_code ec;
  fs::path disk = root_ / path;
  bool on_disk = fs::symlink_status(disk, ec).type() != fs::file_type::not_found && !ec;
  if (on_disk) {
    fs::path real = fs::weakly_canonical(disk, ec);
    if (!ec && !under(real, canonical_root_)) {
      f.status = WikiFile::Status::outside;
      f.detail = real.string();
      return f;
    }
  }
  std::optional<git::CommitTree::Entry> e = tree_.lookup(path);
  for (int hops = 0; e && e->symlink; ++hops) {
    std::optional<std::string> next = resolve_inside(f.resolved, e->content);
    if (!next || hops == 8) {
      f.status = WikiFile::Status::outside;
      f.detail = e->content;
      return f;
    }
    f.resolved = *next;
    e = tree_.lookup(f.resolved);
  }
  if (!e) {
    f.status = on_disk ? WikiFile::Status::uncommitted : WikiFile::Status::missing;
    return f;
  }
  if (!e->is_file) {
    f.status = WikiFile::Status::not_a_file;
    return f;
  }
  f.status = WikiFile::Status::ok;
  f.content = std::move(e->content);
  if (!on_disk) {
    f.edited = true;  // deleted in the working tree
  } else {
    // Sizes first, so an unedited page is compared byte for byte only when sizes agree.
    std::error_code size_ec;
    auto size = fs::file_size(disk, size_ec);
    try {
      f.edited = size_ec || size != f.content.size() || read_file(disk) != f.content;
    } catch (const Error&) {
      f.edited = true;  // unreadable on disk (a directory, no permission): not the committed page
    }
  }
  return f;
}

std::vector<std::string> WikiRepo::list(const std::string& dir) const {
  std::set<std::string> names;
  for (auto& n : tree_.list(dir))
    names.insert(n);
  std::error_code ec;
  for (fs::directory_iterator it(root_ / dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) || it->is_symlink(ec)) names.insert(it->path().filename().string());
  return {names.begin(), names.end()};
}

}  // namespace kd::briefs
