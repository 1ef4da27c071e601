// Campaigns through Slurm (docs/slurm.md) on the real loopback cluster of the fixture
// (tests/slurm/cluster.sh): every run_on_chip and every verification is a Slurm job that runs
// `kdispatch-full chip-job` in the same box as locally; the verdicts are the local ones.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "common/errors.h"
#include "common/files.h"
#include "common/text.h"
#include "common/time.h"
#include "dispatcher/slurm_client.h"
#include "examples/example_wiki.h"
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

// A job the campaign journalled ended COMPLETED. A verification's try declined while its chip
// was held is journalled at the decline, still running (`holding`, no state yet); it ends once
// its next try has a chip, and Slurm's record says so.
void expect_completed(const json& j) {
  ASSERT_TRUE(j.contains("finished")) << j.dump();
  if (!j["finished"].value("holding", false)) {
    EXPECT_EQ(j["finished"]["state"], "COMPLETED") << j.dump();
    return;
  }
  EXPECT_TRUE(j["finished"].value("declined", false)) << j.dump();
  EXPECT_FALSE(j["finished"].contains("state")) << j.dump();
  std::optional<test::FinishedJob> done;
  for (int i = 0; i < 100 && !done; ++i) {
    done = test::finished_job(j["job_id"]);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(done.has_value()) << "the held try never ended: " << j.dump();
  EXPECT_EQ(done->state, "COMPLETED") << j.dump();
}

// Preflight asks the cluster: a partition without the inventory's GRES is refused before any
// dispatch, naming both; the fixture's partition passes with what it has.
TEST(SlurmCampaign, PreflightChecksThePartitionHasTheGres) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env, {{"gres", "gpu:a100:1"}});
  auto bad = env.run(test::ExampleEnv::script("honest-author.json"), {"--dry-run"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("BAD chip inventory " + env.chips.string() +
                         ": Slurm partition kd has no GRES gpu:a100 on its nodes"),
            std::string::npos)
      << bad.out;
  use_slurm(env);
  auto good = env.run(test::ExampleEnv::script("honest-author.json"), {"--dry-run"});
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("ok  chip inventory " + env.chips.string() + ": Slurm partition kd, "),
            std::string::npos)
      << good.out;
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
    expect_completed(j);
    // A verification's one-chip try given the author's chip ran nothing and names no chip.
    const bool declined = j["finished"].value("declined", false);
    EXPECT_EQ(declined,
              j["finished"]["given"] == json::array({outcome["environment"]["author_last_chip"]}) &&
                  j.value("decline_avoided", false))
        << j.dump();
    const std::string chip = declined ? j["finished"]["given"][0] : j["finished"]["chip"];
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

