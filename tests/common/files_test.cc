#include "common/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"

namespace kd {
namespace {

TEST(Files, AtomicWriteThenReadRoundTrips) {
  auto dir =
      std::filesystem::temp_directory_path() / ("kd_files_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / "f.txt";
  write_file_atomic(path, "first");
  write_file_atomic(path, std::string("sec\0ond", 7));
  EXPECT_EQ(read_file(path), std::string("sec\0ond", 7));
  // No temporary is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  std::filesystem::remove_all(dir);
}

TEST(Files, ReadErrorNamesThePath) {
  try {
    read_file("/nonexistent/kd/file");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "open(\"/nonexistent/kd/file\"): ENOENT");
  }
}

// Threads of one process replacing one file at once (verifications of a campaign writing a shared
// state file): each write lands whole, none fails, and no temporary is left behind.
TEST(Files, AtomicWritesOfOnePathFromManyThreadsEachLandWhole) {
  auto dir =
      std::filesystem::temp_directory_path() / ("kd_files_race." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "state.json";
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < errors.size(); ++t)
    threads.emplace_back([&, t] {
      const std::string body(4096, char('a' + t));
      try {
        for (int i = 0; i < 200; ++i)
          write_file_replace(path, body);
      } catch (const Error& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads)
    t.join();
  for (const auto& e : errors)
    EXPECT_EQ(e, "");
  const std::string got = read_file(path);
  ASSERT_EQ(got.size(), 4096u);
  EXPECT_EQ(got, std::string(4096, got[0]));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  std::filesystem::remove_all(dir);
}

// A name planted where the temporary goes is not followed.
TEST(Files, AtomicWriteDoesNotFollowALinkPlantedAtItsTemporaryName) {
  auto dir =
      std::filesystem::temp_directory_path() / ("kd_files_link." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto victim = dir / "victim";
  write_file_atomic(victim, "intact");
  // The next temporary names of this process (the counter is process-wide, so many), and the
  // name without a counter.
  std::filesystem::create_symlink(victim, dir / ("f.txt.tmp." + std::to_string(::getpid())));
  for (int i = 0; i < 10000; ++i)
    std::filesystem::create_symlink(
        victim, dir / ("f.txt.tmp." + std::to_string(::getpid()) + "." + std::to_string(i)));
  write_file_atomic(dir / "f.txt", "new");
  EXPECT_EQ(read_file(dir / "f.txt"), "new");
  EXPECT_EQ(read_file(victim), "intact");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kd
