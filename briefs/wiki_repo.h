// Committed content of git repositories through libgit2: the wiki at HEAD, the home repository
// at the family's integration branch. Paths are looked up in the commit's tree one by one, never
// by walking the repository, so the cost does not grow with the wiki's size.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kd::briefs {

// One commit's tree in one repository.
class GitTree {
 public:
  // Opens `repo` and resolves `revision` (e.g. "HEAD", "refs/heads/main") to a commit; throws
  // kd::Error naming the repository and the revision.
  GitTree(const std::filesystem::path& repo, const std::string& revision);
  ~GitTree();
  GitTree(GitTree&&) noexcept;
  GitTree(const GitTree&) = delete;
  GitTree& operator=(const GitTree&) = delete;

  const std::string& commit() const { return commit_; }

  struct Entry {
    bool symlink = false;  // git mode 120000: `content` is the link target
    bool is_file = false;  // a blob (regular, executable or link)
    std::string content;
  };
  // The entry at `path` ('/'-separated, relative to the root), or nullopt when absent.
  std::optional<Entry> lookup(const std::string& path) const;
  // Names of the blobs directly inside directory `path`, sorted.
  std::vector<std::string> list(const std::string& path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string commit_;
};

// A wiki page as committed, with what the working tree says about it.
struct WikiFile {
  enum class Status {
    ok,           // committed; `content` holds the committed bytes
    missing,      // neither committed nor on disk
    uncommitted,  // on disk but not in the HEAD commit
    outside,      // a symlink (in git or on disk) whose target leaves the wiki
    not_a_file,   // a directory or a submodule
  };
  Status status = Status::missing;
  std::string path;      // as asked
  std::string resolved;  // after following in-wiki symlinks
  std::string content;   // committed bytes
  bool edited = false;   // working-tree bytes differ from the committed ones
  std::string detail;    // the symlink target for `outside`
};

class WikiRepo {
 public:
  explicit WikiRepo(std::filesystem::path root);  // the wiki repository at HEAD
  const std::filesystem::path& root() const { return root_; }
  const std::string& commit() const { return tree_.commit(); }
  WikiFile read(const std::string& path) const;
  // Committed and on-disk names of the regular files directly inside `dir`, merged and sorted.
  std::vector<std::string> list(const std::string& dir) const;

 private:
  std::filesystem::path root_;
  std::filesystem::path canonical_root_;
  GitTree tree_;
};

}  // namespace kd::briefs