// A job holding `chips` of the node's chips until release() or the end of the test, so that the
// campaign's jobs get the rest.
class HeldChips {
 public:
  HeldChips(const test::ExampleEnv& env, int chips) {
    dispatcher::slurm::SubmitRequest hold;
    hold.name = "kd-test-hold";
    hold.gres = "gpu:tpu:" + std::to_string(chips);
    hold.script = env.root / "hold.sh";
    write_file_atomic(hold.script, "#!/bin/sh\nsleep 300\n");
    fs::permissions(hold.script, fs::perms::owner_all);
    hold.output = env.root / "hold.out";
    hold.chdir = env.root;
    hold.time_limit_minutes = 10;
    id_ = slurm_.submit(hold);
    for (int i = 0; i < 1200 && phase() == dispatcher::slurm::Phase::Pending; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(phase(), dispatcher::slurm::Phase::Running) << "job " << id_;
  }
  // Never throws: a scancel that fails here is a failure of the test, not a terminate.
  ~HeldChips() {
    try {
      release();
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  void release() {
    if (!id_.empty()) slurm_.cancel({std::exchange(id_, "")});
  }

 private:
  dispatcher::slurm::Phase phase() { return slurm_.query({id_}).at(id_).phase; }
  dispatcher::slurm::Client slurm_;
  std::string id_;
};

// A verification's jobs, in the order they were submitted.
std::vector<json> verify_jobs(const test::ExampleEnv& env) {
  std::vector<json> out;
  for (const json& j : jobs_of(env, "rms-norm/v002"))
    if (j["purpose"] == "verify") out.push_back(j);
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return std::stoi(a["job_id"].get<std::string>()) < std::stoi(b["job_id"].get<std::string>());
  });
  return out;
}

// Slurm cannot exclude one GRES index, so a verification asks for one chip and declines it when
// it is the author's last, keeping it while its next try waits for another. Here another job
// holds three of the node's four chips: the author's run_on_chip gets the fourth, the
// verification's one-chip try is given that same chip, runs nothing and keeps it, and its next
// try, for one chip, waits for one of the three and runs there; only then is the fourth let go.
TEST(SlurmCampaign, AVerificationDeclinesTheAuthorsChipAndHoldsItUntilItsNextTryHasAnother) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  HeldChips held(env, 3);
  test::Child child = test::spawn_kdispatch(
      {"run", "--wiki", env.wiki.string(), "--provider", "fake", "--script",
       test::ExampleEnv::script("honest-author.json"), "--chips", env.chips.string(), "--run-root",
       env.runs.string(), "--tool-dir", env.tools.string()},
      env.root / "run");
  std::vector<json> verifies;
  for (int i = 0; i < 4800 && verifies.size() < 2 && child.running(); ++i) {
    if (fs::exists(env.journal())) verifies = verify_jobs(env);
    if (verifies.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(verifies.size(), 2u) << read_file(child.err);
  // Both tries are Slurm's now: the first holds the fourth chip, so the second must wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const std::string first = verifies[0]["job_id"], next = verifies[1]["job_id"];
  const auto states = dispatcher::slurm::Client().query({first, next});
  EXPECT_EQ(states.at(first).state, "RUNNING") << "the declined try let go of its chip";
  EXPECT_EQ(states.at(next).state, "PENDING") << "the next try got a chip";
  held.release();
  const int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status << read_file(child.err);
  EXPECT_EQ(WEXITSTATUS(status), env.run_exit_for_verdict()) << read_file(child.err);

  const json where = env.outcome()["environment"];
  const std::string author_chip = where["author_last_chip"];
  verifies = verify_jobs(env);
  ASSERT_EQ(verifies.size(), 2u);
  EXPECT_EQ(verifies[0]["gres"], "gpu:tpu:1");
  EXPECT_EQ(verifies[0]["finished"]["given"], json::array({author_chip})) << verifies[0].dump();
  EXPECT_TRUE(verifies[0]["finished"].value("declined", false));
  EXPECT_TRUE(verifies[0]["finished"].value("holding", false));
  EXPECT_FALSE(verifies[0]["finished"].contains("chip"));
  EXPECT_EQ(verifies[1]["gres"], "gpu:tpu:1");
  EXPECT_EQ(verifies[1]["releases"], json::array({verifies[0]["hold"]})) << verifies[1].dump();
  EXPECT_EQ(verifies[1]["finished"]["given"].size(), 1u) << verifies[1].dump();
  EXPECT_NE(verifies[1]["finished"]["chip"], author_chip);
  EXPECT_EQ(verifies[1]["finished"]["chip"], where["verifier_chip"]);
  for (const json& j : verifies)
    expect_completed(j);
  EXPECT_NE(env.outcome()["verdict"], "invalid");
}

// The honest author, killed (-9) right after the journal's `crash_after` record while another
// job holds three of the node's four chips, so that the verification's first try is given the
// author's chip; `while_held` checks what it must before those chips are free again.
void crash_with_three_chips_held(const test::ExampleEnv& env, const std::string& crash_after,
                                 const std::function<void()>& while_held = {}) {
  HeldChips held(env, 3);
  auto crashed = env.run(test::ExampleEnv::script("honest-author.json"), {},
                         {{"KDISPATCH_CRASH_AFTER", crash_after}});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.out << crashed.err;
  if (while_held) while_held();
}

// --resume of the honest author: it ends in one verdict.
void resume_to_one_verdict(const test::ExampleEnv& env) {
  auto resumed = env.run(test::ExampleEnv::script("honest-author.json"), {"--resume"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  EXPECT_EQ(resumed.exit_code, env.run_exit_for_verdict()) << resumed.out << resumed.err;
  EXPECT_EQ(env.records("verdict").size(), 1u);
}

// kill -9 right after the declined try's next job is journalled (the try itself journalled as
// declined and holding its chip): the next job runs on without kdispatch and lets the first go;
// --resume collects it instead of asking for chips again.
TEST(SlurmCampaign, Kill9AfterADeclinedTryResumeCollectsItsNextJob) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  // Two run_on_chip jobs on the one free chip, the verification's try given it too, then the
  // next try, which waits for the held chips.
  ASSERT_NO_FATAL_FAILURE(crash_with_three_chips_held(env, "job_submitted:4"));
  ASSERT_NO_FATAL_FAILURE(resume_to_one_verdict(env));
  const std::vector<json> verifies = verify_jobs(env);
  ASSERT_EQ(verifies.size(), 2u) << "the next job was submitted again";
  EXPECT_TRUE(verifies[0]["finished"].value("declined", false)) << verifies[0].dump();
  EXPECT_EQ(verifies[1]["gres"], "gpu:tpu:1");
  EXPECT_EQ(verifies[1]["finished"]["state"], "COMPLETED") << verifies[1].dump();
  const json where = env.outcome()["environment"];
  EXPECT_EQ(verifies[1]["finished"]["chip"], where["verifier_chip"]);
  EXPECT_NE(where["verifier_chip"], where["author_last_chip"]);
  for (const json& j : verifies)
    expect_completed(j);
}

// kill -9 right after the declined try is journalled, before any next try: the try keeps its
// chip for nobody. --resume lets it go as it submits the next try, which runs elsewhere.
TEST(SlurmCampaign, Kill9WhileADeclinedTryHoldsItsChipResumeLetsItGo) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  // Two run_on_chip jobs, then the verification's declined try.
  ASSERT_NO_FATAL_FAILURE(crash_with_three_chips_held(env, "job_finished:3", [&] {
    const std::vector<json> verifies = verify_jobs(env);
    ASSERT_EQ(verifies.size(), 1u);
    ASSERT_TRUE(verifies[0]["finished"].value("holding", false)) << verifies[0].dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    EXPECT_FALSE(test::finished_job(verifies[0]["job_id"]).has_value())
        << "the declined try let go of its chip without a next try";
  }));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(resume_to_one_verdict(env));
  const std::vector<json> verifies = verify_jobs(env);
  ASSERT_EQ(verifies.size(), 2u);
  EXPECT_EQ(verifies[1]["releases"], json::array({verifies[0]["hold"]})) << verifies[1].dump();
  EXPECT_NE(verifies[1]["finished"]["chip"], verifies[0]["finished"]["given"][0]);
  for (const json& j : verifies)
    expect_completed(j);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120))
      << "the declined try held its chip to its bound";
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
    expect_completed(j);
}

