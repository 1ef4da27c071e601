#include "briefs/wiki_repo.h"

#include <git2.h>

#include <algorithm>
#include <set>
#include <system_error>

#include "common/errors.h"
#include "common/files.h"

namespace fs = std::filesystem;

namespace kd::briefs {
namespace {

void ensure_libgit2() {
  static const int once = git_libgit2_init();
  (void)once;
}

std::string git_message(int rc) {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "libgit2 error " + std::to_string(rc);
}

template <typename T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  ~Owned() {
    if (p) Free(p);
  }
};

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
  git_repository* repo = nullptr;
  git_tree* tree = nullptr;
  ~Impl() {
    if (tree) git_tree_free(tree);
    if (repo) git_repository_free(repo);
  }
};

GitTree::GitTree(const fs::path& repo, const std::string& revision) : impl_(new Impl) {
  ensure_libgit2();
  if (int rc = git_repository_open_ext(&impl_->repo, repo.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH,
                                       nullptr))
    throw Error("git_repository_open(" + quote(repo.string()) + "): " + git_message(rc));
  Owned<git_object, git_object_free> obj;
  if (int rc = git_revparse_single(&obj.p, impl_->repo, (revision + "^{commit}").c_str()))
    throw Error("git_revparse(" + quote(repo.string()) + ", " + quote(revision) +
                "): " + git_message(rc));
  const git_oid* oid = git_object_id(obj.p);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, oid);
  commit_ = hex;
  if (int rc = git_commit_tree(&impl_->tree, reinterpret_cast<git_commit*>(obj.p)))
    throw Error("git_commit_tree(" + quote(repo.string()) + "@" + commit_ +
                "): " + git_message(rc));
}

GitTree::~GitTree() = default;
GitTree::GitTree(GitTree&&) noexcept = default;

std::optional<GitTree::Entry> GitTree::lookup(const std::string& path) const {
  Owned<git_tree_entry, git_tree_entry_free> entry;
  int rc = git_tree_entry_bypath(&entry.p, impl_->tree, path.c_str());
  if (rc == GIT_ENOTFOUND) return std::nullopt;
  if (rc) throw Error("git_tree_entry_bypath(" + quote(path) + "): " + git_message(rc));
  Entry out;
  if (git_tree_entry_type(entry.p) != GIT_OBJECT_BLOB) return out;
  out.is_file = true;
  out.symlink = git_tree_entry_filemode(entry.p) == GIT_FILEMODE_LINK;
  Owned<git_blob, git_blob_free> blob;
  if (int rc2 = git_blob_lookup(&blob.p, impl_->repo, git_tree_entry_id(entry.p)))
    throw Error("git_blob_lookup(" + quote(path) + "): " + git_message(rc2));
  out.content.assign(static_cast<const char*>(git_blob_rawcontent(blob.p)),
                     size_t(git_blob_rawsize(blob.p)));
  return out;
}

std::vector<std::string> GitTree::list(const std::string& path) const {
  std::vector<std::string> names;
  Owned<git_tree_entry, git_tree_entry_free> entry;
  if (git_tree_entry_bypath(&entry.p, impl_->tree, path.c_str()) != 0) return names;
  if (git_tree_entry_type(entry.p) != GIT_OBJECT_TREE) return names;
  Owned<git_tree, git_tree_free> sub;
  if (int rc = git_tree_lookup(&sub.p, impl_->repo, git_tree_entry_id(entry.p)))
    throw Error("git_tree_lookup(" + quote(path) + "): " + git_message(rc));
  for (size_t i = 0, n = git_tree_entrycount(sub.p); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(sub.p, i);
    if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) names.emplace_back(git_tree_entry_name(e));
  }
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
