#include "dispatcher/campaign_state.h"

#include <gtest/gtest.h>

#include "tests/support/process.h"

namespace kd::dispatcher {
namespace {

TEST(CampaignState, FoldsEachExperimentsRecords) {
  test::TempDir dir;
  Journal j(std::filesystem::path(dir.path()) / "journal.jsonl");
  j.append(rec::kDispatched, "a/v001",
           {{"chip", "0"}, {"branch", "kernel/a-v001"}, {"run_dir", "r/a"}});
  j.append(rec::kDispatched, "b/v001", {{"chip", "1"}});
  j.append(rec::kAuthorTurn, "a/v001",
           {{"turn", 1}, {"input_tokens", 100}, {"output_tokens", 20}, {"cost_usd", 0.5}});
  j.append(rec::kCommitted, "a/v001", {{"candidate", "cand1"}, {"sha", "s1"}});
  j.append(rec::kAuthorTurn, "a/v001",
           {{"turn", 2}, {"input_tokens", 250}, {"output_tokens", 50}, {"cost_usd", 1.25}});
  j.append(rec::kFinished, "a/v001", {{"end_reason", "finished"}});
  j.append(rec::kVerifyStarted, "a/v001", {{"chip", "2"}});
  j.append(rec::kVerdict, "a/v001", {{"verdict", "refuted"}});
  auto states = fold_journal(j.records());
  ASSERT_EQ(states.size(), 2u);
  const auto& a = states[0];
  EXPECT_EQ(a.experiment, "a/v001");
  EXPECT_TRUE(a.done());
  EXPECT_EQ(a.turns, 2);
  EXPECT_EQ(a.input_tokens + a.output_tokens, 300);
  EXPECT_DOUBLE_EQ(a.cost_usd, 1.25);
  EXPECT_EQ(a.chip, "2");
  ASSERT_EQ(a.commits.size(), 1u);
  EXPECT_EQ(a.commits[0]["sha"], "s1");
  EXPECT_EQ(a.verdict, "refuted");
  EXPECT_FALSE(states[1].done());
  EXPECT_EQ(states[1].phase, "dispatched");
  std::string line = status_line(a, "2099-01-01T00:00:00.000Z");
  EXPECT_NE(line.find("verdict (refuted)"), std::string::npos) << line;
  EXPECT_NE(line.find("turns   2"), std::string::npos) << line;
}

TEST(CampaignState, ElapsedRunsFromTheFirstStampAndIsZeroForOneThatDoesNotParse) {
  ExperimentState s;
  s.experiment = "a/v001";
  s.phase = "dispatched";
  s.first_ts = "2026-03-02T10:00:00.500Z";
  std::string line = status_line(s, "2026-03-02T10:01:40.900Z");
  EXPECT_NE(line.find("elapsed    100s"), std::string::npos) << line;
  s.first_ts = "2026-02-30T10:00:00.000Z";
  line = status_line(s, "2026-03-02T10:01:40.900Z");
  EXPECT_NE(line.find("elapsed      0s"), std::string::npos) << line;
}

}  // namespace
}  // namespace kd::dispatcher
