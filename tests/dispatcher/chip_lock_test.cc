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

contract::Chip chip_at(const std::string& lock) {
  return contract::Chip{"9", "cpu", lock, {}, {}};
}

TEST(ChipLock, ExcludesAndIsExcludedByManualFlock) {
  test::TempDir dir;
  contract::Chip chip = chip_at(dir / "chip.lock");
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
  contract::Chip chip = chip_at(dir / "chip.lock");
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

// Waits until `lock` is held by someone else (the spawned flock(1) got it).
void wait_held(const contract::Chip& chip) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ChipLock::try_acquire(chip).has_value()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(ChipLock, WaitAnyTakesTheFirstFreeChipInOrder) {
  test::TempDir dir;
  std::vector<contract::Chip> chips = {chip_at(dir / "a.lock"), chip_at(dir / "b.lock"),
                                       chip_at(dir / "c.lock")};
  chips[1].id = "b";
  chips[2].id = "c";
  pid_t holder = spawn({"flock", chips[0].lock.string(), "sleep", "0.5"});
  wait_held(chips[0]);
  bool waited = false;
  auto got = ChipLock::wait_any(chips, std::nullopt, [&] { waited = true; });
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->second, 1u);
  EXPECT_EQ(got->first.chip_id(), "b");
  EXPECT_FALSE(waited) << "a free chip was there: no wait to report";
  int status = 0;
  EXPECT_EQ(waitpid(holder, &status, WNOHANG), 0) << "the held chip was waited for";
  waitpid(holder, &status, 0);
}

TEST(ChipLock, WaitAnyWaitsForAReleaseAndHonoursItsDeadline) {
  test::TempDir dir;
  std::vector<contract::Chip> chips = {chip_at(dir / "a.lock")};
  pid_t holder = spawn({"flock", chips[0].lock.string(), "sleep", "0.6"});
  wait_held(chips[0]);
  // Held past a short deadline: nothing, after having said it waits.
  bool waited = false;
  auto none =
      ChipLock::wait_any(chips, std::chrono::steady_clock::now() + std::chrono::milliseconds(100),
                         [&] { waited = true; });
  EXPECT_FALSE(none.has_value());
  EXPECT_TRUE(waited);
  // Without a deadline it returns once the person's flock let go.
  auto got = ChipLock::wait_any(chips, std::nullopt);
  ASSERT_TRUE(got.has_value());
  int status = 0;
  EXPECT_EQ(waitpid(holder, &status, WNOHANG), holder) << "returned before the holder ended";
  // Held by us now: a person's `flock -n` sees it busy.
  EXPECT_EQ(test::run_process({"flock", "-n", chips[0].lock.string(), "true"}).exit_code, 1);
}

TEST(ChipLock, CrashedHolderReleasesTheChip) {
  test::TempDir dir;
  contract::Chip chip = chip_at(dir / "chip.lock");
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