// kill -9 of kdispatch right after it journalled a job (the author's first run_on_chip, or the
// verification's first, after the author's two): the job runs on without it; --resume awaits it
// and collects its result instead of submitting it again (a verification's one-chip try that
// the node declined is followed by the two-chip job, as without the kill).
class SlurmResume : public ::testing::TestWithParam<std::string> {};

TEST_P(SlurmResume, Kill9WhileAJobRunsThenResumeCollectsIt) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  const std::string script = test::ExampleEnv::script("honest-author.json");
  auto crashed = env.run(script, {}, {{"KDISPATCH_CRASH_AFTER", GetParam()}});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.out << crashed.err;
  std::vector<json> jobs = jobs_of(env, "rms-norm/v002");
  size_t unfinished = 0;
  for (const json& j : jobs)
    unfinished += !j.contains("finished");
  EXPECT_EQ(unfinished, 1u);

  auto resumed = env.run(script, {"--resume"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  EXPECT_EQ(resumed.exit_code, env.run_exit_for_verdict()) << resumed.out << resumed.err;
  EXPECT_EQ(env.records("verdict").size(), 1u);
  jobs = jobs_of(env, "rms-norm/v002");
  size_t ran = 0, declined = 0;
  for (const json& j : jobs) {
    expect_completed(j);
    // The verification's one-chip try, where Slurm gave it the author's chip, ran nothing.
    if (j["finished"].value("declined", false)) {
      EXPECT_EQ(j["purpose"], "verify") << j.dump();
      ++declined;
    } else {
      ++ran;
    }
  }
  EXPECT_EQ(ran, 3u) << "two run_on_chip jobs and a verification, none submitted again";
  EXPECT_LE(declined, 1u);
  EXPECT_TRUE(env.outcome()["receipt"]["ok"].get<bool>()) << env.outcome().dump(2);
}

INSTANTIATE_TEST_SUITE_P(AfterAJobIsSubmitted, SlurmResume,
                         ::testing::Values("job_submitted:1", "job_submitted:3"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "job_submitted:1" ? "RunOnChip" : "Verification";
                         });

// A verification job cancelled from outside (scancel) is an error carrying Slurm's state, never a
// verdict; --resume then verifies again and ends in the verdict. Another job holds every chip
// until the cancel, so the verification (about a second's work) cannot end before it.
TEST(SlurmCampaign, ScancelFromOutsideIsAnErrorThenResumeCompletes) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  const std::string script = test::ExampleEnv::script("cheating-author.json");
  HeldChips held(env, 4);
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
  held.release();

  auto resumed = env.run(script, {"--resume"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  EXPECT_EQ(env.outcome()["verdict"], "invalid") << env.outcome().dump(2);
  EXPECT_EQ(env.records("verdict").size(), 1u);
}

// A fake author for many families: one run_on_chip that logs its chip and its own start and end
// into the experiment's artifact dir, then an edit, a commit and a finish.
std::string write_family_script(const fs::path& path) {
  const std::string log = "\"$KD_ARTIFACT_DIR/chip.log\"";
  const std::string stamp = "$KD_CPU_CHIP $(date +%s.%N)";
  const std::string cmd =
      "echo start " + stamp + " >> " + log + "; sleep 1; echo end " + stamp + " >> " + log;
  const std::string row =
      "| cand1 | kernel-authored | {{result.c1.sha}} | 0 / 0 | - | - | - | the one candidate |";
  const std::string ledger =
      "loaded: [index; BRIEFS.md]\n| candidate | class | committed SHA | parity (max abs / max "
      "rel) | p50 ms (author-side) | vs naive | receipt | why kept/rejected |\n"
      "|---|---|---|---|---|---|---|---|\n" +
      row;
  json turns = json::array();
  turns.push_back(
      {{"text", "On the chip."},
       {"tool_calls",
        {{{"id", "m1"}, {"name", "run_on_chip"}, {"input", {{"command", {"sh", "-c", cmd}}}}}}}});
  turns.push_back({{"tool_calls",
                    {{{"id", "w1"},
                      {"name", "edit_file"},
                      {"input",
                       {{"path", "normkit/rms_norm.py"},
                        {"old_text", "import numpy as np"},
                        {"new_text", "import numpy as np  # one pass"}}}}}}});
  turns.push_back({{"tool_calls",
                    {{{"id", "c1"},
                      {"name", "commit"},
                      {"input", {{"message", "cand1({{experiment}}): one pass — chip log"}}}}}}});
  turns.push_back(
      {{"tool_calls",
        {{{"id", "f"},
          {"name", "finish"},
          {"input",
           {{"ledger", ledger},
            {"final_candidate", {{"path", "normkit/rms_norm.py"}, {"sha", "{{result.c1.sha}}"}}},
            {"mechanism", "A comment."},
            {"escalations", json::array()},
            {"blockers", json::array()},
            {"abandoned",
             {{{"candidate", "cand2"}, {"reason", "test"}},
              {{"candidate", "cand3"}, {"reason", "test"}}}},
            {"compliance", "no-peek respected"}}}}}}});
  write_file_atomic(path, json{{"model", "fake-families"}, {"turns", turns}}.dump());
  return path.string();
}

// Four families on the four chips of the fixture's node: no chip ever ran two jobs at once (the
// jobs' own start and end on each chip, and the commands' own logs agree with the chip Slurm
// gave), and no verification ran on its author's last chip.
TEST(SlurmCampaign, FourFamiliesOnFourChipsNeverShareAChip) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  examples::add_example_families(env.wiki, 4, 1);
  use_slurm(env);
  auto r = test::run_kdispatch({"run",
                                "--wiki",
                                env.wiki.string(),
                                "--family",
                                "fam0",
                                "--family",
                                "fam1",
                                "--family",
                                "fam2",
                                "--family",
                                "fam3",
                                "--provider",
                                "fake",
                                "--script",
                                write_family_script(env.root / "fam.json"),
                                "--chips",
                                env.chips.string(),
                                "--run-root",
                                env.runs.string(),
                                "--tool-dir",
                                env.tools.string(),
                                "--status-every",
                                "3600"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.out << r.err;
  EXPECT_EQ(r.out.find("error"), std::string::npos) << r.out;

  struct Span {
    double start, end;
    std::string what;
  };
  std::map<std::string, std::vector<Span>> by_chip;
  std::map<std::string, std::string> declined;  // family -> the one chip its try was given
  size_t jobs = 0;
  for (const auto& e : fs::recursive_directory_iterator(env.runs)) {
    if (e.path().filename() != "result.json") continue;
    const json res = json::parse(read_file(e.path()));
    ASSERT_EQ(res["error"], "") << e.path();
    if (res.value("declined", false)) {
      // A verification's one-chip try that Slurm gave the author's chip: it ran nothing.
      const std::string job = e.path().parent_path().filename().string();
      EXPECT_EQ(job.rfind("verify-", 0), 0u) << e.path();
      ASSERT_EQ(res["given"].size(), 1u) << e.path();
      declined[e.path().parent_path().parent_path().parent_path().filename().string()] =
          res["given"][0];
      continue;
    }
    by_chip[res["chip"]].push_back({*parse_rfc3339(res["started_at"].get<std::string>()),
                                    *parse_rfc3339(res["finished_at"].get<std::string>()),
                                    e.path().parent_path().string()});
    ++jobs;
  }
  EXPECT_EQ(jobs, 8u) << "four run_on_chip jobs and four verifications";
  EXPECT_GE(by_chip.size(), 2u);
  for (auto& [chip, spans] : by_chip) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.start < b.start; });
    for (size_t i = 1; i < spans.size(); ++i)
      EXPECT_LE(spans[i - 1].end, spans[i].start)
          << chip << " ran two jobs at once: " << spans[i - 1].what << " and " << spans[i].what;
  }
  for (int f = 0; f < 4; ++f) {
    const std::string fam = "fam" + std::to_string(f);
    const fs::path run_dir = env.runs / "example" / (fam + "-v001");
    const json outcome = json::parse(read_file(run_dir / "outcome.json"));
    const json where = outcome["environment"];
    EXPECT_FALSE(where["author_last_chip"].get<std::string>().empty()) << where.dump();
    EXPECT_NE(where["verifier_chip"], where["author_last_chip"]) << fam << ": " << where.dump();
    if (auto d = declined.find(fam + "-v001"); d != declined.end()) {
      EXPECT_EQ(d->second, where["author_last_chip"]) << fam << " declined another chip";
    }
    // The command's own log names the chip Slurm gave its job.
    const std::string log =
        read_file(env.wiki / "raw/profiles/example" / (fam + "-v001") / "author/chip.log");
    const std::string author_chip = where["author_last_chip"];
    const std::string index = author_chip.substr(author_chip.rfind(':') + 1);
    EXPECT_EQ(log.rfind("start " + index + " ", 0), 0u) << log;
    EXPECT_NE(log.find("end " + index + " "), std::string::npos) << log;
  }
}

