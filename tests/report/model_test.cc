// The report's data: every experiment of a run root, the counts, and the chip timeline's
// intervals from a journal and transcripts with known times.
#include "report/model.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/files.h"
#include "common/time.h"
#include "tests/report/run_root_fixture.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using test::at;

double t(const std::string& hms) {
  return *parse_rfc3339(at(hms));
}

TEST(ReportModel, ReadsEveryCampaignBelowTheRoot) {
  test::TempDir dir;
  fs::path root = dir.path();
  // Two nights in folders of their own, one campaign each; a folder without a journal between.
  test::CampaignFixture a(root / "night-1/runs", "example");
  a.verified("fam/v001", "0", "1", "10:00:00", "10:05:00", "10:07:00", "10:07:01", "supported",
             0.5);
  a.verified("fam/v002", "0", "1", "10:08:00", "10:10:00", "10:11:00", "10:11:01", "refuted", 0.25);
  a.write_brief("fam/v001", "fusing the two passes\nsecond line", 1.2);
  a.write_outcome("fam/v001", "supported", 1.5);
  a.write_audit("fam/v001", {"VIOLATION", "DRIFT", "FABRICATION"});
  test::CampaignFixture b(root / "night-2", "other");
  b.verified("gemm/v003", "1", "0", "11:00:00", "11:01:00", "11:02:00", "11:02:01", "invalid", 1.0);
  b.record(at("11:03:00"), "dispatched", "gemm/v004", {{"chip", "1"}});
  b.record(at("11:04:00"), "error", "gemm/v004", {{"reason", "the provider failed: 529"}});
  fs::create_directories(root / "notes/empty");

  report::Report r = report::load_report(root);
  ASSERT_EQ(r.campaigns.size(), 2u);
  EXPECT_EQ(r.campaigns[0].name, "night-1/runs/example");
  EXPECT_EQ(r.campaigns[1].name, "night-2/other");
  EXPECT_EQ(r.experiment_count(), 4u);

  const report::Campaign& c = r.campaigns[0];
  ASSERT_EQ(c.experiments.size(), 2u);
  const report::ExperimentRow& e = c.experiments[0];
  EXPECT_EQ(e.key, "fam/v001");
  EXPECT_EQ(e.family, "fam");
  EXPECT_EQ(e.version, "v001");
  EXPECT_EQ(e.outcome, "supported");
  EXPECT_EQ(e.hypothesis, "fusing the two passes");
  ASSERT_TRUE(e.bar.has_value());
  EXPECT_DOUBLE_EQ(*e.bar, 1.2);
  ASSERT_TRUE(e.speedup.has_value());
  EXPECT_DOUBLE_EQ(*e.speedup, 1.5);
  EXPECT_EQ(e.turns, 2);
  EXPECT_EQ(e.audit.findings, 3);
  EXPECT_EQ(e.audit.violations, 2);
  EXPECT_FALSE(c.experiments[1].audit.present);
  EXPECT_EQ(c.outcomes.at("supported"), 1);
  EXPECT_EQ(c.outcomes.at("refuted"), 1);
  EXPECT_DOUBLE_EQ(c.cost_usd, 0.75);
  EXPECT_EQ(c.input_tokens, 200);
  EXPECT_EQ(c.first_ts, at("10:00:00"));
  EXPECT_EQ(c.last_ts, at("10:11:01"));
  EXPECT_DOUBLE_EQ(c.wall_s, 11 * 60 + 1);
  EXPECT_FALSE(c.running);

  // The error keeps its cause; the verdict's reasons are kept too.
  const report::Campaign& c2 = r.campaigns[1];
  EXPECT_EQ(c2.experiments[1].outcome, "error");
  ASSERT_EQ(c2.experiments[1].reasons.size(), 1u);
  EXPECT_EQ(c2.experiments[1].reasons[0], "the provider failed: 529");
  EXPECT_EQ(c2.experiments[0].reasons, std::vector<std::string>{"because"});
  EXPECT_NE(c.experiments[0].page, c.experiments[1].page);
  EXPECT_NE(c.experiments[0].page, c2.experiments[0].page);
}

