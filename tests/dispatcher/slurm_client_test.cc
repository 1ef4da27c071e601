// The Slurm client and Watcher against the real loopback cluster of the fixture
// (tests/slurm/cluster.sh): real sbatch, squeue, scontrol, scancel and sinfo, real jobs on fake
// chips. Each job writes what it saw to its own log, checked against what Slurm reports.
#include "dispatcher/slurm_client.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <dirent.h>
#include <algorithm>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/errors.h"
#include "common/files.h"
#include "tests/support/process.h"
#include "tests/support/slurm_cluster.h"

namespace kd::dispatcher::slurm {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Generous: on a busy 2-core machine a job's launch alone can take seconds.
constexpr auto kJobDeadline = 120s;

fs::path write_script(const test::TempDir& dir, const std::string& name, const std::string& body) {
  fs::path p = dir / name;
  write_file_atomic(p, "#!/bin/sh\n" + body + "\n");
  ::chmod(p.c_str(), 0755);
  return p;
}

SubmitRequest request(const test::TempDir& dir, const std::string& name, const std::string& body,
                      const std::string& gres = "gpu:tpu:1") {
  SubmitRequest r;
  r.name = "kd-test-" + name;
  r.gres = gres;
  r.script = write_script(dir, name + ".sh", body);
  r.output = dir / (name + ".out");
  r.chdir = dir.path();
  r.time_limit_minutes = 5;
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Polls until the job runs (or has finished); the last status seen.
JobStatus until_started(Client& client, const std::string& id) {
  auto deadline = Clock::now() + kJobDeadline;
  JobStatus s;
  while (Clock::now() < deadline) {
    s = client.query({id}).at(id);
    if (s.phase != Phase::Pending) return s;
    std::this_thread::sleep_for(100ms);
  }
  return s;
}

int thread_count() {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc/self/task")) {
    (void)e;
    ++n;
  }
  return n;
}

class SlurmClient : public ::testing::Test {
 protected:
  void SetUp() override { KD_REQUIRE_SLURM(); }
  test::TempDir dir_;
};

TEST_F(SlurmClient, ASucceedingJobReportsItsExitCodeChipAndNodeAndGetsNoSecret) {
  ClientOptions options;
  options.env["KD_SLURM_TEST_SECRET"] = "sk-never-in-a-job";  // for the Slurm commands
  ::setenv("KD_SLURM_TEST_KEY", "sk-nor-this-one", 1);        // in kdispatch's own environment
  Client client(options);
  std::string id =
      client.submit(request(dir_, "ok",
                            "echo \"chip=$TPU_VISIBLE_DEVICES node=$SLURMD_NODENAME\"\n"
                            "env > ok.env\nsleep 1"));
  EXPECT_FALSE(id.empty());
  JobStatus running = until_started(client, id);
  Watcher watcher(client, 200ms);
  std::optional<JobStatus> s = watcher.wait(id, Clock::now() + kJobDeadline);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->id, id);
  EXPECT_EQ(s->state, "COMPLETED");
  EXPECT_EQ(s->phase, Phase::Succeeded);
  EXPECT_EQ(s->exit_code, 0);
  EXPECT_EQ(s->signal, 0);

  std::smatch m;
  std::string log = slurp(dir_ / "ok.out");
  ASSERT_TRUE(std::regex_search(log, m, std::regex("chip=([0-9]+) node=(\\S+)"))) << log;
  EXPECT_EQ(s->node, m[2].str());
  if (running.phase == Phase::Running) {
    EXPECT_EQ(running.gres_index, m[1].str());  // what squeue showed while it ran
    EXPECT_EQ(running.node, m[2].str());
  }
  std::string env = slurp(dir_ / "ok.env");
  EXPECT_NE(env.find("TPU_VISIBLE_DEVICES=" + m[1].str()), std::string::npos) << env;
  EXPECT_EQ(env.find("KD_SLURM_TEST_SECRET"), std::string::npos) << env;
  EXPECT_EQ(env.find("sk-never-in-a-job"), std::string::npos);
  EXPECT_EQ(env.find("sk-nor-this-one"), std::string::npos) << env;
  // The environment sbatch was given, not the user's login environment loaded on the node (which
  // sets HOME, and costs a login shell before every job).
  EXPECT_EQ(env.find("\nHOME="), std::string::npos) << env;
  EXPECT_NE(env.find("\nPATH="), std::string::npos) << env;

  auto record = test::finished_job(id);
  ASSERT_TRUE(record.has_value()) << "not in " << test::jobcomp_file();
  EXPECT_EQ(record->state, "COMPLETED");
  EXPECT_EQ(record->node, m[2].str());
  EXPECT_EQ(record->name, "kd-test-ok");
}

