#include <gtest/gtest.h>

#include "dispatcher/campaign_state.h"
#include "tests/support/process.h"

namespace kd {
namespace {

TEST(StatusCli, ListsEveryCampaignsExperiments) {
  test::TempDir root;
  {
    dispatcher::Journal j(std::filesystem::path(root.path()) / "p1/journal.jsonl");
    j.append(dispatcher::rec::kDispatched, "rms-norm/v001", {{"chip", "0"}});
    j.append(dispatcher::rec::kVerdict, "rms-norm/v001", {{"verdict", "supported"}});
    j.append(dispatcher::rec::kDispatched, "softmax/v002", {{"chip", "1"}});
  }
  auto r = test::run_kdispatch({"status", "--run-root", root.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("campaign p1: 2 experiments, 1 done"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rms-norm/v001"), std::string::npos);
  EXPECT_NE(r.out.find("verdict (supported)"), std::string::npos);
  EXPECT_NE(r.out.find("softmax/v002"), std::string::npos);

  test::TempDir empty;
  r = test::run_kdispatch({"status", "--run-root", empty.path()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("no campaigns"), std::string::npos);
  EXPECT_EQ(test::run_kdispatch({"status", "--run-root", empty / "missing"}).exit_code, 64);
}

}  // namespace
}  // namespace kd
