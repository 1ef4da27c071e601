// The family worktree on real repositories: fixtures are made with the git CLI, the code under
// test uses libgit2, and every claim is checked from outside with the git CLI again.
#include "git/repo.h"

#include "contract/wiki_layout.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "common/errors.h"
#include "common/files.h"
#include "tests/support/process.h"

namespace kd::git {
namespace {

using namespace std::string_literals;

std::string git_out(const std::string& repo, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = test::run_process(argv, "",
                             {{"GIT_AUTHOR_NAME", "t"},
                              {"GIT_AUTHOR_EMAIL", "t@t"},
                              {"GIT_COMMITTER_NAME", "t"},
                              {"GIT_COMMITTER_EMAIL", "t@t"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  while (!r.out.empty() && r.out.back() == '\n')
    r.out.pop_back();
  return r.out;
}

class GitRepoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home = dir / "raw/code/home";
    std::filesystem::create_directories(home);
    git_out(home, {"init", "-q", "-b", "main"});
    write_file_atomic(home + "/reference.py", "def workload(x):\n    return x\n");
    write_file_atomic(home + "/kernel.py", "def workload(x):\n    return x\n");
    git_out(home, {"add", "-A"});
    git_out(home, {"commit", "-q", "-m", "base"});
    git_out(home, {"branch", "integration"});
    main_sha = git_out(home, {"rev-parse", "HEAD"});
  }

  // The request the dispatcher makes, names from the wiki layout.
  WorktreeRequest ref(const std::string& exp, const std::string& fam = "fam") {
    contract::ExperimentId id{fam, exp};
    return {home, dir / contract::worktree_dir(fam), fam, "integration",
            [id](int n) { return id.branch("p1", n); }};
  }

  test::TempDir dir;
  std::string home, main_sha;
};

TEST_F(GitRepoTest, WorktreeCommitDiffSnapshotLifecycle) {
  WorktreeSetup s = prepare_worktree(ref("v001"), std::nullopt);
  EXPECT_EQ(s.branch, "kernel/fam-v001");
  EXPECT_TRUE(s.notes.empty());
  std::string wt = s.worktree.string();
  EXPECT_EQ(git_out(wt, {"rev-parse", "--abbrev-ref", "HEAD"}), "kernel/fam-v001");
  // The shared checkout never moves.
  EXPECT_EQ(git_out(home, {"rev-parse", "--abbrev-ref", "HEAD"}), "main");
  EXPECT_EQ(git_out(home, {"rev-parse", "HEAD"}), main_sha);

  write_file_atomic(wt + "/kernel.py", "def workload(x):\n    return x * 1\n");
  write_file_atomic(wt + "/notes.txt", "new file\n");
  std::string diff = diff_worktree(s.worktree, 1 << 20);
  EXPECT_NE(diff.find("+    return x * 1"), std::string::npos) << diff;
  EXPECT_NE(diff.find("notes.txt"), std::string::npos) << diff;

  EXPECT_EQ(diff_worktree(s.worktree, 1 << 20, "notes.txt").find("kernel.py"), std::string::npos);
  // A commit limited to one path leaves the other change uncommitted.
  CommitInfo first =
      commit_all(s.worktree, s.gitdir, s.branch, "cand1(fam v001): notes — n/a", {"notes.txt"});
  EXPECT_EQ(git_out(wt, {"status", "--porcelain"}), " M kernel.py");
  CommitInfo c = commit_all(s.worktree, s.gitdir, s.branch, "cand1(fam v001): scale by one — 1.0x");
  EXPECT_NE(first.sha, c.sha);
  EXPECT_EQ(git_out(wt, {"rev-parse", "HEAD"}), c.sha);
  EXPECT_EQ(git_out(wt, {"log", "-1", "--format=%s"}), "cand1(fam v001): scale by one — 1.0x");
  EXPECT_EQ(git_out(wt, {"status", "--porcelain"}), "");
  EXPECT_THROW(commit_all(s.worktree, s.gitdir, s.branch, "cand2(fam v001): nothing — x"), Error);

  auto commits = branch_commits(home, s.branch, "integration");
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_EQ(commits[0].sha, first.sha);
  EXPECT_EQ(commits[1].sha, c.sha);
  EXPECT_EQ(head_of(home).first, main_sha);

  std::filesystem::path snap = dir / "snapshot";
  snapshot_commit(home, c.sha, snap);
  EXPECT_EQ(read_file(snap / "kernel.py"), "def workload(x):\n    return x * 1\n");
  EXPECT_EQ(read_file(snap / "notes.txt"), "new file\n");
  EXPECT_FALSE(std::filesystem::exists(snap / ".git"));
  EXPECT_THROW(snapshot_commit(home, c.sha, snap), Error);  // never overwrites a snapshot
}

TEST_F(GitRepoTest, SnapshotKeepsModesAndLinksAndAppliesNoFilter) {
  std::filesystem::create_directories(home + "/tools/deep");
  write_file_atomic(home + "/tools/deep/run.sh", "#!/bin/sh\necho hi\n");
  std::filesystem::permissions(home + "/tools/deep/run.sh", std::filesystem::perms(0755));
  std::filesystem::create_symlink("tools/deep/run.sh", home + "/run");
  // A filter a checkout would apply (LF -> CRLF); the snapshot is the committed bytes.
  write_file_atomic(home + "/.gitattributes", "*.sh text eol=crlf\n");
  git_out(home, {"add", "-A"});
  git_out(home, {"commit", "-q", "-m", "tools"});
  std::filesystem::path snap = dir / "snap";
  snapshot_commit(home, git_out(home, {"rev-parse", "HEAD"}), snap);
  EXPECT_EQ(read_file(snap / "tools/deep/run.sh"), "#!/bin/sh\necho hi\n");
  auto perms = std::filesystem::status(snap / "tools/deep/run.sh").permissions();
  EXPECT_NE(perms & std::filesystem::perms::owner_exec, std::filesystem::perms::none);
  EXPECT_EQ(std::filesystem::status(snap / "reference.py").permissions() &
                std::filesystem::perms::owner_exec,
            std::filesystem::perms::none);
  ASSERT_TRUE(std::filesystem::is_symlink(snap / "run"));
  EXPECT_EQ(std::filesystem::read_symlink(snap / "run"), "tools/deep/run.sh");
}

TEST_F(GitRepoTest, SnapshotRefusesACraftedTreeThatClimbsOut) {
  // A tree entry named "..": git refuses to make one, so it is written byte by byte.
  std::string blob = git_out(home, {"rev-parse", "HEAD:kernel.py"});
  std::string raw;
  for (size_t i = 0; i < blob.size(); i += 2)
    raw += char(std::stoi(blob.substr(i, 2), nullptr, 16));
  write_file_atomic(dir / "tree.bin", "100644 ..\0"s + raw);
  std::string tree =
      git_out(home, {"hash-object", "-w", "-t", "tree", "--literally", dir / "tree.bin"});
  std::string commit = git_out(home, {"commit-tree", tree, "-m", "crafted"});
  std::filesystem::path snap = dir / "deep/snap";
  try {
    snapshot_commit(home, commit, snap);
    FAIL() << "wrote a crafted tree";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a safe file name"), std::string::npos) << e.what();
  }
  // Nothing written, in the snapshot or beside it.
  EXPECT_TRUE(std::filesystem::is_empty(snap));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / "deep"),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(GitRepoTest, NextExperimentReusesTheWorktreeOnAFreshBranchFromIntegration) {
  WorktreeSetup s1 = prepare_worktree(ref("v001"), std::nullopt);
  write_file_atomic(s1.worktree / "kernel.py", "changed\n");
  commit_all(s1.worktree, s1.gitdir, s1.branch, "cand1(fam v001): x — y");
  WorktreeSetup s2 = prepare_worktree(ref("v002"), std::nullopt);
  EXPECT_EQ(s2.branch, "kernel/fam-v002");
  EXPECT_EQ(git_out(s2.worktree.string(), {"rev-parse", "--abbrev-ref", "HEAD"}),
            "kernel/fam-v002");
  EXPECT_EQ(read_file(s2.worktree / "kernel.py"), "def workload(x):\n    return x\n");
  // The v001 branch keeps its commit.
  EXPECT_EQ(branch_commits(home, "kernel/fam-v001", "integration").size(), 1u);
}

TEST_F(GitRepoTest, FamiliesAddTheirWorktreesAtOnce) {
  // A campaign prepares every family's first worktree in parallel on one fresh repository.
  constexpr int kFamilies = 8;
  std::vector<std::string> errors(kFamilies);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kFamilies; ++i) {
    threads.emplace_back([&, i] {
      const std::string fam = "fam" + std::to_string(i);
      WorktreeRequest r = ref("v001", fam);
      ready.fetch_add(1);
      while (ready.load() < kFamilies) {
      }
      try {
        prepare_worktree(r, std::nullopt);
      } catch (const Error& e) {
        errors[size_t(i)] = e.what();
      }
    });
  }
  for (auto& t : threads)
    t.join();
  for (int i = 0; i < kFamilies; ++i) {
    EXPECT_EQ(errors[size_t(i)], "") << "family " << i;
    const std::string wt =
        dir / ("wiki/kernel_experiments/fam" + std::to_string(i) + "/pallas/.repo");
    EXPECT_EQ(git_out(wt, {"rev-parse", "--abbrev-ref", "HEAD"}),
              "kernel/fam" + std::to_string(i) + "-v001");
  }
}

TEST_F(GitRepoTest, LeftoversAreKeptBeforeTheWorktreeMovesOn) {
  WorktreeSetup s1 = prepare_worktree(ref("v001"), std::nullopt);
  const std::string v001_tip = git_out(home, {"rev-parse", s1.branch});
  write_file_atomic(s1.worktree / "kernel.py", "uncommitted\n");
  write_file_atomic(s1.worktree / "scratch.txt", "untracked\n");
  WorktreeSetup s2 = prepare_worktree(ref("v002"), std::nullopt);
  const std::string kept = "refs/kdispatch/leftovers/kernel/fam-v001";
  ASSERT_EQ(s2.notes.size(), 1u);
  EXPECT_NE(s2.notes[0].find("2 uncommitted change(s) on kernel/fam-v001 kept as " + kept),
            std::string::npos)
      << s2.notes[0];
  // Nothing lost: both the edit and the new file are in the kept commit, on top of v001's tip.
  EXPECT_EQ(git_out(home, {"show", kept + ":kernel.py"}), "uncommitted");
  EXPECT_EQ(git_out(home, {"show", kept + ":scratch.txt"}), "untracked");
  EXPECT_EQ(git_out(home, {"rev-parse", kept + "^"}), v001_tip);
  // Nothing carried over: v001's branch is untouched and v002 starts clean from integration.
  EXPECT_EQ(git_out(home, {"rev-parse", s1.branch}), v001_tip);
  EXPECT_EQ(git_out(s2.worktree.string(), {"rev-parse", "--abbrev-ref", "HEAD"}),
            "kernel/fam-v002");
  EXPECT_EQ(git_out(s2.worktree.string(), {"status", "--porcelain"}), "");
  EXPECT_EQ(read_file(s2.worktree / "kernel.py"), "def workload(x):\n    return x\n");
  // A second keep of the same branch never replaces the first.
  git_out(s2.worktree.string(), {"checkout", "-q", "kernel/fam-v001"});
  write_file_atomic(s2.worktree / "kernel.py", "again\n");
  WorktreeSetup s3 = prepare_worktree(ref("v003"), std::nullopt);
  ASSERT_EQ(s3.notes.size(), 1u);
  EXPECT_NE(s3.notes[0].find(kept + "-2"), std::string::npos) << s3.notes[0];
  EXPECT_EQ(git_out(home, {"show", kept + ":kernel.py"}), "uncommitted");
  EXPECT_EQ(git_out(home, {"show", kept + "-2:kernel.py"}), "again");
}

TEST_F(GitRepoTest, ExistingBranchIsNeverResetButSuffixed) {
  git_out(home, {"branch", "kernel/fam-v003", "integration"});
  std::string before = git_out(home, {"rev-parse", "kernel/fam-v003"});
  WorktreeSetup s = prepare_worktree(ref("v003"), std::nullopt);
  EXPECT_EQ(s.branch, "kernel/fam-p1-v003");
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("kept untouched"), std::string::npos);
  EXPECT_EQ(git_out(home, {"rev-parse", "kernel/fam-v003"}), before);
  // Resuming picks the same branch again instead of making a third.
  WorktreeSetup again = prepare_worktree(ref("v003"), s.branch);
  EXPECT_EQ(again.branch, s.branch);
}

// A dispatcher killed inside libgit2's worktree add leaves a worktree whose admin dir has no HEAD
// yet: no session ever ran there, and the next prepare makes it again instead of failing on it.
TEST_F(GitRepoTest, AnInterruptedAddIsMadeAgain) {
  WorktreeSetup s = prepare_worktree(ref("v001"), std::nullopt);
  std::filesystem::remove(s.gitdir / "HEAD");
  std::filesystem::remove(s.gitdir / "commondir");
  WorktreeSetup again = prepare_worktree(ref("v001"), std::nullopt);
  EXPECT_EQ(again.branch, "kernel/fam-p1-v001");
  EXPECT_EQ(git_out(again.worktree.string(), {"rev-parse", "--abbrev-ref", "HEAD"}),
            "kernel/fam-p1-v001");
  EXPECT_EQ(read_file(again.worktree / "kernel.py"), "def workload(x):\n    return x\n");
  std::string notes;
  for (const auto& n : again.notes)
    notes += n + "\n";
  EXPECT_NE(notes.find("interrupted add"), std::string::npos) << notes;
}

TEST_F(GitRepoTest, RedirectedDotGitIsRefused) {
  WorktreeSetup s = prepare_worktree(ref("v001"), std::nullopt);
  write_file_atomic(s.worktree / ".git", "gitdir: " + home + "/.git\n");
  write_file_atomic(s.worktree / "kernel.py", "evil\n");
  try {
    commit_all(s.worktree, s.gitdir, s.branch, "cand1(fam v001): x — y");
    FAIL() << "committed through a redirected .git";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("redirected worktree"), std::string::npos) << e.what();
  }
  EXPECT_EQ(git_out(home, {"rev-parse", "HEAD"}), main_sha);
}