TEST_F(SlurmClient, AFailingJobReportsItsExitCodeAndAKilledOneItsSignal) {
  Client client;
  std::string failing = client.submit(request(dir_, "fail", "echo failing; exit 3", ""));
  std::string killed = client.submit(request(dir_, "killed", "kill -9 $$", ""));
  Watcher watcher(client, 200ms);
  auto f = watcher.wait(failing, Clock::now() + kJobDeadline);
  auto k = watcher.wait(killed, Clock::now() + kJobDeadline);
  ASSERT_TRUE(f && k);
  EXPECT_EQ(f->phase, Phase::Failed);
  EXPECT_EQ(f->state, "FAILED");
  EXPECT_EQ(f->exit_code, 3);
  EXPECT_EQ(f->reason, "NonZeroExitCode");
  EXPECT_EQ(k->phase, Phase::Failed);
  EXPECT_EQ(k->signal, 9);
  EXPECT_EQ(slurp(dir_ / "fail.out"), "failing\n");
  auto record = test::finished_job(failing);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->state, "FAILED");
  EXPECT_EQ(record->exit_code, 3);
}

TEST_F(SlurmClient, EightJobsOnFourChipsNeverShareAChip) {
  Client client;
  Client::Partition p = client.partition("kd");
  ASSERT_EQ(p.gres_per_node.at("gpu:tpu"), 4);
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i)
    ids.push_back(client.submit(request(
        dir_, "chip" + std::to_string(i),
        "echo \"$TPU_VISIBLE_DEVICES $SLURMD_NODENAME $(date +%s.%N)\"; sleep 1; date +%s.%N")));
  // While they run, what squeue says each one holds.
  std::map<std::string, std::string> seen_index;
  auto deadline = Clock::now() + kJobDeadline;
  for (bool all_done = false; !all_done && Clock::now() < deadline;) {
    all_done = true;
    for (auto& [id, s] : client.query(ids)) {
      if (s.phase == Phase::Running && !s.gres_index.empty()) seen_index[id] = s.gres_index;
      if (s.phase == Phase::Pending || s.phase == Phase::Running) all_done = false;
      if (s.phase == Phase::Failed || s.phase == Phase::Unknown) FAIL() << id << ": " << s.state;
    }
    std::this_thread::sleep_for(100ms);
  }
  struct Use {
    std::string id, chip, node;
    double start, end;
  };
  std::vector<Use> uses;
  std::set<std::string> chips;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::istringstream log(slurp(dir_ / ("chip" + std::to_string(i) + ".out")));
    Use u{ids[i], "", "", 0, 0};
    log >> u.chip >> u.node >> u.start >> u.end;
    ASSERT_TRUE(log) << "job " << ids[i] << " left no complete log";
    ASSERT_TRUE(u.chip == "0" || u.chip == "1" || u.chip == "2" || u.chip == "3") << u.chip;
    if (seen_index.count(u.id)) {
      EXPECT_EQ(seen_index[u.id], u.chip) << "job " << u.id;
    }
    chips.insert(u.node + ":" + u.chip);
    uses.push_back(u);
    auto record = test::finished_job(ids[i]);
    ASSERT_TRUE(record.has_value());
    EXPECT_EQ(record->state, "COMPLETED");
    EXPECT_EQ(record->node, u.node);
  }
  for (size_t a = 0; a < uses.size(); ++a)
    for (size_t b = a + 1; b < uses.size(); ++b)
      if (uses[a].chip == uses[b].chip && uses[a].node == uses[b].node) {
        EXPECT_TRUE(uses[a].end <= uses[b].start || uses[b].end <= uses[a].start)
            << "jobs " << uses[a].id << " and " << uses[b].id << " both had chip " << uses[a].chip
            << " of " << uses[a].node;
      }
  // 8 one-second jobs on 4 chips: more than one chip was used, so the chips were really shared out.
  EXPECT_GE(chips.size(), 2u);
  EXPECT_FALSE(seen_index.empty()) << "squeue never showed a running job's GRES index";
}

TEST_F(SlurmClient, AJobCancelledFromOutsideIsFailedWithStateCancelled) {
  Client client;
  std::string id = client.submit(request(dir_, "long", "sleep 120"));
  ASSERT_EQ(until_started(client, id).phase, Phase::Running);
  test::ProcessResult r = test::run_process({"scancel", id});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Watcher watcher(client, 200ms);
  auto s = watcher.wait(id, Clock::now() + kJobDeadline);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->phase, Phase::Failed);
  EXPECT_EQ(s->state, "CANCELLED");
  client.cancel({id, "99999999"});  // finished and unknown ids are fine to cancel
}

