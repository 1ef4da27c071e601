#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "common/files.h"
#include "dispatcher/campaign_state.h"
#include "tests/dispatcher/campaign_env.h"
#include "tests/support/process.h"

namespace kd {
namespace {

using json = nlohmann::json;

TEST(StatusCli, ListsEveryCampaignsExperiments) {
  test::TempDir root;
  {
    dispatcher::Journal j(std::filesystem::path(root.path()) / "p1/journal.jsonl");
    j.append(dispatcher::rec::kDispatched, "rms-norm/v001", {{"chip", "0"}});
    j.append(dispatcher::rec::kVerdict, "rms-norm/v001", {{"verdict", "supported"}});
    j.append(dispatcher::rec::kDispatched, "softmax/v002", {{"chip", "1"}});
    j.append(dispatcher::rec::kAuthorTurn, "softmax/v002",
             {{"turn", 3}, {"input_tokens", 900}, {"output_tokens", 100}, {"cost_usd", 0.25}});
    j.append(dispatcher::rec::kError, "softmax/v002",
             {{"cause", "provider_outage"}, {"message", "the provider did not answer"}});
  }
  auto r = test::run_kdispatch({"status", "--run-root", root.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("campaign p1: unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 experiments, 1 done, 1 errors; 1000 tokens, $0.250"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("verdict (supported)"), std::string::npos);
  EXPECT_NE(r.out.find("error (provider_outage)"), std::string::npos) << r.out;

  // A folder above the run root finds the same campaign; --json says the same in fields.
  auto j = test::run_kdispatch(
      {"status", "--json", std::filesystem::path(root.path()).parent_path().string()});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json doc = json::parse(j.out);
  bool found = false;
  for (const auto& c : doc["campaigns"]) {
    if (c["dir"] != (std::filesystem::path(root.path()) / "p1").string()) continue;
    found = true;
    EXPECT_EQ(c["totals"]["errors"], 1);
    EXPECT_EQ(c["experiments"][1]["state"], "error");
    EXPECT_EQ(c["experiments"][1]["error"]["cause"], "provider_outage");
    EXPECT_DOUBLE_EQ(c["totals"]["cost_usd"].get<double>(), 0.25);
  }
  EXPECT_TRUE(found) << j.out;

  test::TempDir empty;
  r = test::run_kdispatch({"status", "--run-root", empty.path()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("no campaigns"), std::string::npos);
  // A run root that is not there is the user's mistake: named, exit 2.
  r = test::run_kdispatch({"status", "--run-root", empty / "missing"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
}

// A campaign killed with SIGKILL shows as dead, not as a dispatch with a growing clock.
// A journal a box could have written (the verifier's scratch inside a run directory) or a link
// named journal.jsonl is not a campaign.
TEST(StatusCli, IgnoresJournalsInsideRunDirectoriesAndLinks) {
  test::TempDir root;
  const std::filesystem::path campaign = std::filesystem::path(root.path()) / "p1";
  {
    dispatcher::Journal j(campaign / "journal.jsonl");
    j.append(dispatcher::rec::kDispatched, "rms-norm/v001", {{"chip", "0"}});
  }
  std::filesystem::create_directories(campaign / "rms-norm-v001/verifier/work");
  write_file_atomic(campaign / "rms-norm-v001/run.json", "{}");
  std::filesystem::copy_file(campaign / "journal.jsonl",
                             campaign / "rms-norm-v001/verifier/work/journal.jsonl");
  std::filesystem::create_directories(campaign / "linked");
  std::filesystem::create_symlink(campaign / "journal.jsonl", campaign / "linked/journal.jsonl");
  auto r = test::run_kdispatch({"status", "--json", root.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  ASSERT_EQ(doc["campaigns"].size(), 1u) << r.out;
  EXPECT_EQ(doc["campaigns"][0]["dir"], campaign.string());
}

TEST(StatusCli, AKilledCampaignShowsAsDead) {
  test::ExampleEnv env;
  const std::string stalls =
      test::write_script(env.root / "stall.json",
                         json::array({{{"kind", "stall"}, {"seconds", 60}, {"after_events", 1}}}));
  test::Child run =
      test::spawn_kdispatch({"run", "--wiki", env.wiki.string(), "--provider", "fake", "--script",
                             stalls, "--chips", env.chips.string(), "--run-root", env.runs.string(),
                             "--tool-dir", env.tools.string(), "--status-every", "1"},
                            env.root / "run");
  for (int i = 0; i < 800 && env.records_or_empty("dispatched").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_FALSE(env.records_or_empty("dispatched").empty()) << read_file(run.err);

  auto alive = test::run_kdispatch({"status", "--json", "--run-root", env.runs.string()});
  ASSERT_EQ(alive.exit_code, 0) << alive.err;
  json a = json::parse(alive.out);
  ASSERT_EQ(a["campaigns"][0]["process"]["state"], "alive") << alive.out << read_file(run.err);
  EXPECT_EQ(a["campaigns"][0]["process"]["record"]["model"]["provider"], "fake");
  EXPECT_FALSE(a["campaigns"][0]["process"]["record"]["version"].get<std::string>().empty());
  EXPECT_EQ(a["campaigns"][0]["experiments"][0]["state"], "active");

  run.kill(SIGKILL);
  run.wait();
  auto dead = test::run_kdispatch({"status", "--run-root", env.runs.string()});
  ASSERT_EQ(dead.exit_code, 0) << dead.err;
  EXPECT_NE(dead.out.find("campaign example: dead"), std::string::npos) << dead.out;
  EXPECT_NE(dead.out.find("dead (dispatched)"), std::string::npos) << dead.out;
  auto dj =
      json::parse(test::run_kdispatch({"status", "--json", "--run-root", env.runs.string()}).out);
  EXPECT_EQ(dj["campaigns"][0]["process"]["state"], "dead");
  EXPECT_EQ(dj["campaigns"][0]["experiments"][0]["state"], "interrupted");
  // The clock stopped at the last record: two readings a second apart agree.
  double e1 = dj["campaigns"][0]["experiments"][0]["elapsed_s"];
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto dj2 =
      json::parse(test::run_kdispatch({"status", "--json", "--run-root", env.runs.string()}).out);
  EXPECT_EQ(dj2["campaigns"][0]["experiments"][0]["elapsed_s"].get<double>(), e1);
}

}  // namespace
}  // namespace kd
