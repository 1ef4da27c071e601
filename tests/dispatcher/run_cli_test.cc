// `kdispatch run` end to end: the queue of committed in_progress experiments, the journal,
// `kdispatch status`, and resume after kill -9 injected right after each journal record type.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "common/files.h"
#include "contract/transcript_chain.h"
#include "git/repo.h"
#include "tests/dispatcher/campaign_env.h"
#include "tests/support/example_env.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Processes whose command line mentions `needle` (boxes and their commands name the run's paths).
std::vector<std::string> processes_mentioning(const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string pid = e.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(getpid()))
      continue;
    std::string cmdline;
    try {
      cmdline = read_file(e.path() / "cmdline");
    } catch (const std::exception&) {
      continue;  // gone meanwhile
    }
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(needle) != std::string::npos) out.push_back(pid + ": " + cmdline);
  }
  return out;
}

TEST(RunCli, RunsTheQueueAndRecordsEveryStep) {
  test::ExampleEnv env;
  auto r = env.run(test::ExampleEnv::script("honest-author.json"), {"--status-every", "0.5"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << r.out << r.err;
  ASSERT_EQ(r.exit_code, env.run_exit_for_verdict()) << r.out << r.err;
  EXPECT_NE(r.out.find("rms-norm/v002"), std::string::npos) << r.out;
  // The filed v001 is not queued; v002 went author -> verifier -> verdict.
  EXPECT_EQ(r.out.find("v001"), std::string::npos) << r.out;
  for (const char* type :
       {"dispatched", "committed", "finished", "verify_started", "receipt_validated", "verdict"})
    EXPECT_FALSE(env.records(type).empty()) << type;
  EXPECT_NE(r.err.find("rms-norm/v002"), std::string::npos) << "no status line: " << r.err;

  auto status = test::run_kdispatch({"status", "--run-root", env.runs.string()});
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_NE(status.out.find(env.outcome()["verdict"].get<std::string>()), std::string::npos)
      << status.out;

  // Run again: the verdict is the journal's; nothing is dispatched or paid a second time.
  size_t records = read_file(env.journal()).size();
  auto again = env.run(test::ExampleEnv::script("honest-author.json"));
  EXPECT_EQ(again.exit_code, env.run_exit_for_verdict());
  EXPECT_NE(again.out.find("recorded earlier"), std::string::npos) << again.out;
  EXPECT_EQ(read_file(env.journal()).size(), records);
}

// A supervised campaign asks at the terminal (here a pipe): the person stops the first request,
// the experiment ends without a verifier, and a resume does not verify the stopped session.
TEST(RunCli, SupervisedAndStoppedGoesToNoVerifier) {
  test::ExampleEnv env;
  const std::vector<std::string> args = {"run",
                                         "--wiki",
                                         env.wiki.string(),
                                         "--provider",
                                         "fake",
                                         "--script",
                                         test::ExampleEnv::script("honest-author.json"),
                                         "--chips",
                                         env.chips.string(),
                                         "--run-root",
                                         env.runs.string(),
                                         "--tool-dir",
                                         env.tools.string(),
                                         "--supervise"};
  auto r = test::run_kdispatch(args, "s\n");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("[kdispatch] approve run (call p1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rms-norm/v002                not dispatched"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the supervising person stopped the author session "
                       "(stopped_by_supervisor): nothing goes to the verifier"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(env.records("verify_started").empty());
  ASSERT_EQ(env.records("finished").size(), 1u);
  EXPECT_EQ(env.records("finished")[0]["data"]["end_reason"], "stopped_by_supervisor");

  std::vector<std::string> resume = args;
  resume.back() = "--resume";
  auto again = test::run_kdispatch(resume);
  EXPECT_EQ(again.exit_code, 2) << again.out << again.err;
  EXPECT_NE(again.out.find("nothing goes to the verifier"), std::string::npos) << again.out;
  EXPECT_TRUE(env.records("verify_started").empty());
  EXPECT_TRUE(env.records("error").empty()) << "a stopped session is no error to retry";

  // One person answers one session at a time; and one channel at a time.
  std::vector<std::string> parallel = args;
  parallel.insert(parallel.end(), {"--parallel", "2"});
  auto refused = test::run_kdispatch(parallel);
  EXPECT_EQ(refused.exit_code, 64) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("a supervised campaign runs one experiment at a time: --parallel 2"),
            std::string::npos)
      << refused.err;
  std::vector<std::string> both = args;
  both.insert(both.end(), {"--supervise-dir", env.root.string()});
  auto exclusive = test::run_kdispatch(both);
  EXPECT_EQ(exclusive.exit_code, 64) << exclusive.out << exclusive.err;
  EXPECT_NE(exclusive.err.find("exclude each other"), std::string::npos) << exclusive.err;
}

TEST(RunCli, UnfinishedWorkNeedsResume) {
  test::ExampleEnv env;
  auto crashed = env.run(test::ExampleEnv::script("honest-author.json"), {},
                         {{"KDISPATCH_CRASH_AFTER", "finished"}});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.out << crashed.err;
  auto plain = env.run(test::ExampleEnv::script("honest-author.json"));
  EXPECT_EQ(plain.exit_code, 2);
  EXPECT_NE(plain.out.find("--resume"), std::string::npos) << plain.out;
}

// Starts `kdispatch run` on the example, sends `signals` once the journal shows the dispatch, and
// returns the wait status.
int run_and_signal(const test::ExampleEnv& env, int signals) {
  test::Child child = test::spawn_kdispatch(
      {"run", "--wiki", env.wiki.string(), "--provider", "fake", "--script",
       test::ExampleEnv::script("honest-author.json"), "--chips", env.chips.string(), "--run-root",
       env.runs.string(), "--tool-dir", env.tools.string()},
      env.root / "run");
  for (int i = 0; i < 400 && !fs::exists(env.journal()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  for (int i = 0; i < signals; ++i) {
    child.kill(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return child.wait();
}

TEST(RunCli, OneSigtermLetsTheExperimentInFlightFinish) {
  test::ExampleEnv env;
  int status = run_and_signal(env, 1);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(env.records("verdict").size(), 1u);
  EXPECT_EQ(WEXITSTATUS(status), env.run_exit_for_verdict());
}

TEST(RunCli, TwoSigtermsStopNowAndResumeFinishes) {
  test::ExampleEnv env;
  int status = run_and_signal(env, 2);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  // The session takes seconds; the signals came within a fraction of one after the dispatch.
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_TRUE(env.records("verdict").empty());
  std::vector<std::string> left;
  for (int i = 0; i < 40; ++i) {
    left = processes_mentioning(env.root.string());
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(left.empty()) << left.front();
  auto resumed = env.run(test::ExampleEnv::script("honest-author.json"), {"--resume"});
  EXPECT_EQ(env.records("verdict").size(), 1u);
  EXPECT_EQ(resumed.exit_code, env.run_exit_for_verdict()) << resumed.out << resumed.err;
}

class RunResume : public ::testing::TestWithParam<std::string> {};

TEST_P(RunResume, Kill9ThenResumeFinishesWithoutRedoingWork) {
  test::ExampleEnv env;
  const std::string script = test::ExampleEnv::script("honest-author.json");
  auto crashed = env.run(script, {}, {{"KDISPATCH_CRASH_AFTER", GetParam()}});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.out << crashed.err;

  // Nothing the crashed run started outlives it (boxes die with their parent).
  std::vector<std::string> left;
  for (int i = 0; i < 40; ++i) {
    left = processes_mentioning(env.root.string());
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(left.empty()) << left.front();

  auto resumed = env.run(script, {"--resume"});
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << resumed.out << resumed.err;
  ASSERT_EQ(resumed.exit_code, env.run_exit_for_verdict()) << resumed.out << resumed.err;
  EXPECT_EQ(env.records("verdict").size(), 1u);

  // No duplicated commit: the script's two candidates, once each.
  auto commits = git::branch_commits(env.home(), "kernel/rms-norm-v002", "integration");
  std::set<std::string> subjects;
  for (const auto& c : commits)
    subjects.insert(c.message.substr(0, c.message.find('\n')));
  EXPECT_EQ(commits.size(), 2u);
  EXPECT_EQ(subjects.size(), commits.size());
  EXPECT_FALSE(git::branch_exists(env.home(), "kernel/rms-norm-v002-example"))
      << "the resume made a second branch";

  // No repaid model turn: the script's 8 turns, plus at most the one half-done turn re-asked.
  fs::path transcript = env.run_dir() / "author/transcript.jsonl";
  contract::ChainReport chain = contract::verify_chain_file(transcript);
  EXPECT_TRUE(chain.ok) << chain.reason;
  size_t responses = 0;
  std::string text = read_file(transcript);
  for (size_t p = text.find("\"type\":\"response\""); p != std::string::npos;
       p = text.find("\"type\":\"response\"", p + 1))
    ++responses;
  EXPECT_GE(responses, 8u);
  EXPECT_LE(responses, 9u);

  // A verification that completed is never run again.
  size_t verifications = env.records("verify_started").size();
  if (GetParam() == "receipt_validated" || GetParam() == "verdict") {
    EXPECT_EQ(verifications, 1u);
  }
  EXPECT_LE(verifications, 2u);
  EXPECT_TRUE(env.outcome()["receipt"]["ok"].get<bool>());
}

INSTANTIATE_TEST_SUITE_P(AfterEachRecordType, RunResume,
                         ::testing::Values("dispatched", "author_turn", "author_turn:4",
                                           "author_turn:6", "committed", "committed:2", "finished",
                                           "verify_started", "receipt_validated", "verdict"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == ':') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace kd
