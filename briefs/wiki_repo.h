// The wiki as committed at HEAD (git/reader.h), with what its working tree says about each page.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "git/reader.h"

namespace kd::briefs {

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
  git::CommitTree tree_;
};

}  // namespace kd::briefs
