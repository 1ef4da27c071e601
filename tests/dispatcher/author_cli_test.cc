// `kdispatch author` end to end: the example wiki as real git repositories, the fake model over
// real HTTP, the author's box, real commits through libgit2, and the transcript it leaves.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "contract/transcript_chain.h"
#include "examples/example_wiki.h"
#include "git/repo.h"
#include "tests/support/process.h"

namespace kd {
namespace {

namespace fs = std::filesystem;

struct AuthorRun {
  test::TempDir dir;
  fs::path wiki, chips, runs;
  test::ProcessResult result;

  explicit AuthorRun(const std::string& script) {
    // As root the box runs as the worktree's (unprivileged) owner, who must reach the bind sources.
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec);
    wiki = fs::path(dir.path()) / "wiki";
    examples::materialize_example(wiki);
    chips = fs::path(dir.path()) / "chips.json";
    write_file_atomic(
        chips, nlohmann::json{{"chips",
                               {{{"id", "0"}, {"kind", "cpu"}, {"lock", dir / "chip0.lock"}},
                                {{"id", "1"}, {"kind", "cpu"}, {"lock", dir / "chip1.lock"}}}}}
                   .dump());
    runs = fs::path(dir.path()) / "runs";
    result = test::run_kdispatch({"author", "--wiki", wiki.string(), "--family", "rms-norm",
                                  "--experiment", "v002", "--provider", "fake", "--script",
                                  std::string(KD_SOURCE_DIR) + "/" + script, "--chips",
                                  chips.string(), "--run-root", runs.string(), "--tool-dir",
                                  std::string(KD_SOURCE_DIR) + "/examples/tools"});
  }
  fs::path run_dir() const { return runs / "example/rms-norm-v002"; }
};

TEST(AuthorCli, HonestAuthorCommitsEachCandidateAndFinishes) {
  AuthorRun run("examples/scripts/honest-author.json");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  EXPECT_NE(run.result.out.find("ended: finished"), std::string::npos) << run.result.out;

  // Two candidate commits on the experiment branch, each with the grammar and the footer.
  fs::path home = run.wiki / "raw/code/normkit";
  auto commits = git::branch_commits(home, "kernel/rms-norm-v002", "integration");
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_EQ(commits[0].message.rfind("cand1(rms-norm v002): ", 0), 0u) << commits[0].message;
  EXPECT_NE(commits[1].message.find("\nexp: rms-norm v002"), std::string::npos)
      << commits[1].message;
  // The shared checkout did not move.
  EXPECT_EQ(git::head_of(home).second, "integration");

  // Author-side receipts landed in the author's artifact dir, and the finish cites the final SHA.
  fs::path art = run.wiki / "raw/profiles/example/rms-norm-v002/author";
  EXPECT_TRUE(fs::is_regular_file(art / "cand1.json"));
  EXPECT_TRUE(fs::is_regular_file(art / "cand2.json"));
  auto finish = nlohmann::json::parse(read_file(run.run_dir() / "author/finish.json"));
  EXPECT_EQ(finish["final_candidate"]["sha"], commits[1].sha);

  // The transcript is intact and its head is the one the run recorded.
  contract::ChainReport chain =
      contract::verify_chain_file(run.run_dir() / "author/transcript.jsonl");
  EXPECT_TRUE(chain.ok) << chain.reason;
  auto run_json = nlohmann::json::parse(read_file(run.run_dir() / "run.json"));
  EXPECT_EQ(run_json["author_transcript_head"], chain.head);
  // The journal saw the dispatch, both commits and the finish, in that order.
  std::string journal = read_file(run.runs / "example/journal.jsonl");
  size_t d = journal.find("\"dispatched\""), c = journal.find("\"committed\""),
         f = journal.find("\"finished\"");
  EXPECT_LT(d, c);
  EXPECT_LT(c, f);
  EXPECT_NE(f, std::string::npos);

  // Our own honest run audits clean, with the context taken from the wiki.
  auto audit = test::run_kdispatch({"audit", run.run_dir().string(), "--wiki", run.wiki.string(),
                                    "--family", "rms-norm", "--experiment", "v002"});
  EXPECT_EQ(audit.exit_code, 0) << audit.out << audit.err;
  EXPECT_EQ(audit.out.find("not checked"), std::string::npos) << audit.out;
}

}  // namespace
}  // namespace kd
