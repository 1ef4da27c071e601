#include "common/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

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

}  // namespace
}  // namespace kd
