// Chip locks against real flock(1) holders, as people run them by hand.
#include "dispatcher/chip_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <thread>

#include "tests/support/process.h"

extern char** environ;

namespace kd::dispatcher {
namespace {

pid_t spawn(std::vector<std::string> argv) {
  std::vector<char*> a;
  for (auto& s : argv)
    a.push_back(s.data());
  a.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawnp(&pid, a[0], nullptr, nullptr, a.data(), environ), 0);
  return pid;
}

Chip chip_at(const std::string& lock) {
  return Chip{"9", "cpu", lock, {}, {}};
}

TEST(ChipLock, ExcludesAndIsExcludedByManualFlock) {
  test::TempDir dir;
  Chip chip = chip_at(dir / "chip.lock");
  {
    auto held = ChipLock::try_acquire(chip);
    ASSERT_TRUE(held.has_value());
    // A person's `flock -n` sees the chip busy while kdispatch holds it...
    EXPECT_EQ(test::run_process({"flock", "-n", chip.lock.string(), "true"}).exit_code, 1);
  }
  // ...and free once kdispatch let go.
  EXPECT_EQ(test::run_process({"flock", "-n", chip.lock.string(), "true"}).exit_code, 0);
}

TEST(ChipLock, WaitsAsynchronouslyForAManualHolder) {
  test::TempDir dir;
  Chip chip = chip_at(dir / "chip.lock");
  pid_t holder = spawn({"flock", chip.lock.string(), "sleep", "0.6"});
  // Wait until the holder really has it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ChipLock::try_acquire(chip).has_value()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  boost::asio::io_context io;
  bool got = false, other_work_ran = false;
  auto start = std::chrono::steady_clock::now();
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        ChipLock lock = co_await ChipLock::acquire(chip);
        got = true;
        EXPECT_EQ(lock.chip_id(), "9");
      },
      boost::asio::detached);
  // The I/O thread stays free for other sessions while the lock is awaited.
  boost::asio::post(io, [&] { other_work_ran = true; });
  io.run();
  auto waited = std::chrono::steady_clock::now() - start;
  int status = 0;
  waitpid(holder, &status, 0);
  EXPECT_TRUE(got);
  EXPECT_TRUE(other_work_ran);
  EXPECT_GT(waited, std::chrono::milliseconds(200));
}

TEST(ChipLock, CrashedHolderReleasesTheChip) {
  test::TempDir dir;
  Chip chip = chip_at(dir / "chip.lock");
  // A single-process holder, so kill -9 really ends every holder of the descriptor.
  pid_t holder = spawn(
      {"python3", "-c",
       "import "
       "fcntl,sys,time\nf=open(sys.argv[1],'w')\nfcntl.flock(f,fcntl.LOCK_EX)\ntime.sleep(60)",
       chip.lock.string()});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ChipLock::try_acquire(chip).has_value()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(holder, SIGKILL);
  int status = 0;
  waitpid(holder, &status, 0);
  EXPECT_TRUE(ChipLock::try_acquire(chip).has_value()) << "lock not released after the holder died";
}

}  // namespace
}  // namespace kd::dispatcher
