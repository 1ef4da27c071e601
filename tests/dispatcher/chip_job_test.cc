// The node's side of a Slurm chip job, without Slurm: `kdispatch chip-job FILE` run as slurmd
// would run it (SLURMD_NODENAME, SLURM_JOB_GPUS), a real box on the chip it names, the result
// file read back; and the shared-storage marker refusing a node that does not see the run root.
#include "dispatcher/chip_job.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "common/errors.h"
#include "common/files.h"
#include "common/json_read.h"
#include "common/policy_path.h"
#include "sandbox/box_user.h"
#include "sandbox/profile.h"
#include "tests/dispatcher/campaign_env.h"
#include "tests/support/process.h"

namespace kd::dispatcher {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct JobEnv {
  test::TempDir dir{test::outside_box_tmpfs()};
  fs::path root = dir.path(), work = root / "work", jobs = root / "slurm-jobs";

  JobEnv() {
    fs::permissions(root, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    fs::create_directories(work);
    fs::create_directories(jobs);
    sandbox::hand_to_box_user(work);
  }

  // A job that prints the chip's variable in the author's box on the chip.
  ChipJobFile job() const {
    ChipJobFile f;
    f.experiment = "rms-norm/v002";
    f.purpose = "run_on_chip";
    f.job.spec.profile = sandbox::load_profile("author");
    f.job.spec.worktree = work;
    f.job.request.argv = {"sh", "-c", "echo chip=$KD_CHIP; exit 3"};
    f.job.request.use_chip = true;
    f.chip_env = "KD_CHIP";
    f.chip_kind = "cpu";
    f.result = jobs / "result.json";
    return f;
  }

  // A verification's one-chip try that declines chip n7:1 and holds it up to `at_most_s`.
  ChipJobFile declining(const std::string& hold_name, double at_most_s) const {
    ChipJobFile f = job();
    f.avoid_chip = "n7:1";
    f.decline_avoided = true;
    f.hold_file = jobs / hold_name;
    f.hold_at_most_s = at_most_s;
    return f;
  }

  test::ProcessResult run(const ChipJobFile& f, const std::string& gpus) const {
    write_file_atomic(jobs / "job.json", chip_job_json(f).dump(2));
    return test::run_kdispatch({"chip-job", (jobs / "job.json").string()}, "",
                               {{"SLURMD_NODENAME", "n7"}, {"SLURM_JOB_GPUS", gpus}});
  }

  ChipJobResult result() const {
    return chip_job_result_from_json(json::parse(read_file(jobs / "result.json")), "result");
  }
};

TEST(ChipJob, RunsTheBoxOnTheChipSlurmGaveAndWritesTheResult) {
  JobEnv env;
  ChipJobFile f = env.job();
  f.marker = env.jobs / ".marker";
  f.marker_token = "t0k3n";
  write_file_atomic(*f.marker, "t0k3n\n");
  auto r = env.run(f, "2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const ChipJobResult got = env.result();
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(got.chip, "n7:2");
  EXPECT_EQ(got.given, (std::vector<std::string>{"n7:2"}));
  EXPECT_EQ(got.run.result.exit_code, 3);  // the command's own failure is a result
  EXPECT_EQ(got.run.result.out, "chip=2\n");
  EXPECT_FALSE(got.started_at.empty());
  EXPECT_GE(got.duration_s, got.run.result.wall_s);
}

TEST(ChipJob, TwoChipsGivenUsesTheOneThatIsNotTheAuthors) {
  JobEnv env;
  ChipJobFile f = env.job();
  f.avoid_chip = "n7:1";
  ASSERT_EQ(env.run(f, "1,3").exit_code, 0);
  EXPECT_EQ(env.result().chip, "n7:3");
  EXPECT_EQ(env.result().run.result.out, "chip=3\n");
  EXPECT_EQ(env.result().given, (std::vector<std::string>{"n7:1", "n7:3"}));
  f.avoid_chip = "n7:3";
  ASSERT_EQ(env.run(f, "1,3").exit_code, 0);
  EXPECT_EQ(env.result().chip, "n7:1");
}

// A verification's one-chip try: given only the author's chip, nothing runs and the result
// says declined; given another chip, it runs there as usual. (Its hold is 0 s here: the next
// test holds.)
TEST(ChipJob, AOneChipTryGivenTheAuthorsChipDeclinesWithoutRunning) {
  JobEnv env;
  ChipJobFile f = env.declining("release", 0);
  auto r = env.run(f, "1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("given only n7:1, the author's last chip: declined"), std::string::npos)
      << r.err;
  EXPECT_TRUE(env.result().declined);
  EXPECT_EQ(env.result().error, "");
  EXPECT_EQ(env.result().chip, "");
  EXPECT_EQ(env.result().given, (std::vector<std::string>{"n7:1"}));
  EXPECT_EQ(env.result().run.result.out, "");  // nothing ran

  ASSERT_EQ(env.run(f, "2").exit_code, 0);
  EXPECT_FALSE(env.result().declined);
  EXPECT_EQ(env.result().chip, "n7:2");
  EXPECT_EQ(env.result().run.result.out, "chip=2\n");

  // Without the flag the author's chip is used when it is all Slurm gave (one chip per node).
  f.decline_avoided = false;
  ASSERT_EQ(env.run(f, "1").exit_code, 0);
  EXPECT_FALSE(env.result().declined);
  EXPECT_EQ(env.result().chip, "n7:1");
}

// Sets variables for the children a test starts, as slurmd would for a job's step, and puts
// back what was there.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::map<std::string, std::string> vars) {
    for (auto& [k, v] : vars) {
      const char* was = std::getenv(k.c_str());
      saved_.emplace_back(k, was ? std::optional<std::string>(was) : std::nullopt);
      ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (auto& [k, v] : saved_)
      v ? ::setenv(k.c_str(), v->c_str(), 1) : ::unsetenv(k.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A declined try keeps its chip, so that Slurm cannot give it to the next try: its result is
// written at once, and the job ends only when the next try, started on another chip, creates
// its hold file; or at the hold's bound when none comes.
TEST(ChipJob, ADeclinedTryHoldsItsChipUntilTheNextTryHasOne) {
  JobEnv env;
  ChipJobFile first = env.declining("first.release", 120);
  first.result = env.jobs / "first.result.json";
  const fs::path first_job = env.jobs / "first.job.json";
  write_file_atomic(first_job, chip_job_json(first).dump(2));
  test::Child held = [&] {
    ScopedEnv slurm({{"SLURMD_NODENAME", "n7"}, {"SLURM_JOB_GPUS", "1"}});
    return test::spawn_kdispatch({"chip-job", first_job.string()}, env.root / "first");
  }();
  for (int i = 0; i < 800 && !fs::exists(first.result); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(fs::exists(first.result)) << read_file(held.err);
  EXPECT_TRUE(chip_job_result_from_json(json::parse(read_file(first.result)), "first").declined);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(held.running()) << "the declined try gave its chip back before the next try";

  ChipJobFile next = env.job();
  next.avoid_chip = "n7:1";
  next.releases = {first.hold_file};
  auto r = env.run(next, "2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(env.result().chip, "n7:2");
  EXPECT_TRUE(fs::exists(first.hold_file));
  for (int i = 0; i < 400 && held.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_FALSE(held.running()) << "the declined try still holds its chip";
  const int status = held.wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << read_file(held.err);

  // No next try: the chip is given back at the bound.
  first.hold_at_most_s = 0.5;
  first.hold_file = env.jobs / "never.release";
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(env.run(first, "1").exit_code, 0);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  EXPECT_FALSE(fs::exists(first.hold_file));
}

// The hold goes with the decline: a job file with one and not the other is refused.
TEST(ChipJob, AJobFileWithADeclineAndNoHoldIsRefused) {
  JobEnv env;
  json j = chip_job_json(env.declining("release", 1));
  j.erase("hold");
  EXPECT_THROW(
      {
        try {
          chip_job_from_json(j, "job.json");
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "job.json: decline_avoided and hold go together");
          throw;
        }
      },
      Error);
  j = chip_job_json(env.job());
  j["releases"] = {"relative/release"};
  EXPECT_THROW(chip_job_from_json(j, "job.json"), Error);
}

TEST(ChipJob, ANodeThatDoesNotSeeTheMarkerRefuses) {
  JobEnv env;
  ChipJobFile f = env.job();
  f.marker = env.jobs / ".marker";
  f.marker_token = "t0k3n";  // the file is absent: this node sees another folder there
  auto r = env.run(f, "0");
  EXPECT_EQ(r.exit_code, 1);
  const std::string message = "the node n7 does not see " + env.jobs.string() +
                              ": kdispatch on Slurm needs the run root on storage every node sees";
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_EQ(env.result().error, message);
  EXPECT_EQ(env.result().run.result.out, "");  // nothing ran

  write_file_atomic(*f.marker, "another token\n");
  EXPECT_EQ(env.run(f, "0").exit_code, 1);
  EXPECT_EQ(env.result().error, message);
}

TEST(ChipJob, NoChipFromSlurmIsAnErrorNotARun) {
  JobEnv env;
  auto r = env.run(env.job(), "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Slurm gave this job no chip"), std::string::npos) << r.err;
  EXPECT_NE(env.result().error.find("KD_CHIP"), std::string::npos);
}

TEST(ChipJob, JobFilesAreReadStrictly) {
  JobEnv env;
  json j = chip_job_json(env.job());
  EXPECT_EQ(chip_job_from_json(j, "job.json").job.request.argv, env.job().job.request.argv);
  j["api_key"] = "sk-...";
  try {
    chip_job_from_json(j, "job.json");
    ADD_FAILURE() << "an unknown field was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "job.json: unknown field \"api_key\"");
  }
  // Declining needs the chip to decline.
  j = chip_job_json(env.job());
  j["decline_avoided"] = true;
  try {
    chip_job_from_json(j, "job.json");
    ADD_FAILURE() << "decline_avoided without avoid_chip was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "job.json: decline_avoided needs avoid_chip");
  }
  // No key of kdispatch's environment is in a job file: only the box's own request env.
  EXPECT_EQ(chip_job_json(env.job()).dump().find("API_KEY"), std::string::npos);
}

}  // namespace
}  // namespace kd::dispatcher
