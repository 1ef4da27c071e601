// A provider that fails is an error, never a verdict (issue: overnight runs that never lie): the
// fake server's faults (401, a spend cap, overload) and a real outage (a fake-llm process
// stopped mid-campaign and started again) drive campaigns of the example wiki.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <set>
#include <thread>

#include "common/files.h"
#include "git/repo.h"
#include "tests/dispatcher/campaign_env.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string stub_text(const test::ExampleEnv& env) {
  return read_file(env.wiki /
                   "wiki/kernel_experiments/rms-norm/pallas/2026-11-30-v002-rms-norm.md");
}

TEST(CampaignErrors, AnAuthFailureIsJournalledNeverFiledAndRetriedByResume) {
  test::ExampleEnv env;
  const std::string stub_before = stub_text(env);
  const std::string refused = test::write_script(
      env.root / "auth.json",
      json::array({{{"kind", "status"}, {"status", 401}, {"error_type", "authentication_error"}}}));
  auto r = env.run(refused, {"--file"});
  EXPECT_EQ(r.exit_code, 75) << r.out << r.err;
  EXPECT_NE(r.out.find("error (provider_auth)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("refused the API key"), std::string::npos) << r.err;
  EXPECT_TRUE(env.records("verdict").empty());
  EXPECT_TRUE(env.records("finished").empty()) << "a session the provider ended is not verified";
  ASSERT_EQ(env.records("error").size(), 1u);
  EXPECT_EQ(env.records("error")[0]["data"]["cause"], "provider_auth");
  EXPECT_FALSE(fs::exists(env.run_dir() / "outcome.json"));
  EXPECT_EQ(stub_text(env), stub_before) << "nothing was filed";
  EXPECT_FALSE(fs::exists(env.wiki / "wiki/kernel_experiments/rms-norm/pallas/RESULTS.tsv"));

  // `kdispatch verify` on that run refuses: nothing to verify.
  auto v = env.verify();
  EXPECT_EQ(v.exit_code, 75) << v.out << v.err;
  EXPECT_NE(v.err.find("nothing to verify"), std::string::npos) << v.err;

  // Without --resume the error stands (and still exits non-zero); with it, the experiment is
  // authored afresh and gets its verdict.
  auto plain = env.run(refused);
  EXPECT_EQ(plain.exit_code, 75) << plain.out;
  EXPECT_NE(plain.out.find("--resume"), std::string::npos) << plain.out;
  auto resumed = env.run(test::ExampleEnv::script("honest-author.json"), {"--resume"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  ASSERT_EQ(resumed.exit_code, env.run_exit_for_verdict()) << resumed.out << resumed.err;
  EXPECT_EQ(env.records("verdict").size(), 1u);
  EXPECT_TRUE(fs::is_directory(env.run_dir() / "author.error-1")) << "the failed attempt is kept";
  EXPECT_TRUE(env.outcome()["receipt"]["ok"].get<bool>());
}

// A verify tool that crashes is an error of the verification phase: journalled with its cause,
// never filed, and the campaign exits non-zero; --retry-errors (--resume said of a finished
// campaign) measures again and decides.
TEST(CampaignErrors, AVerifyToolThatCrashesIsAnErrorAndResumeVerifiesAgain) {
  test::ExampleEnv env;
  const std::string stub_before = stub_text(env);
  const std::string honest = test::ExampleEnv::script("honest-author.json");
  auto r = env.run(honest, {"--file", "--verify-cmd", "sh -c 'kill -SEGV $$'"});
  EXPECT_EQ(r.exit_code, 75) << r.out << r.err;
  EXPECT_NE(r.out.find("error (verify_tool)"), std::string::npos) << r.out;
  EXPECT_TRUE(env.records("verdict").empty());
  ASSERT_EQ(env.records("error").size(), 1u);
  EXPECT_EQ(env.records("error")[0]["data"]["cause"], "verify_tool");
  EXPECT_EQ(env.records("error")[0]["data"]["phase"], "verify");
  EXPECT_FALSE(fs::exists(env.run_dir() / "outcome.json"));
  EXPECT_EQ(stub_text(env), stub_before) << "nothing was filed";

  auto resumed = env.run(honest, {"--retry-errors"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  EXPECT_EQ(resumed.exit_code, env.run_exit_for_verdict()) << resumed.out << resumed.err;
  EXPECT_EQ(env.records("verdict").size(), 1u);
  EXPECT_EQ(env.records("dispatched").size(), 1u) << "the author's work is not done again";
}

TEST(CampaignErrors, ASpendCapStopsTheCampaignAtOnce) {
  test::ExampleEnv env;
  test::add_queued_experiments(env, 3);
  const std::string capped = test::write_script(
      env.root / "cap.json",
      json::array({{{"kind", "status"}, {"status", 429}, {"error_type", "billing_error"}}}));
  auto r = env.run(capped, {"--file"});
  EXPECT_EQ(r.exit_code, 75) << r.out << r.err;
  EXPECT_NE(r.out.find("error (provider_spend_cap)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not dispatched"), std::string::npos) << r.out;
  // One clear message, once; one dispatch, not three.
  const std::string msg = "stopping the campaign";
  size_t first = r.err.find(msg);
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(msg, first + 1), std::string::npos) << r.err;
  EXPECT_EQ(env.records("dispatched").size(), 1u);
  EXPECT_TRUE(env.records("verdict").empty());
}

TEST(CampaignErrors, AnOverloadedProviderPausesThenStopsWithoutAVerdict) {
  test::ExampleEnv env;
  json faults = json::array();
  for (int i = 0; i < 6; ++i)
    faults.push_back({{"kind", "status"}, {"status", 529}, {"error_type", "overloaded_error"}});
  const std::string overloaded = test::write_script(env.root / "529.json", faults);
  auto r = env.run(overloaded, {"--outage-wait", "0"});
  EXPECT_EQ(r.exit_code, 75) << r.out << r.err;
  EXPECT_NE(r.out.find("error (provider_overloaded)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("kdispatch run --resume"), std::string::npos) << r.err;
  EXPECT_TRUE(env.records("verdict").empty());
  ASSERT_EQ(env.records("error").size(), 1u);
  EXPECT_EQ(env.records("error")[0]["data"]["cause"], "provider_overloaded");
}

// The done-means: an outage in the middle of a 10-experiment campaign ends with no false
// verdict, the campaign pauses instead of burning its queue, and --resume completes it.
TEST(CampaignErrors, AnOutageMidCampaignGivesNoFalseVerdictAndResumeCompletesIt) {
  test::ExampleEnv env;
  test::add_queued_experiments(env, 10);
  const std::string script = test::write_script(env.root / "plain.json");
  std::string url;
  test::Child server = test::start_fake_llm(script, "127.0.0.1:0", env.root / "llm1", url);
  const std::string listen = url.substr(std::string("http://").size());
  std::vector<std::string> run = {"run",
                                  "--wiki",
                                  env.wiki.string(),
                                  "--provider",
                                  "anthropic",
                                  "--base-url",
                                  url,
                                  "--model",
                                  "fake-author",
                                  "--chips",
                                  env.chips.string(),
                                  "--run-root",
                                  env.runs.string(),
                                  "--tool-dir",
                                  env.tools.string(),
                                  "--outage-backoff",
                                  "1",
                                  "--outage-wait",
                                  "2",
                                  "--file"};
  test::Child campaign = test::spawn_kdispatch(run, env.root / "run1");
  // Three verdicts, then the provider goes away.
  for (int i = 0; i < 2400 && env.records_or_empty("verdict").size() < 3 && campaign.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_GE(env.records_or_empty("verdict").size(), 3u) << read_file(campaign.err);
  server.kill(SIGTERM);
  server.wait();
  int status = campaign.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 75) << read_file(campaign.out) << read_file(campaign.err);
  const std::string err = read_file(campaign.err);
  EXPECT_NE(err.find("pausing dispatch"), std::string::npos) << err;
  EXPECT_NE(err.find("the provider is still failing"), std::string::npos) << err;

  // No false verdict: no experiment has both an error and a verdict, and the queue was not
  // burnt: at most the in-flight experiment and the one probe after the pause failed.
  std::set<std::string> errored, judged;
  for (const auto& e : env.records("error")) {
    errored.insert(e["experiment"]);
    EXPECT_EQ(e["data"]["cause"], "provider_outage") << e.dump();
  }
  for (const auto& v : env.records("verdict"))
    judged.insert(v["experiment"]);
  EXPECT_FALSE(errored.empty());
  EXPECT_LE(errored.size(), 2u);
  for (const auto& k : errored)
    EXPECT_FALSE(judged.count(k)) << k << " has an error and a verdict";
  EXPECT_LT(judged.size() + errored.size(), 10u) << "the rest stayed queued";

  // The provider is back: --resume retries the errors and dispatches the rest.
  test::Child again = test::start_fake_llm(script, listen, env.root / "llm2", url);
  run.push_back("--resume");
  test::Child resumed = test::spawn_kdispatch(run, env.root / "run2");
  status = resumed.wait();
  again.kill(SIGTERM);
  again.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 2) << read_file(resumed.out) << read_file(resumed.err)
                                    << "(every verdict is inconclusive: the author never finishes)";
  std::set<std::string> now_judged;
  for (const auto& v : env.records("verdict"))
    EXPECT_TRUE(now_judged.insert(v["experiment"]).second) << "two verdicts for " << v.dump();
  EXPECT_EQ(now_judged.size(), 10u);
  for (const auto& k : errored) {
    // The verdict came from a new attempt, authored after the error.
    auto recs = test::records_of(env, k);
    size_t err_at = 0, finished_at = 0;
    for (size_t i = 0; i < recs.size(); ++i) {
      if (recs[i]["type"] == "error") err_at = i;
      if (recs[i]["type"] == "finished") finished_at = i;
    }
    EXPECT_GT(finished_at, err_at) << k;
  }
}

}  // namespace
}  // namespace kd
