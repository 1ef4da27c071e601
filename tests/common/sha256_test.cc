#include "common/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kd {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, StreamingEqualsOneShotAndResets) {
  Sha256 h;
  h.update("a");
  h.update("bc");
  EXPECT_EQ(to_hex(h.finish()), sha256_hex("abc"));
  h.update("abc");
  EXPECT_EQ(to_hex(h.finish()), sha256_hex("abc"));
}

TEST(Sha256, FileDigestMatchesContent) {
  auto path =
      std::filesystem::temp_directory_path() / ("kd_sha256_test." + std::to_string(::getpid()));
  std::string content(200000, 'x');
  content[12345] = 'y';
  std::ofstream(path, std::ios::binary) << content;
  EXPECT_EQ(sha256_file_hex(path), sha256_hex(content));
  std::filesystem::remove(path);
  EXPECT_THROW(sha256_file_hex(path), std::exception);
}

}  // namespace
}  // namespace kd