// Starts `kdispatch run` of the cheating author through Slurm and returns it once the
// verification's job is submitted, with that job's id.
test::Child run_until_verify_job(const test::ExampleEnv& env, std::string& job) {
  test::Child child = test::spawn_kdispatch(
      {"run", "--wiki", env.wiki.string(), "--provider", "fake", "--script",
       test::ExampleEnv::script("cheating-author.json"), "--chips", env.chips.string(),
       "--run-root", env.runs.string(), "--tool-dir", env.tools.string()},
      env.root / "run");
  for (int i = 0; i < 2400 && job.empty() && child.running(); ++i) {
    for (const json& r : env.records_or_empty("job_submitted"))
      if (r["data"]["purpose"] == "verify") job = r["data"]["job_id"];
    if (job.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return child;
}

// The first SIGTERM dispatches nothing new and leaves the jobs in flight to finish, as locally.
TEST(SlurmCampaign, TheFirstSignalLetsTheJobsFinish) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  std::string job;
  test::Child child = run_until_verify_job(env, job);
  ASSERT_FALSE(job.empty()) << read_file(child.err);
  child.kill(SIGTERM);
  const int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status << read_file(child.err);
  EXPECT_EQ(env.outcome()["verdict"], "invalid");
  const std::vector<json> jobs = jobs_of(env, "rms-norm/v002");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["finished"]["state"], "COMPLETED") << jobs[0].dump();
}

