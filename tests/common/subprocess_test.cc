// run_command: real child processes, their output, exit status, environment and deadline.
#include "common/subprocess.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace kd {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

TEST(RunCommand, CapturesBothStreamsAndTheExitCode) {
  CommandResult r = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, {});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(RunCommand, PassesTheEnvironmentWithOverridesAndNoStdin) {
  ::setenv("KD_SUBPROCESS_INHERITED", "kept", 1);
  CommandOptions o;
  o.env["KD_SUBPROCESS_SET"] = "set";
  CommandResult r = run_command(
      {"sh", "-c", "echo $KD_SUBPROCESS_INHERITED $KD_SUBPROCESS_SET; cat; echo done"}, o);
  ::unsetenv("KD_SUBPROCESS_INHERITED");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "kept set\ndone\n");
}

TEST(RunCommand, ReportsASignal) {
  CommandResult r = run_command({"sh", "-c", "kill -TERM $$"}, {});
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, SIGTERM);
}

TEST(RunCommand, KillsTheProcessGroupAtTheDeadline) {
  CommandOptions o;
  o.deadline = milliseconds(300);
  auto start = Clock::now();
  // The background sleep keeps stdout open after the shell: the group is killed, not awaited.
  CommandResult r = run_command({"sh", "-c", "echo started; sleep 30 & sleep 30"}, o);
  auto took = Clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(RunCommand, AProgramThatIsNotThereIsAnErrorNamingIt) {
  try {
    run_command({"kd-no-such-program-here"}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "posix_spawnp(kd-no-such-program-here): ENOENT");
  }
}

TEST(RunCommand, OutputBeyondTheCapIsAnError) {
  CommandOptions o;
  o.max_output = 1000;
  EXPECT_THROW(run_command({"sh", "-c", "head -c 5000 /dev/zero"}, o), Error);
}

}  // namespace
}  // namespace kd
