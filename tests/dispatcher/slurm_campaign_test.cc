// Campaigns through Slurm (docs/slurm.md) on the real loopback cluster of the fixture
// (tests/slurm/cluster.sh): every run_on_chip and every verification is a Slurm job that runs
// `kdispatch-full chip-job` in the same box as locally; the verdicts are the local ones.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "common/files.h"
#include "tests/dispatcher/campaign_env.h"
#include "tests/support/example_env.h"
#include "tests/support/slurm_cluster.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The example's chips as the fixture cluster's partition: CPU chips, index in KD_CPU_CHIP.
void use_slurm(const test::ExampleEnv& env, json extra = json::object()) {
  json inv = {{"scheduler", "slurm"},      {"partition", "kd"}, {"gres", "gpu:tpu:1"},
              {"chip_env", "KD_CPU_CHIP"}, {"kind", "cpu"},     {"poll_interval_s", 0.2}};
  inv.update(extra);
  write_file_atomic(env.chips, inv.dump());
}

// Every job the journal names for `key`: submitted, with its end when it has one.
std::vector<json> jobs_of(const test::ExampleEnv& env, const std::string& key) {
  std::map<std::string, json> jobs;
  for (const auto& r : test::records_of(env, key, "job_submitted"))
    jobs[r["data"]["job_id"]] = r["data"];
  for (const auto& r : test::records_of(env, key, "job_finished"))
    jobs[r["data"]["job_id"]]["finished"] = r["data"];
  std::vector<json> out;
  for (auto& [id, j] : jobs)
    out.push_back(j);
  return out;
}

TEST(SlurmCampaign, HonestAuthorThroughSlurmEndsAsLocally) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  auto r = env.run(test::ExampleEnv::script("honest-author.json"));
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << r.out << r.err;
  EXPECT_EQ(r.exit_code, env.run_exit_for_verdict()) << r.out << r.err;
  const json outcome = env.outcome();
  EXPECT_NE(outcome["verdict"], "invalid") << outcome.dump(2);
  EXPECT_EQ(outcome["environment"]["scheduler"], "slurm") << outcome.dump(2);

  // Each chip call and the verification were jobs that Slurm finished, on a chip it named.
  const std::vector<json> jobs = jobs_of(env, "rms-norm/v002");
  std::set<std::string> purposes;
  for (const json& j : jobs) {
    purposes.insert(j["purpose"].get<std::string>());
    ASSERT_TRUE(j.contains("finished")) << j.dump();
    EXPECT_EQ(j["finished"]["state"], "COMPLETED") << j.dump();
    const std::string chip = j["finished"]["chip"];
    EXPECT_EQ(chip.rfind("kd1:", 0), 0u) << chip;
    auto done = test::finished_job(j["job_id"]);
    ASSERT_TRUE(done.has_value()) << j.dump();
    EXPECT_EQ(done->state, "COMPLETED");
  }
  EXPECT_EQ(purposes, (std::set<std::string>{"run_on_chip", "verify"}));
  // The verifier's chip is recorded beside the author's last, and is another one.
  const json env_rec = outcome["environment"];
  EXPECT_FALSE(env_rec["author_last_chip"].get<std::string>().empty()) << env_rec.dump();
  EXPECT_NE(env_rec["verifier_chip"], env_rec["author_last_chip"]) << env_rec.dump();
  // The chip reached the transcript: run_on_chip's result names it.
  EXPECT_NE(read_file(env.run_dir() / "author/transcript.jsonl").find("(Slurm)"),
            std::string::npos);
}

TEST(SlurmCampaign, CheatingAuthorThroughSlurmIsInvalid) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  auto r = env.run(test::ExampleEnv::script("cheating-author.json"));
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << r.out << r.err;
  EXPECT_EQ(env.outcome()["verdict"], "invalid") << env.outcome().dump(2);
  const std::vector<json> jobs = jobs_of(env, "rms-norm/v002");
  EXPECT_FALSE(jobs.empty());
  for (const json& j : jobs)
    EXPECT_EQ(j["finished"]["state"], "COMPLETED") << j.dump();
}

// kill -9 of kdispatch right after it journalled the verification's job (the author's two
// run_on_chip jobs come first): the job runs on without it; --resume awaits it and collects its
// result instead of submitting it again.
TEST(SlurmCampaign, Kill9WhileTheVerificationJobRunsThenResumeCollectsIt) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  const std::string script = test::ExampleEnv::script("honest-author.json");
  auto crashed = env.run(script, {}, {{"KDISPATCH_CRASH_AFTER", "job_submitted:3"}});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.out << crashed.err;
  std::vector<json> jobs = jobs_of(env, "rms-norm/v002");
  ASSERT_EQ(jobs.size(), 3u);
  size_t unfinished = 0;
  for (const json& j : jobs)
    unfinished += !j.contains("finished");
  EXPECT_EQ(unfinished, 1u);

  auto resumed = env.run(script, {"--resume"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  EXPECT_EQ(resumed.exit_code, env.run_exit_for_verdict()) << resumed.out << resumed.err;
  EXPECT_EQ(env.records("verdict").size(), 1u);
  jobs = jobs_of(env, "rms-norm/v002");
  EXPECT_EQ(jobs.size(), 3u) << "a job was submitted again";
  for (const json& j : jobs) {
    ASSERT_TRUE(j.contains("finished")) << j.dump();
    EXPECT_EQ(j["finished"]["state"], "COMPLETED") << j.dump();
  }
  EXPECT_TRUE(env.outcome()["receipt"]["ok"].get<bool>()) << env.outcome().dump(2);
}

// A verification job cancelled from outside (scancel) is an error carrying Slurm's state, never a
// verdict; --resume then verifies again and ends in the verdict.
TEST(SlurmCampaign, ScancelFromOutsideIsAnErrorThenResumeCompletes) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  const std::string script = test::ExampleEnv::script("cheating-author.json");
  test::Child child = test::spawn_kdispatch(
      {"run", "--wiki", env.wiki.string(), "--provider", "fake", "--script", script, "--chips",
       env.chips.string(), "--run-root", env.runs.string(), "--tool-dir", env.tools.string()},
      env.root / "run");
  std::string job;
  for (int i = 0; i < 2400 && job.empty() && child.running(); ++i) {
    for (const json& r : env.records_or_empty("job_submitted"))
      if (r["data"]["purpose"] == "verify") job = r["data"]["job_id"];
    if (job.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_FALSE(job.empty()) << read_file(child.err);
  auto cancel = test::run_process({"scancel", job});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  const int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  const std::string out = read_file(child.out);
  EXPECT_NE(out.find("error (chip_unavailable)"), std::string::npos) << out;
  EXPECT_NE(out.find("Slurm job " + job), std::string::npos) << out;
  EXPECT_NE(out.find("CANCELLED"), std::string::npos) << out;
  EXPECT_TRUE(env.records("verdict").empty());

  auto resumed = env.run(script, {"--resume"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  EXPECT_EQ(env.outcome()["verdict"], "invalid") << env.outcome().dump(2);
  EXPECT_EQ(env.records("verdict").size(), 1u);
}

}  // namespace
}  // namespace kd