TEST_F(SlurmClient, ANodeSetDownMidJobFailsTheJobWithTheReason) {
  Client client;
  std::string id = client.submit(request(dir_, "victim", "sleep 120"));
  JobStatus running = until_started(client, id);
  ASSERT_EQ(running.phase, Phase::Running);
  ASSERT_FALSE(running.node.empty());
  const std::string node = running.node;
  auto set_node = [&](const std::string& state, const std::string& extra) {
    return test::run_process({"scontrol", "update", "nodename=" + node, "state=" + state, extra});
  };
  test::ProcessResult down = set_node("down", "reason=kd-test-node-down");
  // The node comes back whatever happens below: the tests after this one need it.
  struct Resume {
    std::function<void()> f;
    ~Resume() { f(); }
  } resume{[&] {
    set_node("resume", "reason=kd-test");
    auto until = Clock::now() + 60s;
    std::string state;
    while (Clock::now() < until) {
      state = test::run_process({"sinfo", "-h", "-n", node, "-o", "%T"}).out;
      // Usable again: idle, or mixed where another test's job still ends on it.
      if (state.find("idle") == 0 || state.find("mix") == 0) return;
      std::this_thread::sleep_for(200ms);
    }
    ADD_FAILURE() << "node " << node << " did not come back: " << state;
  }};
  ASSERT_EQ(down.exit_code, 0) << down.err;
  Watcher watcher(client, 200ms);
  auto s = watcher.wait(id, Clock::now() + kJobDeadline);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->phase, Phase::Failed);
  EXPECT_EQ(s->state, "NODE_FAIL");
  EXPECT_EQ(s->reason, "NodeDown");
  EXPECT_EQ(s->node, node);
}

TEST_F(SlurmClient, ABadGresOrPartitionIsAnErrorNamingIt) {
  Client client;
  auto message = [&](SubmitRequest r) -> std::string {
    try {
      client.submit(r);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  std::string gres = message(request(dir_, "badgres", "true", "gpu:nosuch:1"));
  EXPECT_NE(gres.find("sbatch"), std::string::npos) << gres;
  EXPECT_NE(gres.find("\"gpu:nosuch:1\""), std::string::npos) << gres;
  EXPECT_NE(gres.find("badgres.sh"), std::string::npos) << gres;
  EXPECT_NE(gres.find("Batch job submission failed"), std::string::npos) << gres;

  SubmitRequest r = request(dir_, "badpart", "true");
  r.partition = "nosuch";
  std::string part = message(r);
  EXPECT_NE(part.find("partition \"nosuch\""), std::string::npos) << part;
  EXPECT_NE(part.find("Invalid partition name specified"), std::string::npos) << part;

  try {
    client.partition("nosuch");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"nosuch\""), std::string::npos) << e.what();
  }
  Client::Partition kd = client.partition("kd");
  EXPECT_GE(kd.nodes, 1);
  EXPECT_EQ(kd.gres_per_node.at("gpu:tpu"), 4);
}

TEST_F(SlurmClient, AnIdSlurmNeverHadIsUnknown) {
  Client client;
  auto got = client.query({"987654321"});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at("987654321").phase, Phase::Unknown);
  EXPECT_EQ(got.at("987654321").id, "987654321");
}

TEST_F(SlurmClient, AControllerThatIsDownIsAnErrorWithinTheDeadline) {
  // The same cluster's configuration, but a controller port nothing listens on.
  std::string conf = slurp(test::slurm_conf());
  conf = std::regex_replace(conf, std::regex("SlurmctldPort=[0-9]+"), "SlurmctldPort=1");
  write_file_atomic(dir_ / "slurm.conf", conf);
  ClientOptions options;
  options.env["SLURM_CONF"] = dir_ / "slurm.conf";
  options.command_deadline = 2000ms;
  Client client(options);
  for (int call = 0; call < 2; ++call) {
    auto start = Clock::now();
    try {
      if (call == 0)
        client.query({"1"});
      else
        client.submit(request(dir_, "nowhere", "true"));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(call == 0 ? "squeue --json" : "sbatch --parsable"), std::string::npos) << m;
    }
    EXPECT_LT(Clock::now() - start, 4s) << "call " << call;
  }
}