TEST(ReportModel, TimelineIntervalsComeFromTheJournalAndTheTranscript) {
  test::TempDir dir;
  test::CampaignFixture a(dir.path(), "camp");
  a.verified("fam/v001", "0", "1", "10:00:00", "10:05:00", "10:07:00", "10:07:01", "refuted", 0);
  // Two run_on_chip calls on chip 0: 10:00:12-10:00:15 and 10:00:22-10:00:25.
  a.write_transcript("fam/v001", test::author_transcript(2, "0", "t", "out", "10:00:00"));

  report::Campaign c = report::load_campaign(dir.path() + "/camp", "camp");
  ASSERT_EQ(c.intervals.size(), 3u);
  // Sorted by chip, then start.
  EXPECT_EQ(c.intervals[0].chip, "0");
  EXPECT_EQ(c.intervals[0].kind, "author");
  EXPECT_DOUBLE_EQ(c.intervals[0].start, t("10:00:12"));
  EXPECT_DOUBLE_EQ(c.intervals[0].end, t("10:00:15"));
  EXPECT_DOUBLE_EQ(c.intervals[1].start, t("10:00:22"));
  EXPECT_DOUBLE_EQ(c.intervals[1].end, t("10:00:25"));
  EXPECT_EQ(c.intervals[2].chip, "1");
  EXPECT_EQ(c.intervals[2].kind, "verify");
  EXPECT_EQ(c.intervals[2].experiment, "fam/v001");
  EXPECT_DOUBLE_EQ(c.intervals[2].start, t("10:05:00"));
  EXPECT_DOUBLE_EQ(c.intervals[2].end, t("10:07:00"));  // the chip is free once measured
  // Cache tokens come from the transcript; the journal has none.
  EXPECT_EQ(c.experiments[0].cache_read_tokens, 100);
  EXPECT_EQ(c.cache_read_tokens, 100);
}

TEST(ReportModel, ACampaignWithoutVerdictsIsRunningAndBadFilesAreProblems) {
  test::TempDir dir;
  test::CampaignFixture a(dir.path(), "camp");
  a.record(at("10:00:00"), "dispatched", "fam/v001",
           {{"chip", "0"}, {"run_dir", a.run_dir("fam/v001").string()}});
  a.record(at("10:01:00"), "verify_started", "fam/v001", {{"chip", "1"}});
  write_file_atomic(a.run_dir("fam/v001") / "outcome.json", "{not json");
  // A torn last line (a live run appending) is left out; a bad line in the middle is a problem.
  write_file_atomic(dir.path() + "/camp/journal.jsonl",
                    read_file(dir.path() + "/camp/journal.jsonl") + "garbage\n{\"seq\":9,");

  report::Campaign c = report::load_campaign(dir.path() + "/camp", "camp");
  EXPECT_TRUE(c.running);
  ASSERT_EQ(c.experiments.size(), 1u);
  EXPECT_EQ(c.experiments[0].outcome, "running");
  EXPECT_EQ(c.experiments[0].problems, std::vector<std::string>{"outcome.json is not JSON"});
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("line 3 is not a journal record"), std::string::npos);
  // The verification in flight is an open bar on its chip.
  ASSERT_EQ(c.intervals.size(), 1u);
  EXPECT_TRUE(c.intervals[0].open);
  EXPECT_EQ(c.intervals[0].chip, "1");
  EXPECT_GE(c.intervals[0].end, c.intervals[0].start);
}

TEST(ReportModel, ARootThatIsNotADirectoryIsRefusedByName) {
  try {
    report::load_report("/nonexistent/run-root");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/run-root"), std::string::npos);
  }
}

}  // namespace
}  // namespace kd