// The second SIGTERM stops the campaign now and cancels its jobs in Slurm (scancel): the
// verification's job ends CANCELLED instead of running on for nobody. Another job holds every
// chip, so the verification (about a second's work) cannot end before the signals.
TEST(SlurmCampaign, TheSecondSignalCancelsTheCampaignsJobs) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  HeldChips held(env, 4);
  std::string job;
  test::Child child = run_until_verify_job(env, job);
  ASSERT_FALSE(job.empty()) << read_file(child.err);
  child.kill(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  child.kill(SIGTERM);
  const int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << read_file(child.err);
  std::optional<test::FinishedJob> done;
  for (int i = 0; i < 600 && !done; ++i) {
    done = test::finished_job(job);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(done.has_value()) << "Slurm never finished job " << job;
  EXPECT_EQ(done->state, "CANCELLED") << job;
  EXPECT_TRUE(env.records("verdict").empty());
}

// Sets a node DOWN and, whatever happens, back to service once the test is done with it.
class NodeDown {
 public:
  explicit NodeDown(std::string node) : node_(std::move(node)) {
    auto r = test::run_process(
        {"scontrol", "update", "NodeName=" + node_, "State=DOWN", "Reason=kd-test-node-down"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  ~NodeDown() {
    test::run_process({"scontrol", "update", "NodeName=" + node_, "State=RESUME"});
    // Usable again before the next test asks for chips.
    for (int i = 0; i < 200; ++i) {
      auto r = test::run_process({"sinfo", "-h", "-n", node_, "-o", "%T"});
      if (r.out.find("idle") != std::string::npos || r.out.find("mix") != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "node " << node_ << " did not come back";
  }

 private:
  std::string node_;
};

// The node set DOWN while the verification's job runs on it: an error with Slurm's state and
// reason, never a verdict; once the node is back, --resume completes.
TEST(SlurmCampaign, NodeDownMidJobIsAnErrorThenResumeCompletes) {
  KD_REQUIRE_SLURM();
  test::ExampleEnv env;
  use_slurm(env);
  const std::string script = test::ExampleEnv::script("cheating-author.json");
  test::Child child = test::spawn_kdispatch(
      {"run", "--wiki", env.wiki.string(), "--provider", "fake", "--script", script, "--chips",
       env.chips.string(), "--run-root", env.runs.string(), "--tool-dir", env.tools.string()},
      env.root / "run");
  std::string job, node;
  for (int i = 0; i < 2400 && node.empty() && child.running(); ++i) {
    for (const json& r : env.records_or_empty("job_submitted"))
      if (r["data"]["purpose"] == "verify") job = r["data"]["job_id"];
    if (!job.empty()) {
      auto q = test::run_process({"squeue", "-h", "-j", job, "-o", "%T %N"});
      if (q.out.rfind("RUNNING ", 0) == 0) node = std::string(trim(q.out.substr(8)));
    }
    if (node.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_FALSE(node.empty()) << "the verification's job was never seen running: "
                             << read_file(child.err);
  {
    NodeDown down(node);
    const int status = child.wait();
    ASSERT_TRUE(WIFEXITED(status)) << status;
  }
  const std::string out = read_file(child.out);
  EXPECT_NE(out.find("error (chip_unavailable)"), std::string::npos) << out;
  EXPECT_NE(out.find("Slurm job " + job), std::string::npos) << out;
  EXPECT_NE(out.find("NODE_FAIL"), std::string::npos) << out;
  EXPECT_TRUE(env.records("verdict").empty());

  auto resumed = env.run(script, {"--resume"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  EXPECT_EQ(env.outcome()["verdict"], "invalid") << env.outcome().dump(2);
  EXPECT_EQ(env.records("verdict").size(), 1u);
}

}  // namespace
}  // namespace kd