TEST_F(GitRepoTest, HugeFilesStayOutOfGit) {
  WorktreeSetup s = prepare_worktree(ref("v001"), std::nullopt);
  write_file_atomic(s.worktree / "trace.bin", std::string(4096, 'x'));
  EXPECT_THROW(commit_all(s.worktree, s.gitdir, s.branch, "cand1(fam v001): x — y", {}, 1024),
               Error);
}

// A hostile author leaves links and a FIFO where the next branch writes, deletes or reads: the
// next experiment of the family and a second dispatch of one both prepare the worktree without
// touching anything outside it, without hanging, and name what they removed.
TEST_F(GitRepoTest, ReuseNeverFollowsWhatTheAuthorLeft) {
  const std::filesystem::path host = dir / "host";
  std::filesystem::create_directories(host / "dir");
  std::filesystem::create_directories(host / "pkgdir");
  write_file_atomic(host / "dir/IMPORTANT.txt", "keep me\n");
  write_file_atomic(host / "file", "host file\n");
  std::filesystem::create_directories(dir / "raw/code/home/pkg");
  write_file_atomic(home + "/pkg/mod.py", "x = 1\n");
  git_out(home, {"add", "-A"});
  git_out(home, {"commit", "-q", "-m", "pkg"});
  git_out(home, {"branch", "-f", "integration"});

  auto attack = [&](const WorktreeSetup& s) {
    const auto wt = s.worktree;
    std::filesystem::create_directories(wt / "evil");
    write_file_atomic(wt / "evil/IMPORTANT.txt", "committed\n");
    commit_all(wt, s.gitdir, s.branch, "cand1(fam v001): evil — x");
    std::filesystem::remove_all(wt / "evil");
    std::filesystem::create_symlink(host / "dir", wt / "evil");  // delete through it
    std::filesystem::remove(wt / "kernel.py");
    std::filesystem::create_symlink(host / "file", wt / "kernel.py");  // overwrite through it
    std::filesystem::remove_all(wt / "pkg");
    std::filesystem::create_symlink(host / "pkgdir", wt / "pkg");  // write into it
    ASSERT_EQ(::mkfifo((wt / "pipe").c_str(), 0644), 0);           // hang a read
  };
  auto unharmed = [&](const WorktreeSetup& s) {
    EXPECT_EQ(read_file(host / "dir/IMPORTANT.txt"), "keep me\n");
    EXPECT_EQ(read_file(host / "file"), "host file\n");
    EXPECT_TRUE(std::filesystem::is_empty(host / "pkgdir"));
    const auto wt = s.worktree;
    EXPECT_FALSE(std::filesystem::is_symlink(wt / "kernel.py"));
    EXPECT_EQ(read_file(wt / "kernel.py"), "def workload(x):\n    return x\n");
    EXPECT_FALSE(std::filesystem::is_symlink(wt / "pkg"));
    EXPECT_EQ(read_file(wt / "pkg/mod.py"), "x = 1\n");
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(wt / "evil")));
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(wt / "pipe")));
    EXPECT_EQ(git_out(wt.string(), {"status", "--porcelain"}), "");
    std::string notes;
    for (const auto& n : s.notes)
      notes += n + "\n";
    for (const char* what : {"symbolic link \"evil\" -> ", "symbolic link \"kernel.py\" -> ",
                             "symbolic link \"pkg\" -> ", "FIFO \"pipe\""})
      EXPECT_NE(notes.find(what), std::string::npos) << what << " not in\n" << notes;
  };

  WorktreeSetup s1 = prepare_worktree(ref("v001"), std::nullopt);
  attack(s1);
  WorktreeSetup s2 = prepare_worktree(ref("v002"), std::nullopt);  // the family's next one
  EXPECT_EQ(s2.branch, "kernel/fam-v002");
  unharmed(s2);
  attack(s2);
  WorktreeSetup again = prepare_worktree(ref("v002"), std::nullopt);  // a second dispatch
  EXPECT_EQ(again.branch, "kernel/fam-p1-v002");
  unharmed(again);
  // The leftovers were kept without the links: the removed file is recorded as removed.
  EXPECT_EQ(git_out(home, {"show", "refs/kdispatch/leftovers/kernel/fam-v001:reference.py"}),
            "def workload(x):\n    return x");
}

}  // namespace
}  // namespace kd::git
