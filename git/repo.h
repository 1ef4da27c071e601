// Writes to git repositories through libgit2, the only place libgit2 is used: the family
// worktree and its branches, commits, the worktree's diff and the verifier's snapshot. Branches
// are created, never deleted or reset; the shared checkout's HEAD never moves; no hook, filter
// driver or other repository-supplied program ever runs (libgit2 executes none). Reads of
// committed content go through git/reader.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "git/reader.h"

namespace kd::git {

// The largest file a commit takes: artifacts stay out of git.
inline constexpr std::uint64_t kMaxCommittedFileBytes = 64ull << 20;

struct WorktreeSetup {
  std::string branch;  // the wanted name, or an alternative on collision
  std::filesystem::path worktree;
  std::filesystem::path gitdir;  // <home>/.git/worktrees/<name>: what the worktree's .git names
  std::string base_commit;       // the integration branch's tip the branch started from
  std::vector<std::string>
      notes;  // e.g. "branch kernel/x-v001 exists (a prior campaign's); using ..."
};

struct WorktreeRequest {
  std::filesystem::path home_repo;  // the shared checkout the worktree belongs to
  std::filesystem::path worktree;
  std::string worktree_name;  // its name under <home>/.git/worktrees/
  std::string integration_branch;
  // The branch name to make: attempt 0 is the wanted name, attempt n > 0 the n-th alternative
  // when the earlier ones exist (contract::ExperimentId::branch).
  std::function<std::string(int attempt)> branch_name;
};

// Creates the worktree (first experiment) or checks out a fresh branch in it (tree clean first).
// `resume_branch` reuses a branch this campaign already made. Throws kd::Error naming the
// repository, the branch and the problem.
WorktreeSetup prepare_worktree(const WorktreeRequest& ref,
                               const std::optional<std::string>& resume_branch);

// Stages every change in the worktree and commits it on `branch`. Refuses when the worktree's
// .git does not point at `gitdir` (a redirected .git), when HEAD is not `branch`, when nothing
// changed, or when a file is larger than `max_file_bytes`.
// `paths` limits the commit to those files (all changes when empty).
CommitInfo commit_all(const std::filesystem::path& worktree, const std::filesystem::path& gitdir,
                      const std::string& branch, const std::string& message,
                      const std::vector<std::string>& paths = {},
                      std::uint64_t max_file_bytes = kMaxCommittedFileBytes);

// What the worktree holds beyond what its HEAD commits that a path could be redirected or hung
// by, or that moved a committed directory: symbolic links HEAD does not commit (with their
// targets), FIFOs, sockets and devices, and committed directories no longer there. Walked
// through descriptors, nothing followed; run after the box on it is gone. Empty: nothing such.
std::vector<std::string> survey_worktree(const std::filesystem::path& worktree,
                                         const std::filesystem::path& gitdir);

// Commits exactly `paths` of an ordinary repository on its current branch (filing a verdict
// into the wiki).
CommitInfo commit_files(const std::filesystem::path& repo, const std::vector<std::string>& paths,
                        const std::string& message);

// The worktree's changes against HEAD (untracked files included) as a patch, cut at max_bytes;
// `pathspec` limits it to one path.
std::string diff_worktree(const std::filesystem::path& worktree, std::size_t max_bytes,
                          const std::string& pathspec = "");

// Writes the tree of `sha` into `dest` (created; must not exist): the verifier's frozen copy.
void snapshot_commit(const std::filesystem::path& repo, const std::string& sha,
                     const std::filesystem::path& dest);

// Commits every non-ignored file under `dir` on `branch`, creating the repository (with
// `branch` as its initial branch) when `dir` has none. Author, committer and time are fixed
// (`unix_time`), so the same content gives the same commit ids. Paths in `leave_out` stay on disk
// but out of the commit (untracked). Returns the commit id.
std::string commit_directory(const std::filesystem::path& dir, const std::string& branch,
                             const std::string& message, std::int64_t unix_time,
                             const std::vector<std::string>& leave_out = {});

}  // namespace kd::git
