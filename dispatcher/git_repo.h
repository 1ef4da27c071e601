// Git through libgit2 for the family worktree (program.md K4, DESIGN §1): branches are created,
// never deleted or reset; the shared checkout's HEAD never moves; no hook, filter driver or
// other repository-supplied program ever runs (libgit2 executes none).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kd::dispatcher::git {

struct WorktreeSetup {
  std::string branch;  // kernel/<slug>-v<NNN>, or the suffixed name on collision
  std::filesystem::path worktree;
  std::filesystem::path gitdir;  // <home>/.git/worktrees/<name>: what the worktree's .git names
  std::string base_commit;       // the integration branch's tip the branch started from
  std::vector<std::string>
      notes;  // e.g. "branch kernel/x-v001 exists (a prior campaign's); using ..."
};

struct ExperimentRef {
  std::filesystem::path home_repo;  // raw/code/<home_repo>
  std::filesystem::path worktree;   // wiki/kernel_experiments/<slug>/pallas/.repo
  std::string slug;
  std::string experiment;  // vNNN
  std::string integration_branch;
  std::string campaign_tag;  // used to suffix a colliding branch name
};

// Creates the worktree (first experiment) or checks out a fresh branch in it (tree clean first).
// `resume_branch` reuses a branch this campaign already made. Throws kd::Error naming the
// repository, the branch and the problem.
WorktreeSetup prepare_worktree(const ExperimentRef& ref,
                               const std::optional<std::string>& resume_branch);

struct CommitInfo {
  std::string sha;
  std::string message;
  std::int64_t time = 0;  // committer time, seconds since the epoch
};

// Stages every change in the worktree and commits it on `branch`. Refuses when the worktree's
// .git does not point at `gitdir` (a redirected .git), when HEAD is not `branch`, when nothing
// changed, or when a file is larger than `max_file_bytes`.
// `paths` limits the commit to those files (all changes when empty).
CommitInfo commit_all(const std::filesystem::path& worktree, const std::filesystem::path& gitdir,
                      const std::string& branch, const std::string& message,
                      const std::vector<std::string>& paths = {},
                      std::uint64_t max_file_bytes = 64ull << 20);

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

// Commits on `branch` that are not reachable from `base` (a branch or a SHA), oldest first.
std::vector<CommitInfo> branch_commits(const std::filesystem::path& repo, const std::string& branch,
                                       const std::string& base);

// The commit HEAD of `repo` points at, and the name of the branch it is on ("" when detached).
std::pair<std::string, std::string> head_of(const std::filesystem::path& repo);

// The bytes of `path` in revision `rev` (a SHA or a branch); nullopt when the path is absent there
// or not a file.
std::optional<std::string> file_at(const std::filesystem::path& repo, const std::string& rev,
                                   const std::string& path);

// Whether a local branch exists.
bool branch_exists(const std::filesystem::path& repo, const std::string& branch);

}  // namespace kd::dispatcher::git
