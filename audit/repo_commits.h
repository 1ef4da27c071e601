// Looks up ledger SHAs in the candidate branch's repository (git/reader.h: read only, nothing
// of the repository's configuration runs).
#pragma once

#include <memory>
#include <string>

namespace kd::audit {

struct RepoCommit {
  bool found = false;      // the SHA names a commit
  bool on_branch = false;  // the commit is the branch tip or one of its ancestors
  std::string subject;     // first line of its message
};

class RepoCommits {
 public:
  // Opens `repository` and resolves `branch` ("" = HEAD). Throws kd::Error naming the call.
  RepoCommits(const std::string& repository, const std::string& branch);
  ~RepoCommits();
  RepoCommits(const RepoCommits&) = delete;
  RepoCommits& operator=(const RepoCommits&) = delete;

  RepoCommit lookup(const std::string& sha) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kd::audit
