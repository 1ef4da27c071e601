// Reading what an agent left for the host: every way a path there can make a plain read hang,
// exhaust memory, follow a link out or leak a host file is refused quickly, naming the path.
#include "common/agent_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "common/errors.h"
#include "common/files.h"

namespace kd {
namespace {

namespace fs = std::filesystem;

class AgentFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kd_agent_file." + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "art/sub");
    fs::create_directories(dir_ / "host");
    write_file_atomic(dir_ / "art/receipt.json", "{\"ok\":true}");
    write_file_atomic(dir_ / "art/sub/inner.json", "inner");
    write_file_atomic(dir_ / "host/secret", "host secret");
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The error of reading `rel` beneath art/, "" when it was read.
  std::string refusal(const std::string& rel, std::uint64_t cap = 1024) {
    try {
      read_agent_file(dir_ / "art", rel, cap);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(AgentFile, ReadsARegularFileBeneathItsDirectory) {
  EXPECT_EQ(read_agent_file(dir_ / "art", "receipt.json", 1024), "{\"ok\":true}");
  EXPECT_EQ(read_agent_file(dir_ / "art/sub/inner.json", 1024), "inner");
  EXPECT_TRUE(agent_regular_file(dir_ / "art", "sub/inner.json"));
}

TEST_F(AgentFile, AFifoIsRefusedWithoutWaiting) {
  ASSERT_EQ(::mkfifo((dir_ / "art/fifo.json").c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  const std::string err = refusal("fifo.json");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(err.find("is a FIFO, not a regular file"), std::string::npos) << err;
  EXPECT_FALSE(agent_regular_file(dir_ / "art", "fifo.json"));
}

TEST_F(AgentFile, LinksAnywhereOnThePathAreRefused) {
  fs::create_symlink("/dev/zero", dir_ / "art/zero.json");
  fs::create_symlink(dir_ / "host/secret", dir_ / "art/secret.json");
  fs::create_symlink("receipt.json", dir_ / "art/alias.json");  // even one that stays inside
  fs::create_symlink(dir_ / "host", dir_ / "art/up");
  for (const char* rel : {"zero.json", "secret.json", "alias.json"}) {
    EXPECT_NE(refusal(rel).find("is a symbolic link, not a regular file"), std::string::npos)
        << rel << ": " << refusal(rel);
    EXPECT_FALSE(agent_regular_file(dir_ / "art", rel)) << rel;
  }
  EXPECT_NE(refusal("up/secret").find("RESOLVE_NO_SYMLINKS"), std::string::npos);
  EXPECT_NE(refusal("up/secret").find("ELOOP"), std::string::npos) << refusal("up/secret");
  EXPECT_FALSE(agent_regular_file(dir_ / "art", "up/secret"));
  EXPECT_NE(refusal("../host/secret").find("EXDEV"), std::string::npos);
  EXPECT_NE(refusal((dir_ / "host/secret").string()).find("must be relative"), std::string::npos);
  EXPECT_FALSE(agent_regular_file(dir_ / "art", (dir_ / "host/secret").string()));
  EXPECT_FALSE(agent_regular_file(dir_ / "art", "../host/secret"));
}

TEST_F(AgentFile, SpecialFilesAndBigFilesAreNotRead) {
  EXPECT_NE(refusal("sub").find("is a directory"), std::string::npos);
  write_file_atomic(dir_ / "art/big.json", std::string(2048, 'x'));
  EXPECT_NE(refusal("big.json").find("over the 1024-byte limit"), std::string::npos);
  EXPECT_EQ(refusal("big.json", 2048), "");
  if (::geteuid() == 0) {  // a device node only root can make
    ASSERT_EQ(::mknod((dir_ / "art/dev.json").c_str(), S_IFCHR | 0644, makedev(1, 5)), 0);
    EXPECT_NE(refusal("dev.json").find("is a character device"), std::string::npos);
  }
}

}  // namespace
}  // namespace kd
