#include "contract/ledger.h"

#include <gtest/gtest.h>

namespace kd::contract {
namespace {

TEST(CommitGrammar, AcceptsTheGrammarAndRejectsNearMisses) {
  EXPECT_TRUE(
      commit_subject_ok("cand1(rms-norm v001): fused single pass — p50 0.41 ms, 1.3x, parity ok"));
  EXPECT_TRUE(commit_subject_ok("cand12(x v123): a — b\n\nbody\nexp: v123"));
  EXPECT_FALSE(commit_subject_ok("cand1(rms-norm v01): x — y"));
  EXPECT_FALSE(commit_subject_ok("cand1(RMS v001): x — y"));
  EXPECT_FALSE(commit_subject_ok("cand1(rms v001): x - y"));  // hyphen, not an em dash
  EXPECT_FALSE(commit_subject_ok("candX(rms v001): x — y"));
  EXPECT_FALSE(commit_subject_ok("wip\ncand1(rms v001): x — y"));  // only the subject counts
  CommitSubject s;
  ASSERT_TRUE(parse_commit_subject("cand3(soft-max v042): tile 256 — 1.1x", &s));
  EXPECT_EQ(s.candidate, "cand3");
  EXPECT_EQ(s.family, "soft-max");
  EXPECT_EQ(s.experiment, "v042");
}

TEST(CommitGrammar, ExpFooterMustBeInTheBody) {
  EXPECT_TRUE(has_exp_footer("cand2(a v001): x — y\n\nexp: v001 final"));
  EXPECT_FALSE(has_exp_footer("exp: v001"));
  EXPECT_FALSE(has_exp_footer("cand2(a v001): x — y\n\nexp:   "));
}

constexpr const char* kGood =
    "loaded: [index: core thesis, BRIEFS.md, classes/streaming-reduction.md]\n"
    "\n"
    "| candidate | class | committed SHA | parity (max abs / max rel) | p50 ms (author-side) | vs "
    "naive | receipt | why kept/rejected |\n"
    "|---|---|---|---|---|---|---|---|\n"
    "| cand1 | kernel-authored | abc1234 | 1e-3 / 2e-3 | 0.41 | 1.30x | "
    "raw/profiles/p1/x-v001/author/cand1.json | kept |\n"
    "| cand2 | kernel-authored | def5678 | 1e-3 / 2e-3 | 0.52 | 1.02x |  | slower, a \\| pipe |\n";

TEST(Ledger, ParsesLoadedLineAndRows) {
  Ledger l = parse_ledger(kGood);
  EXPECT_TRUE(l.problems.empty()) << l.problems.front();
  EXPECT_TRUE(l.has_loaded_line);
  EXPECT_EQ(l.loaded.size(), 3u);
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.rows[0].receipt, "raw/profiles/p1/x-v001/author/cand1.json");
  EXPECT_EQ(l.rows[1].receipt, "");
  EXPECT_EQ(l.rows[1].why, "slower, a | pipe");
  EXPECT_EQ(l.rows[1].line, 6);
}

TEST(Ledger, CellsComeTrimmed) {
  Ledger l = parse_ledger(
      "loaded: [BRIEFS.md]\n"
      "| candidate | class | committed SHA | parity (max abs / max rel) | p50 ms (author-side) | "
      "vs "
      "naive | receipt | why kept/rejected |\n"
      "|---|---|---|---|---|---|---|---|\n"
      "|\t cand1 \t| k |  abc1234\r| p | 0.4 | 1.1x |\t r.json\t | \\| kept \\| |\n");
  ASSERT_EQ(l.rows.size(), 1u) << (l.problems.empty() ? "" : l.problems.front());
  EXPECT_EQ(l.rows[0].candidate, "cand1");
  EXPECT_EQ(l.rows[0].sha, "abc1234");
  EXPECT_EQ(l.rows[0].receipt, "r.json");
  EXPECT_EQ(l.rows[0].why, "| kept |");
}

TEST(Ledger, NamesEveryFormatProblem) {
  Ledger l = parse_ledger("| candidate | class |\n|---|---|\n| x1 | k |\n");
  EXPECT_FALSE(l.has_loaded_line);
  ASSERT_GE(l.problems.size(), 3u);
  EXPECT_EQ(l.problems[0], "the first line is not the `loaded: [...]` attestation");
  EXPECT_NE(l.problems[1].find("table columns must be exactly"), std::string::npos);
  EXPECT_NE(l.problems[2].find("2 cells where 8 columns are fixed"), std::string::npos);
  EXPECT_EQ(parse_ledger("loaded: []\n").problems.front(), "line 1: loaded: lists nothing");
}

}  // namespace
}  // namespace kd::contract
