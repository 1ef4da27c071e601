// The box program: its configuration on the wire (versioned, validated) and how it is found
// and started. A box program that is missing, not executable or handed a malformed
// configuration refuses by name; nothing falls back to another way of starting a box.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "common/errors.h"
#include "sandbox/box_init.h"
#include "sandbox/box_program.h"
#include "sandbox/fds.h"
#include "sandbox/init_config.h"
#include "sandbox/seccomp_filter.h"
#include "tests/support/process.h"

namespace kd::sandbox {
namespace {

namespace fs = std::filesystem;

InitConfig sample() {
  InitConfig c;
  c.uid = 1000;
  c.gid = 1001;
  c.as_root = true;
  c.plan.system_ro = {"/usr", "/etc"};
  c.plan.tmpfs = {{"/tmp", 64}, {"/run", 8}};
  c.plan.dev = {"null", "zero"};
  c.plan.worktree = "/srv/wt";
  c.plan.rw_extra = {"/srv/artifacts"};
  c.plan.ro = {"/srv/wt/ref.py"};
  c.plan.mask = {"/srv/wt/secret"};
  c.plan.devices = {"/dev/accel0"};
  c.hostname = "sandbox";
  c.landlock_abi = 4;
  c.seccomp = SeccompFilter(DenyAction::Notify).bpf();
  c.seccomp_files = SeccompFilter(DenyAction::Errno).bpf();
  c.notify = true;
  c.limits.timeout_s = 12.5;
  c.limits.pids = 77;
  c.limits.cpu_s = 9;
  c.nproc_backstop = true;
  return c;
}

std::string error_of(const std::string& bytes) {
  try {
    decode_init_config(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(InitConfig, RoundTripsEveryField) {
  const InitConfig in = sample();
  const InitConfig out = decode_init_config(encode_init_config(in));
  EXPECT_EQ(out.uid, 1000u);
  EXPECT_EQ(out.gid, 1001u);
  EXPECT_TRUE(out.as_root);
  EXPECT_EQ(out.plan.system_ro, in.plan.system_ro);
  ASSERT_EQ(out.plan.tmpfs.size(), 2u);
  EXPECT_EQ(out.plan.tmpfs[1].path, "/run");
  EXPECT_EQ(out.plan.tmpfs[1].size_mb, 8u);
  EXPECT_EQ(out.plan.dev, in.plan.dev);
  EXPECT_EQ(out.plan.worktree, "/srv/wt");
  EXPECT_EQ(out.plan.rw_extra, in.plan.rw_extra);
  EXPECT_EQ(out.plan.ro, in.plan.ro);
  EXPECT_EQ(out.plan.mask, in.plan.mask);
  EXPECT_EQ(out.plan.devices, in.plan.devices);
  EXPECT_EQ(out.hostname, "sandbox");
  EXPECT_EQ(out.landlock_abi, 4);
  ASSERT_EQ(out.seccomp.size(), in.seccomp.size());
  EXPECT_EQ(std::memcmp(out.seccomp.data(), in.seccomp.data(), in.seccomp.size() * 8), 0);
  ASSERT_EQ(out.seccomp_files.size(), in.seccomp_files.size());
  EXPECT_TRUE(out.notify);
  EXPECT_EQ(out.limits.timeout_s, 12.5);
  EXPECT_EQ(out.limits.pids, 77u);
  EXPECT_EQ(out.limits.cpu_s, 9u);
  EXPECT_TRUE(out.nproc_backstop);
}

TEST(InitConfig, MalformedConfigurationsAreNamedErrors) {
  const std::string good = encode_init_config(sample());
  // Every truncation is refused: no prefix of a configuration is a configuration.
  for (size_t n = 0; n < good.size(); n += 7) {
    EXPECT_EQ(error_of(good.substr(0, n)).rfind("box: malformed config: ", 0), 0u) << n;
  }
  EXPECT_EQ(error_of(good + "x"), "box: malformed config: 1 bytes after the last field");
  std::string other_version = good;
  other_version[0] = 2;
  EXPECT_EQ(error_of(other_version),
            "box: malformed config: version 2, this box program reads version 1 (a box program "
            "of another build?)");
  auto with = [](auto change) {
    InitConfig c = sample();
    change(c);
    return error_of(encode_init_config(c));
  };
  EXPECT_EQ(with([](InitConfig& c) { c.uid = 0; }),
            "box: malformed config: uid 0 gid 1001 (a box never runs as root)");
  EXPECT_EQ(with([](InitConfig& c) { c.plan.worktree = "wt"; }),
            "box: malformed config: worktree \"wt\" is not an absolute path");
  EXPECT_EQ(with([](InitConfig& c) {
              c.plan.mask = {"/a", ""};
            }),
            "box: malformed config: no-peek path \"\" is not an absolute path");
  EXPECT_EQ(with([](InitConfig& c) { c.plan.dev = {"../sda"}; }),
            "box: malformed config: /dev entry \"../sda\" is not a plain name");
  EXPECT_EQ(with([](InitConfig& c) { c.seccomp.clear(); }),
            "box: malformed config: command seccomp program of 0 bytes (1..4096 instructions of "
            "8 bytes)");
  EXPECT_EQ(
      with([](InitConfig& c) { c.hostname = std::string(65, 'h'); }),
      "box: malformed config: hostname \"" + std::string(65, 'h') + "\" (1 to 64 characters)");
  EXPECT_EQ(with([](InitConfig& c) { c.limits.timeout_s = -1; }),
            "box: malformed config: timeout -1.000000 s");
  // A flag is 0 or 1: one decoded config has one encoding (found by fuzz_init_config).
  std::string flag = good;
  flag[24 + 6] = 1;  // as_root, after version, uid and gid: 0x0001000000000001
  EXPECT_EQ(error_of(flag), "box: malformed config: as-root flag 281474976710657 (0 or 1)");
  flag = good;
  flag[flag.size() - 8] = 2;  // nproc_backstop, the last field
  EXPECT_EQ(error_of(flag), "box: malformed config: nproc backstop flag 2 (0 or 1)");
}

TEST(BoxProgram, IsFoundAndExecutable) {
  const fs::path p = box_program_path();
  EXPECT_EQ(p.filename(), "kdispatch-box");
  EXPECT_EQ(::access(p.c_str(), X_OK), 0) << p;
}

// The program itself: a malformed configuration is refused on the control socket, by name,
// before anything is built.
TEST(BoxProgram, RefusesAMalformedConfigurationByName) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  const pid_t pid = spawn_box_program(sv[1]);
  ::close(sv[1]);
  std::string bad = encode_init_config(sample());
  bad.resize(bad.size() / 2);
  send_with_fds(sv[0], bad, {});
  std::string msg;
  std::vector<int> fds;
  ASSERT_TRUE(recv_with_fds(sv[0], msg, fds, 0));
  ASSERT_FALSE(msg.empty());
  EXPECT_EQ(Startup(msg[0]), Startup::Error);
  EXPECT_EQ(msg.substr(1).rfind("box: malformed config: runs short", 0), 0u) << msg;
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  ::close(sv[0]);
}

// The CLI looks for the box program next to itself and refuses when it is absent or not
// executable: an installed kdispatch never reaches back into a build tree.
TEST(BoxProgram, MissingOrNotExecutableIsANamedRefusal) {
  kd::test::TempDir dir;
  const fs::path bin = fs::path(KD_BINARY).parent_path();
  fs::copy_file(bin / "kdispatch", fs::path(dir.path()) / "kdispatch");
  kd::test::TempDir wt;
  // As root a box runs as the worktree's owner, never root: a root-owned one is refused first.
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(wt.path().c_str(), 65534, 65534), 0);
  }
  const std::vector<std::string> args = {dir / "kdispatch", "sandbox", "exec",     "--worktree",
                                         wt.path(),         "--",      "/bin/true"};
  // The policies from the sources: this copy has no installation around it.
  const std::map<std::string, std::string> env = {
      {"KDISPATCH_POLICY_DIR", std::string(KD_SOURCE_DIR) + "/policies"}};
  auto missing = kd::test::run_process(args, "", env);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("box: the box program \"" + dir / "kdispatch-box" +
                             "\" cannot be used (stat: ENOENT)"),
            std::string::npos)
      << missing.err;
  fs::copy_file(bin / "kdispatch-box", fs::path(dir.path()) / "kdispatch-box");
  ASSERT_EQ(::chmod((dir / "kdispatch-box").c_str(), 0644), 0);
  auto not_executable = kd::test::run_process(args, "", env);
  EXPECT_NE(not_executable.exit_code, 0);
  EXPECT_NE(not_executable.err.find("box: the box program \"" + dir / "kdispatch-box" +
                                    "\" is not an executable regular file"),
            std::string::npos)
      << not_executable.err;
}

}  // namespace
}  // namespace kd::sandbox
