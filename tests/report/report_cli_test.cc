// `kdispatch report` and `kdispatch transcript show` as a user runs them.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/report/run_root_fixture.h"
#include "tests/support/process.h"

namespace kd {
namespace {

namespace fs = std::filesystem;

TEST(ReportCli, WritesTheIndexAndAPagePerExperimentAndSaysWhere) {
  test::TempDir dir;
  test::CampaignFixture c(fs::path(dir.path()) / "runs", "camp");
  c.verified("fam/v001", "0", "1", "10:00:00", "10:05:00", "10:07:00", "10:07:01", "refuted", 0.1);
  c.verified("fam/v002", "0", "1", "10:08:00", "10:09:00", "10:10:00", "10:10:01", "supported",
             0.1);
  auto r = test::run_kdispatch({"report", "--run-root", dir / "runs", "--out", dir / "out"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("report: " + dir / "out/index.html" + " (1 campaigns, 2 experiments)"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(fs::is_regular_file(dir / "out/experiments/camp--fam_v001.html"));
  EXPECT_TRUE(fs::is_regular_file(dir / "out/experiments/camp--fam_v002.html"));
  // Without --out: RUN_ROOT/report.
  r = test::run_kdispatch({"report", "--run-root", dir / "runs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "runs/report/index.html"));

  r = test::run_kdispatch({"report", "--run-root", dir / "absent"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
}

TEST(ReportCli, TranscriptShowRendersForPeopleWithoutColourOffATerminal) {
  test::TempDir dir;
  std::string path =
      test::author_transcript(2, "0", "I will try a fused kernel", "exit 0", "10:00:00")
          .write(dir, "t.jsonl");
  auto r = test::run_kdispatch({"transcript", "show", path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);  // stdout is a pipe here
  EXPECT_NE(r.out.find("chain: intact (10 records)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("turn 2"), std::string::npos);
  EXPECT_NE(r.out.find("I will try a fused kernel"), std::string::npos);
  EXPECT_NE(r.out.find("\xE2\x96\xB6 run_on_chip"), std::string::npos);
  EXPECT_EQ(test::run_kdispatch({"transcript", "show", path, "--no-color"}).out, r.out);

  auto missing = test::run_kdispatch({"transcript", "show", dir / "none.jsonl"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("chain: missing"), std::string::npos) << missing.out;
  auto usage = test::run_kdispatch({"transcript", "view", path});
  EXPECT_EQ(usage.exit_code, 64);
}

}  // namespace
}  // namespace kd