TEST_F(SlurmClient, TheWatcherIsOneThreadForAllJobsAndIdleWhenNoneIsWatched) {
  Client client;
  const int before = thread_count();
  Watcher watcher(client, 200ms);
  EXPECT_EQ(thread_count(), before + 1);
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i)
    ids.push_back(client.submit(request(dir_, "w" + std::to_string(i), "sleep 1", "")));
  std::vector<std::optional<JobStatus>> results(ids.size());
  std::vector<std::thread> waiters;
  for (size_t i = 0; i < ids.size(); ++i)
    waiters.emplace_back(
        [&, i] { results[i] = watcher.wait(ids[i], Clock::now() + kJobDeadline); });
  std::this_thread::sleep_for(500ms);
  // The ten waiters and the one poller; no thread per job inside the Watcher.
  EXPECT_EQ(thread_count(), before + 1 + 10);
  for (auto& t : waiters)
    t.join();
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(results[i].has_value()) << ids[i];
    EXPECT_EQ(results[i]->phase, Phase::Succeeded) << ids[i];
  }
  EXPECT_EQ(watcher.last_error(), "");
  // Nothing watched: no polling.
  const auto polls = watcher.polls();
  EXPECT_GT(polls, 0u);
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(watcher.polls(), polls);
  EXPECT_EQ(thread_count(), before + 1);

  // wait's deadline, then stop() waking a waiter that has none.
  std::string id = client.submit(request(dir_, "slow", "sleep 120", ""));
  auto start = Clock::now();
  EXPECT_FALSE(watcher.wait(id, Clock::now() + 1s).has_value());
  EXPECT_GE(Clock::now() - start, 1s);
  EXPECT_LT(Clock::now() - start, 5s);
  std::optional<JobStatus> never;
  std::thread forever([&] { never = watcher.wait(id, std::nullopt); });
  std::this_thread::sleep_for(300ms);
  start = Clock::now();
  watcher.stop();
  forever.join();
  EXPECT_FALSE(never.has_value());
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_FALSE(watcher.wait(id, std::nullopt).has_value());  // after stop: at once
  client.cancel({id});
}

TEST_F(SlurmClient, AJobsDoneFileBringsTheWatchersNextPollForward) {
  Client client;
  // An interval far beyond the test: only the done file can end this wait in time.
  Watcher watcher(client, 600s);
  const fs::path done = dir_ / "done";
  std::string id = client.submit(request(dir_, "done", "sleep 1\ntouch " + done.string(), ""));
  std::optional<JobStatus> s = watcher.wait(id, Clock::now() + kJobDeadline, done);
  ASSERT_TRUE(s.has_value()) << "the done file did not end the wait; polls " << watcher.polls();
  EXPECT_EQ(s->phase, Phase::Succeeded);
  EXPECT_TRUE(fs::exists(done));
  // The first poll, the one the file brought forward, and a few while the job was ending.
  EXPECT_LE(watcher.polls(), 2u + 2000 / 100) << watcher.polls();
}

// The poll thread sleeps a whole interval when no watched job has a done file to look for; a
// waiter that comes meanwhile wakes it, and its file is looked for from then on.
TEST_F(SlurmClient, AWaiterThatComesWhileThePollerSleepsHasItsDoneFileLookedFor) {
  Client client;
  Watcher watcher(client, 600s);
  const std::string quiet = client.submit(request(dir_, "quiet", "sleep 120", ""));
  std::thread first([&] { watcher.wait(quiet, std::nullopt); });  // no done file: a long sleep
  while (watcher.polls() == 0)
    std::this_thread::sleep_for(20ms);
  const fs::path done = dir_ / "done";
  const std::string id =
      client.submit(request(dir_, "done", "sleep 1\ntouch " + done.string(), ""));
  std::optional<JobStatus> s = watcher.wait(id, Clock::now() + kJobDeadline, done);
  ASSERT_TRUE(s.has_value()) << "the poller slept through the new waiter's done file";
  EXPECT_EQ(s->phase, Phase::Succeeded);
  watcher.stop();
  first.join();
  client.cancel({quiet});
}

// With `until_done_file` the wait ends at the job's done file while the job goes on (a declined
// try that keeps its chip); the job is still Slurm's to run.
TEST_F(SlurmClient, AWaitUntilTheDoneFileEndsThereWhileTheJobRunsOn) {
  Client client;
  Watcher watcher(client, 600s);
  const fs::path done = dir_ / "done";
  const std::string id =
      client.submit(request(dir_, "holds", "touch " + done.string() + "\nsleep 120", ""));
  std::optional<JobStatus> s = watcher.wait(id, Clock::now() + kJobDeadline, done, true);
  ASSERT_TRUE(s.has_value()) << "the done file did not end the wait";
  EXPECT_FALSE(is_final(s->phase)) << to_string(s->phase);
  EXPECT_EQ(client.query({id}).at(id).phase, Phase::Running);
  client.cancel({id});
}

}  // namespace
}  // namespace kd::dispatcher::slurm
