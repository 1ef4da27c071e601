// Committed content of git repositories, read without libgit2 (git/objects.h): a commit's tree,
// a file at a revision, the commits of a branch, HEAD, a commit named by a ledger's short SHA.
// Every read-only caller uses this; only writes go through libgit2 (git/repo.h). Paths are looked
// up in a commit's tree one by one, never by walking the repository, so the cost does not grow
// with the repository's size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "git/objects.h"

namespace kd::git {

// A commit's fields that kdispatch reads.
struct CommitInfo {
  std::string sha;
  std::string message;
  std::int64_t time = 0;  // committer time, seconds since the epoch
};

struct ParsedCommit {
  std::string tree;
  std::vector<std::string> parents;
  std::int64_t committer_time = 0;
  std::string message;
};
// Parses a commit object's payload; throws kd::Error naming `what`.
ParsedCommit parse_commit(const std::string& data, const std::string& what);

// A repository opened for reading, with its objects cached while it lives.
class Reader {
 public:
  // `repo` as ObjectStore takes it; throws kd::Error naming the path.
  explicit Reader(const std::filesystem::path& repo);

  // A 40-hex id (peeled to a commit), "HEAD", a full ref name, or a branch or tag name.
  std::string resolve(const std::string& rev) const;
  ParsedCommit commit(const std::string& sha) const;
  bool branch_exists(const std::string& branch) const;
  // The commit HEAD points at and the branch it is on ("" when detached).
  std::pair<std::string, std::string> head() const;
  // The bytes of `path` at `rev`; nullopt when absent there or not a file (a link's target text
  // counts as its bytes, as git stores it).
  std::optional<std::string> file_at(const std::string& rev, const std::string& path) const;
  // Commits reachable from `branch` and not from `base` (a branch or a SHA), parents before
  // children.
  std::vector<CommitInfo> branch_commits(const std::string& branch, const std::string& base) const;
  // Whether `ancestor` is `descendant` or one of its ancestors.
  bool is_ancestor(const std::string& ancestor, const std::string& descendant) const;
  // The unique commit whose id begins with `prefix` (4 to 40 hex digits); nullopt when there is
  // none, it is ambiguous, or it is not a commit.
  std::optional<std::string> commit_by_prefix(const std::string& prefix) const;
  // The committer time of the oldest commit on HEAD's first-parent line, unbroken back from
  // HEAD, whose tree holds `path`: when the path was introduced. nullopt when HEAD lacks it.
  std::optional<std::int64_t> introduced_at(const std::string& path) const;

  const ObjectStore& objects() const { return objects_; }

 private:
  ObjectStore objects_;
};

// One commit's tree.
class CommitTree {
 public:
  // Opens `repo` and resolves `revision` as Reader::resolve does; throws kd::Error naming the
  // repository and the revision.
  CommitTree(const std::filesystem::path& repo, const std::string& revision);
  // A tree of a repository already open; `reader` must outlive it.
  CommitTree(const Reader& reader, const std::string& revision);

  const std::string& commit() const { return commit_; }

  struct Entry {
    bool symlink = false;     // git mode 120000: `content` is the link target
    bool is_file = false;     // a blob (regular, executable or link)
    bool executable = false;  // git mode 100755
    std::string content;
  };
  // The entry at `path` ('/'-separated, relative to the root), or nullopt when absent.
  std::optional<Entry> lookup(const std::string& path) const;
  // The raw tree entry at `path` (its mode and id), or nullopt.
  std::optional<TreeEntry> entry(const std::string& path) const;
  // Names of the blobs directly inside directory `path` ("" for the root), sorted.
  std::vector<std::string> list(const std::string& path) const;
  const Reader& reader() const { return *reader_; }
  const std::string& root_tree() const { return root_; }

 private:
  std::unique_ptr<const Reader> owned_;  // when opened by path
  const Reader* reader_ = nullptr;
  std::string commit_;
  std::string root_;
};

// Convenience forms that open the repository for one question.
std::optional<std::string> file_at(const std::filesystem::path& repo, const std::string& rev,
                                   const std::string& path);
std::vector<CommitInfo> branch_commits(const std::filesystem::path& repo, const std::string& branch,
                                       const std::string& base);
std::pair<std::string, std::string> head_of(const std::filesystem::path& repo);
bool branch_exists(const std::filesystem::path& repo, const std::string& branch);

}  // namespace kd::git
