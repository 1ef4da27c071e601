#include "briefs/wiki_repo.h"

#include <algorithm>
#include <set>
#include <system_error>

#include "briefs/git_objects.h"
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

struct GitTree::Impl {
  GitObjects objects;
  std::string root;  // the commit's tree id
  explicit Impl(const fs::path& repo) : objects(repo) {}

  // The entry at `path`, or nullopt when a component is missing or passes through something
  // other than a tree.
  std::optional<GitTreeEntry> entry(const std::string& path) const {
    if (path.empty()) return std::nullopt;
    std::string tree = root;
    size_t start = 0;
    while (true) {
      size_t slash = path.find('/', start);
      std::string name = path.substr(start, slash == std::string::npos ? slash : slash - start);
      std::optional<GitTreeEntry> e =
          find_git_tree_entry(objects.read(tree, GitType::tree).data, name, "tree " + tree);
      if (!e) return std::nullopt;
      if (slash == std::string::npos) return e;
      if (!e->is_tree()) return std::nullopt;
      tree = e->id;
      start = slash + 1;
    }
  }
};

GitTree::GitTree(const fs::path& repo, const std::string& revision) {
  try {
    impl_ = std::make_unique<Impl>(repo);
    commit_ = impl_->objects.resolve_commit(revision);
    const std::string& c = impl_->objects.read(commit_, GitType::commit).data;
    if (c.rfind("tree ", 0) != 0 || c.size() < 46 || c[45] != '\n')
      throw Error("commit " + commit_ + " has no tree line");
    impl_->root = c.substr(5, 40);
  } catch (const Error& e) {
    throw Error("git(" + quote(repo.string()) + " at " + revision + "): " + e.what());
  }
}

GitTree::~GitTree() = default;
GitTree::GitTree(GitTree&&) noexcept = default;

std::optional<GitTree::Entry> GitTree::lookup(const std::string& path) const {
  std::optional<GitTreeEntry> entry = impl_->entry(path);
  if (!entry) return std::nullopt;
  Entry out;
  if (!entry->is_blob()) return out;
  out.is_file = true;
  out.symlink = entry->is_link();
  out.content = impl_->objects.read(entry->id, GitType::blob).data;
  return out;
}

std::vector<std::string> GitTree::list(const std::string& path) const {
  std::vector<std::string> names;
  std::optional<GitTreeEntry> entry = impl_->entry(path);
  if (!entry || !entry->is_tree()) return names;
  for (auto& e :
       parse_git_tree(impl_->objects.read(entry->id, GitType::tree).data, "tree " + entry->id))
    if (e.is_blob()) names.push_back(std::move(e.name));
  std::sort(names.begin(), names.end());
  return names;
}

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
  std::optional<GitTree::Entry> e = tree_.lookup(path);
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
