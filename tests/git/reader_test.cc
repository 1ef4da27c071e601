// The read-only questions every caller asks of a repository, answered by git/reader.h and
// checked against the git command line on the same repository (the oracle).
#include "git/reader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/errors.h"
#include "common/files.h"
#include "tests/support/process.h"

namespace kd::git {
namespace {

class ReaderTest : public ::testing::Test {
 protected:
  std::string git(std::vector<std::string> args, std::int64_t when = 1700000000) {
    std::vector<std::string> argv = {"git", "-C", repo.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string date = "@" + std::to_string(when) + " +0000";
    auto r = test::run_process(argv, "",
                               {{"GIT_AUTHOR_NAME", "t"},
                                {"GIT_AUTHOR_EMAIL", "t@t"},
                                {"GIT_COMMITTER_NAME", "t"},
                                {"GIT_COMMITTER_EMAIL", "t@t"},
                                {"GIT_AUTHOR_DATE", date},
                                {"GIT_COMMITTER_DATE", date}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    while (!r.out.empty() && r.out.back() == '\n')
      r.out.pop_back();
    return r.out;
  }
  std::string commit_file(const std::string& path, const std::string& body, std::int64_t when,
                          const std::string& message) {
    std::filesystem::create_directories((repo / path).parent_path());
    write_file_atomic(repo / path, body);
    git({"add", "-A"});
    git({"commit", "-q", "-m", message}, when);
    return git({"rev-parse", "HEAD"});
  }

  void SetUp() override {
    repo = std::filesystem::path(dir.path()) / "repo";
    std::filesystem::create_directories(repo);
    git({"init", "-q", "-b", "main"});
    first = commit_file("a.txt", "one\n", 1000, "first");
    second = commit_file("dir/b.txt", "two\n", 2000, "second\n\nbody");
    git({"checkout", "-q", "-b", "topic"});
    third = commit_file("dir/c.txt", "three\n", 3000, "third");
    fourth = commit_file("a.txt", "one, changed\n", 4000, "fourth");
    git({"checkout", "-q", "main"});
  }

  test::TempDir dir;
  std::filesystem::path repo;
  std::string first, second, third, fourth;
};

TEST_F(ReaderTest, ResolvesWhatGitResolves) {
  Reader r(repo);
  EXPECT_EQ(r.resolve("HEAD"), second);
  EXPECT_EQ(r.resolve("main"), second);
  EXPECT_EQ(r.resolve("refs/heads/topic"), fourth);
  EXPECT_EQ(r.resolve(third), third);
  git({"tag", "-a", "-m", "annotated", "v1", third});
  EXPECT_EQ(Reader(repo).resolve("v1"), third);  // peeled to the commit
  EXPECT_THROW(r.resolve("nope"), Error);
  EXPECT_TRUE(r.branch_exists("topic"));
  EXPECT_FALSE(r.branch_exists("other"));
  EXPECT_EQ(r.head(), std::make_pair(second, std::string("main")));
  git({"checkout", "-q", "--detach", third});
  EXPECT_EQ(Reader(repo).head(), std::make_pair(third, std::string()));
}

TEST_F(ReaderTest, ReadsCommitsAndFilesAtARevision) {
  Reader r(repo);
  ParsedCommit c = r.commit(second);
  EXPECT_EQ(c.parents, std::vector<std::string>{first});
  EXPECT_EQ(c.committer_time, 2000);
  EXPECT_EQ(c.message, "second\n\nbody\n");
  EXPECT_EQ(c.tree, git({"rev-parse", second + "^{tree}"}));
  EXPECT_EQ(r.file_at("topic", "a.txt"), "one, changed\n");
  EXPECT_EQ(r.file_at("main", "a.txt"), "one\n");
  EXPECT_EQ(r.file_at("main", "dir/c.txt"), std::nullopt);
  EXPECT_EQ(r.file_at("main", "dir"), std::nullopt);  // a tree is not a file
}

TEST_F(ReaderTest, BranchCommitsAreThoseGitListsParentsFirst) {
  Reader r(repo);
  auto commits = r.branch_commits("topic", "main");
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_EQ(commits[0].sha, third);
  EXPECT_EQ(commits[1].sha, fourth);
  EXPECT_EQ(commits[1].time, 4000);
  EXPECT_EQ(git({"rev-list", "--reverse", "main..topic"}), third + "\n" + fourth);
  EXPECT_TRUE(r.branch_commits("main", "topic").empty());
  EXPECT_TRUE(r.is_ancestor(first, fourth));
  EXPECT_TRUE(r.is_ancestor(fourth, fourth));
  EXPECT_FALSE(r.is_ancestor(fourth, second));
}

TEST_F(ReaderTest, ShortShasNameOneCommitOrNone) {
  Reader r(repo);
  EXPECT_EQ(r.commit_by_prefix(third.substr(0, 12)), third);
  EXPECT_EQ(r.commit_by_prefix(third.substr(0, 3)), std::nullopt);  // shorter than 4
  EXPECT_EQ(r.commit_by_prefix("zzzz"), std::nullopt);
  // A tree's id is not a commit's.
  EXPECT_EQ(r.commit_by_prefix(git({"rev-parse", second + "^{tree}"})), std::nullopt);
}

TEST_F(ReaderTest, IntroducedAtIsWhenThePathFirstAppearedOnHead) {
  git({"checkout", "-q", "topic"});
  Reader r(repo);
  EXPECT_EQ(r.introduced_at("dir/c.txt"), 3000);
  EXPECT_EQ(r.introduced_at("a.txt"), 1000);
  EXPECT_EQ(r.introduced_at("missing.txt"), std::nullopt);
}

TEST_F(ReaderTest, CommitTreeListsAndLooksUpEntries) {
  std::filesystem::create_symlink("a.txt", repo / "link");
  std::filesystem::permissions(repo / "a.txt", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  git({"add", "-A"});
  git({"commit", "-q", "-m", "link"}, 5000);
  CommitTree t(repo, "HEAD");
  auto link = t.lookup("link");
  ASSERT_TRUE(link);
  EXPECT_TRUE(link->symlink);
  EXPECT_EQ(link->content, "a.txt");
  auto a = t.lookup("a.txt");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->executable);
  EXPECT_EQ(t.list(""), (std::vector<std::string>{"a.txt", "link"}));
  EXPECT_EQ(t.list("dir"), std::vector<std::string>{"b.txt"});
  EXPECT_EQ(t.lookup("dir/nothing"), std::nullopt);
  EXPECT_THROW(CommitTree(repo, "no-such-branch"), Error);
}

}  // namespace
}  // namespace kd::git
