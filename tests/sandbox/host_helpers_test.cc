// Host-side helpers: openat2 beneath a directory, and the environment allowlist.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/agent_file.h"
#include "common/errors.h"
#include "common/files.h"
#include "sandbox/env_scrub.h"
#include "tests/support/process.h"

namespace kd::sandbox {
namespace {

namespace fs = std::filesystem;

class OpenBeneath : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "wt/sub");
    std::ofstream(dir_ / "wt/sub/file") << "inside";
    std::ofstream(dir_ / "outside") << "outside";
    fs::create_symlink("/etc/passwd", dir_ / "wt/out");  // row 5: a planted link
    fs::create_symlink("../outside", dir_ / "wt/up");
    fs::create_symlink("sub", dir_ / "wt/alias");  // stays beneath
    fs::create_symlink("/proc/self/root/etc", dir_ / "wt/magic");
    root_ = ::open((dir_ / "wt").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root_, 0);
  }
  void TearDown() override { ::close(root_); }
  std::string error_of(const std::string& rel, int flags) {
    try {
      ::close(open_beneath(root_, rel, flags, 0644));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  kd::test::TempDir tmp_;
  fs::path dir_ = tmp_.path();
  int root_ = -1;
};

TEST_F(OpenBeneath, OpensPathsBeneath) {
  int fd = open_beneath(root_, "sub/file", O_RDONLY);
  char buf[16] = {};
  EXPECT_EQ(::read(fd, buf, sizeof buf), 6);
  EXPECT_STREQ(buf, "inside");
  ::close(fd);
  EXPECT_EQ(error_of("alias/file", O_RDONLY), "");  // a link that stays beneath is fine
  EXPECT_EQ(error_of("sub/new", O_WRONLY | O_CREAT), "");
  EXPECT_TRUE(fs::exists(dir_ / "wt/sub/new"));
}

TEST_F(OpenBeneath, RefusesEveryWayOut) {
  EXPECT_NE(error_of("out", O_RDONLY).find("ELOOP"), std::string::npos);
  EXPECT_NE(error_of("out", O_WRONLY | O_TRUNC).find("ELOOP"), std::string::npos);
  EXPECT_NE(error_of("up", O_RDONLY).find("ELOOP"), std::string::npos);
  EXPECT_NE(error_of("../outside", O_RDONLY).find("EXDEV"), std::string::npos);
  EXPECT_NE(error_of("/etc/passwd", O_RDONLY).find("EXDEV"), std::string::npos);
  EXPECT_NE(error_of("magic/passwd", O_RDONLY).find("EXDEV"), std::string::npos);
  EXPECT_EQ(error_of("out/x", O_RDONLY).substr(0, 15), "openat2(\"out/x\"");
  EXPECT_NE(error_of("out/x", O_RDONLY).find("RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS): EXDEV"),
            std::string::npos);
  EXPECT_EQ(kd::read_file("/etc/passwd").empty(), false);  // untouched by the O_TRUNC attempt
}

TEST(EnvScrub, AllowlistSetAndDeny) {
  EnvPolicy p;
  p.set = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/tmp"}};
  p.pass = {"TERM", "LC_*", "ANTHROPIC_*"};
  p.deny = {"*_API_KEY", "LD_*"};
  const char* host[] = {
      "TERM=xterm", "LC_ALL=C",          "HOME=/root", "ANTHROPIC_API_KEY=sk-live",
      "OTHER=1",    "ANTHROPIC_MODEL=m", "PATH=/host", nullptr};
  auto env = build_environment(p, const_cast<char**>(host), {{"EXTRA", "yes"}});
  std::vector<std::string> want = {"ANTHROPIC_MODEL=m", "EXTRA=yes",          "HOME=/tmp",
                                   "LC_ALL=C",          "PATH=/usr/bin:/bin", "TERM=xterm"};
  EXPECT_EQ(env, want);
  try {
    build_environment(p, const_cast<char**>(host), {{"LD_PRELOAD", "/x.so"}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "environment: LD_PRELOAD is denied by the sandbox profile");
  }
  EXPECT_THROW(build_environment(p, nullptr, {{"A=B", "x"}}), Error);
}

}  // namespace
}  // namespace kd::sandbox
