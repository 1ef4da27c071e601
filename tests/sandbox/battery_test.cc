// The escape battery of sandboxes.md §5 (every row that needs no GPU; rows 55-56 with stand-in
// device nodes): real attempts by tests/sandbox/probe.cc inside `kdispatch sandbox exec`, each
// with a positive control, and a host-side fingerprint taken before and after. Every test runs
// with kdispatch as root and as nobody.
#include <arpa/inet.h>
#include <dirent.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "common/files.h"
#include "tests/sandbox/battery_support.h"

namespace kd::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class Battery : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (!GetParam() && !running_as_root()) {
      GTEST_SKIP() << "the as-root variant needs root";
    }
    host_ = std::make_unique<BatteryHost>(GetParam());
    before_ = host_->fingerprint();
  }
  void TearDown() override {
    if (host_) {
      EXPECT_EQ(host_->fingerprint(), before_) << "the host tree changed";
    }
  }
  std::string wt(const std::string& rel = "") const {
    return host_->wt() + (rel.empty() ? "" : "/" + rel);
  }
  std::string marker(const std::string& dir) const { return dir + "/kd-escape-" + host_->token(); }

  // A profile derived from author.json with some limits changed, stored in the fixture.
  std::string profile_with(const json& patch) const {
    json p =
        json::parse(kd::read_file(std::string(KD_SOURCE_DIR) + "/policies/sandbox/author.json"));
    p.merge_patch(patch);
    const std::string path = host_->root() + "/profile-" + std::to_string(++profiles_) + ".json";
    std::ofstream(path) << p.dump();
    return path;
  }

  // Runs the probe and returns its lines, checking the sandbox started.
  std::vector<std::string> lines(const std::vector<std::string>& args,
                                 const std::vector<std::string>& flags = {}) {
    BoxOutcome o = host_->probe(args, flags);
    EXPECT_TRUE(o.result.is_object() && o.result.contains("stdout")) << o.err;
    return o.lines;
  }

  std::unique_ptr<BatteryHost> host_;
  std::string before_;
  mutable int profiles_ = 0;
};

bool any_of(const std::string& line, std::initializer_list<const char*> options) {
  for (const char* o : options) {
    if (line == o) return true;
  }
  return false;
}

// Processes on the host whose command line mentions `token`.
int processes_mentioning(const std::string& token) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmd.find(token) != std::string::npos && std::to_string(getpid()) != name) ++n;
  }
  return n;
}

TEST_P(Battery, Rows01to07_12_13_WritesStayInTheWorktree) {
  auto l = lines({"write",
                  wt("ok/new"),
                  ";",  // control
                  "write",
                  marker("/etc"),
                  ";",  // 1
                  "write",
                  wt("../x"),
                  ";",  // 2
                  "openat-write",
                  wt(),
                  "../x",
                  ";",  // 2
                  "write",
                  "/proc/self/cwd/../x",
                  ";",  // 3
                  "symlink-write",
                  marker("/etc"),
                  wt("ok/l"),
                  ";",  // 4
                  "link",
                  "/etc/passwd",
                  wt("ok/h"),
                  ";",  // 6
                  "rename",
                  wt("ok/existing"),
                  marker("/var/tmp"),
                  ";",  // 7
                  "rename",
                  "/etc/hostname",
                  wt("ok/y"),
                  ";",  // 7
                  "write",
                  host_->outside() + "/file.txt",
                  ";",  // 1 (dispatcher's dir)
                  "mkfifo",
                  wt("ok/fifo"),
                  ";",      // 12
                  "fds"});  // 13
  ASSERT_EQ(l.size(), 12u);
  EXPECT_EQ(l[0], "OK");
  EXPECT_EQ(l[1], "ERR EROFS");
  EXPECT_EQ(l[2], "ERR EROFS");
  EXPECT_EQ(l[3], "ERR EROFS");
  EXPECT_EQ(l[4], "ERR EROFS");
  EXPECT_EQ(l[5], "ERR EROFS");
  EXPECT_TRUE(any_of(l[6], {"ERR EXDEV", "ERR EPERM"})) << l[6];
  EXPECT_TRUE(any_of(l[7], {"ERR EXDEV", "ERR EROFS"})) << l[7];
  EXPECT_TRUE(any_of(l[8], {"ERR EXDEV", "ERR EROFS"})) << l[8];
  EXPECT_EQ(l[9], "ERR ENOENT");
  EXPECT_EQ(l[10], "OK");
  EXPECT_EQ(l[11], "OK 0,1,2");
  EXPECT_EQ(kd::read_file(wt("ok/new")), "x");
  EXPECT_TRUE(fs::is_fifo(wt("ok/fifo")));
}

TEST_P(Battery, Rows08to10_14_15_ReadOnlyBindsHold) {
  auto l = lines({"read",
                  wt("ref.py"),
                  ";",  // control
                  "write",
                  wt("ref.py"),
                  ";",
                  "truncate",
                  wt("ref.py"),
                  ";",
                  "rename",
                  wt("ok/existing"),
                  wt("ref.py"),
                  ";",
                  "unlink",
                  wt("ref.py"),
                  ";",
                  "chmod",
                  wt("ref.py"),
                  ";",
                  "utime",
                  wt("ref.py"),
                  ";",
                  "setxattr",
                  wt("ref.py"),
                  ";",
                  "write",
                  wt(".git/hooks/post-commit"),
                  ";",
                  "write",
                  wt(".git/config"),
                  ";",
                  "rename",
                  wt(".git"),
                  wt("ok/git"),
                  ";",
                  "rmdir",
                  wt(".git"),
                  ";",
                  "write",
                  wt("ok/control")});
  ASSERT_EQ(l.size(), 13u);
  EXPECT_EQ(l[0], "OK REFERENCE");
  EXPECT_EQ(l[1], "ERR EROFS");
  EXPECT_EQ(l[2], "ERR EROFS");
  EXPECT_EQ(l[3], "ERR EBUSY");
  EXPECT_EQ(l[4], "ERR EBUSY");
  EXPECT_EQ(l[5], "ERR EROFS");
  EXPECT_EQ(l[6], "ERR EROFS");
  EXPECT_EQ(l[7], "ERR EROFS");
  EXPECT_EQ(l[8], "ERR EROFS");
  EXPECT_EQ(l[9], "ERR EROFS");
  EXPECT_EQ(l[10], "ERR EBUSY");
  EXPECT_EQ(l[11], "ERR EBUSY");
  EXPECT_EQ(l[12], "OK");
}

TEST_P(Battery, Rows16_17_DiskFillStopsAtTheLimits) {
  BoxOutcome big = host_->probe({"fill", wt("ok/big"), "4"},
                                {"--profile", profile_with({{"limits", {{"fsize_mb", 1}}}})});
  EXPECT_EQ(big.result["signal"], SIGXFSZ) << big.err;
  EXPECT_EQ(big.result["killed_by_limit"], true);
  EXPECT_EQ(big.result["limit"], "fsize");
  EXPECT_LE(fs::file_size(wt("ok/big")), 1u << 20);
  const std::string small_tmp =
      profile_with({{"tmpfs", json::array({{{"path", "/tmp"}, {"size_mb", 2}},
                                           {{"path", "/dev/shm"}, {"size_mb", 2}}})}});
  auto l =
      lines({"fill", "/tmp/a", "1", ";", "fill", "/tmp/b", "4", ";", "fill", "/dev/shm/c", "4"},
            {"--profile", small_tmp});
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], "OK");
  EXPECT_EQ(l[1], "ERR ENOSPC");
  EXPECT_EQ(l[2], "ERR ENOSPC");
}

TEST_P(Battery, Rows18to26_NoMountsNamespacesOrPrivilege) {
  auto l = lines({"caps",
                  ";",
                  "remount-rw",
                  ";",
                  "umount",
                  wt("ref.py"),
                  ";",
                  "bind",
                  "/",
                  wt("ok"),
                  ";",
                  "unshare",
                  ";",
                  "clone-newuser",
                  ";",
                  "clone3",
                  ";",
                  "fsopen",
                  ";",
                  "open_tree",
                  ";",
                  "chroot",
                  ";",
                  "pivot_root",
                  ";",
                  "setns",
                  "/proc/1/ns/mnt",
                  ";",
                  "nosuid",
                  "/usr/bin/su",
                  ";",
                  "name_to_handle",
                  ";",
                  "open_by_handle"});
  ASSERT_EQ(l.size(), 15u);
  EXPECT_EQ(l[0], "OK eff=0,0 prm=0,0 nnp=1");  // 25
  for (size_t i : {1, 2, 3, 4, 5})
    EXPECT_EQ(l[i], "ERR EPERM") << i;  // 18-20
  EXPECT_EQ(l[6], "ERR ENOSYS");        // clone3 -> clone
  for (size_t i : {7, 8, 9, 10})
    EXPECT_EQ(l[i], "ERR EPERM") << i;                                             // 21-22
  EXPECT_TRUE(any_of(l[11], {"ERR EACCES", "ERR EPERM", "ERR ENOENT"})) << l[11];  // 23
  EXPECT_EQ(l[12], "OK setuid_bit=1 nosuid_mount=1 nnp=1");                        // 24
  EXPECT_EQ(l[13], "ERR EPERM");                                                   // 26
  EXPECT_EQ(l[14], "ERR EPERM");
}

TEST_P(Battery, Rows27to30_ProcessesOutsideAreUnreachable) {
  // A canary on the host with the box's user id: kill(-1) inside must not reach it.
  pid_t canary = fork();
  if (canary == 0) {
    if (running_as_root() && (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
                              setresuid(65534, 65534, 65534) != 0)) {
      _exit(1);
    }
    pause();
    _exit(0);
  }
  auto l = lines({"pids", ";", "list", "/proc/1/root/", ";", "read", "/proc/1/environ", ";",
                  "ptrace", "1", ";", "process_vm_readv", ";", "kill-all"});
  ASSERT_EQ(l.size(), 6u);
  EXPECT_EQ(l[0].rfind("OK ", 0), 0u);
  EXPECT_LE(std::stoi(l[0].substr(3)), 3);  // pid 1 of the box and the probe
  EXPECT_TRUE(any_of(l[1], {"ERR EACCES", "ERR EPERM"})) << l[1];
  EXPECT_TRUE(any_of(l[2], {"ERR EACCES", "ERR EPERM"})) << l[2];
  EXPECT_EQ(l[3], "ERR EPERM");
  EXPECT_EQ(l[4], "ERR EPERM");
  EXPECT_TRUE(any_of(l[5], {"ERR ESRCH", "OK"})) << l[5];
  EXPECT_EQ(kill(canary, 0), 0) << "the host canary was killed from inside the box";
  kill(canary, SIGKILL);
  waitpid(canary, nullptr, 0);
}

TEST_P(Battery, Rows31to37_KernelAttackSurfaceIsFiltered) {
  auto l = lines({"tiocgwinsz", ";", "tiocsti",     ";", "tiocsti-high", ";", "tioclinux",     ";",
                  "io_uring",   ";", "userfaultfd", ";", "bpf",          ";", "perf",          ";",
                  "keyctl",     ";", "add_key",     ";", "personality",  ";", "seccomp-stack", ";",
                  "ptrace",     "1"});
  ASSERT_EQ(l.size(), 13u);
  EXPECT_EQ(l[0], "OK");  // control: the probe holds a real terminal
  for (size_t i = 1; i <= 10; ++i)
    EXPECT_EQ(l[i], "ERR EPERM") << i;
  EXPECT_EQ(l[11], "OK");         // 37: a stacked filter is harmless...
  EXPECT_EQ(l[12], "ERR EPERM");  // ...and does not lift ours
  for (const char* call : {"x32", "int80"}) {
    BoxOutcome o = host_->probe({call});
    ASSERT_TRUE(o.result.is_object()) << o.err;
    EXPECT_TRUE(o.result["signal"] == SIGSYS || o.result["signal"] == SIGSEGV)
        << call << ": " << o.result.dump();
    EXPECT_TRUE(o.lines.empty()) << call;
  }
}

TEST_P(Battery, Row38_ProcSysAndSysAreNotWritable) {
  auto l = lines({"read", "/proc/sys/kernel/ostype", ";", "write", "/proc/sys/kernel/hostname", ";",
                  "write", "/proc/sys/vm/drop_caches", ";", "write", "/sys/kernel/uevent_helper"});
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0], "OK Linux");
  EXPECT_EQ(l[1], "ERR EROFS");
  EXPECT_EQ(l[2], "ERR EROFS");
  EXPECT_EQ(l[3], "ERR ENOENT");
}

TEST_P(Battery, Rows39to44_OnlyTheBoxLoopback) {
  // Host listeners the box must not reach: TCP on loopback, a pathname and an abstract socket.
  int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(tcp, (sockaddr*)&a, len), 0);
  ASSERT_EQ(listen(tcp, 4), 0);
  getsockname(tcp, (sockaddr*)&a, &len);
  const std::string path = host_->root() + "/host.sock";
  const std::string abstract = "kd-" + host_->token();
  int unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
      abs_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un u{};
  u.sun_family = AF_UNIX;
  std::strncpy(u.sun_path, path.c_str(), sizeof u.sun_path - 1);
  ASSERT_EQ(bind(unix_fd, (sockaddr*)&u, sizeof u), 0);
  chmod(path.c_str(), 0777);
  listen(unix_fd, 4);
  sockaddr_un ab{};
  ab.sun_family = AF_UNIX;
  std::memcpy(ab.sun_path + 1, abstract.data(), abstract.size());
  ASSERT_EQ(bind(abs_fd, (sockaddr*)&ab,
                 socklen_t(offsetof(sockaddr_un, sun_path) + 1 + abstract.size())),
            0);
  listen(abs_fd, 4);

  auto l = lines({"loopback",
                  ";",
                  "tcp",
                  "1.1.1.1",
                  "80",
                  ";",
                  "tcp6",
                  "2606:4700:4700::1111",
                  "80",
                  ";",
                  "udp",
                  "1.1.1.1",
                  "53",
                  ";",
                  "tcp",
                  "127.0.0.1",
                  std::to_string(ntohs(a.sin_port)),
                  ";",
                  "raw",
                  ";",
                  "packet",
                  ";",
                  "netlink",
                  ";",
                  "vsock",
                  ";",
                  "unix",
                  path,
                  ";",
                  "abstract",
                  abstract});
  ASSERT_EQ(l.size(), 11u);
  EXPECT_EQ(l[0], "OK hi");  // control
  EXPECT_EQ(l[1], "ERR ENETUNREACH");
  EXPECT_EQ(l[2], "ERR ENETUNREACH");
  EXPECT_EQ(l[3], "ERR ENETUNREACH");
  EXPECT_EQ(l[4], "ERR ECONNREFUSED");
  EXPECT_EQ(l[5], "ERR EPERM");
  EXPECT_EQ(l[6], "ERR EPERM");
  EXPECT_EQ(l[7], "ERR EPERM");
  EXPECT_EQ(l[8], "ERR EPERM");
  EXPECT_EQ(l[9], "ERR ENOENT");
  EXPECT_EQ(l[10], "ERR ECONNREFUSED");
  for (int fd : {tcp, unix_fd, abs_fd})
    close(fd);
}

TEST_P(Battery, Row46_ForkBombStopsAtThePidsLimit) {
  BoxOutcome o =
      host_->probe({"fork-bomb"}, {"--profile", profile_with({{"limits", {{"pids", 48}}}})});
  ASSERT_EQ(o.lines.size(), 1u) << o.err;
  EXPECT_EQ(o.lines[0].rfind("OK forked=", 0), 0u);
  EXPECT_NE(o.lines[0].find("then EAGAIN"), std::string::npos) << o.lines[0];
  EXPECT_LT(std::stoi(o.lines[0].substr(10)), 48);
  EXPECT_EQ(processes_mentioning(host_->token()), 0);
}

TEST_P(Battery, Row47_MemoryBombIsContained) {
  BoxOutcome o = host_->probe(
      {"mem-bomb", "2048"},
      {"--profile", profile_with({{"limits", {{"memory_mb", 64}, {"address_space_mb", 512}}}})});
  ASSERT_TRUE(o.result.is_object()) << o.err;
  const bool killed = o.result["killed_by_limit"] == true && o.result["limit"] == "memory";
  const bool refused = o.lines.size() == 1 && o.lines[0] == "ERR ENOMEM";
  EXPECT_TRUE(killed || refused) << o.result.dump();
}

TEST_P(Battery, Row48_CpuSpinIsStoppedByTheCpuLimit) {
  BoxOutcome o =
      host_->probe({"cpu-spin"}, {"--profile", profile_with({{"limits", {{"cpu_s", 1}}}})});
  EXPECT_EQ(o.result["signal"], SIGXCPU) << o.result.dump();
  EXPECT_EQ(o.result["killed_by_limit"], true);
  EXPECT_EQ(o.result["limit"], "cpu");
}

TEST_P(Battery, Row49_NothingOutlivesTheSandbox) {
  const std::string m = wt("ok/daemon-" + host_->token());
  BoxOutcome o = host_->probe({"daemon", m, "wait"}, {"--timeout", "1"});
  EXPECT_EQ(o.result["timed_out"], true) << o.result.dump();
  EXPECT_EQ(o.exit_code, 128 + SIGKILL);
  EXPECT_EQ(processes_mentioning(host_->token()), 0) << "a process of the box survived exec";
  const std::string seen = kd::read_file(m);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(kd::read_file(m), seen) << "the daemon still writes";
  // The command returns at once, leaving a setsid double-forked daemon that ignores SIGTERM.
  o = host_->probe({"daemon", m + "-2"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(processes_mentioning(host_->token()), 0);
  o = host_->probe({"sleep", "100"}, {"--timeout", "0.5"});
  EXPECT_EQ(o.result["timed_out"], true);
  ASSERT_FALSE(o.result["denials"].empty());
  EXPECT_EQ(o.result["denials"][0]["layer"], "timeout");
}

TEST_P(Battery, Row50_TheSandboxDiesWithTheDispatcher) {
  const std::string m = wt("ok/orphan-" + host_->token());
  pid_t kd = fork();
  if (kd == 0) {
    host_->probe({"daemon", m, "wait"});
    _exit(0);
  }
  for (int i = 0; i < 200 && !fs::exists(m); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(fs::exists(m));
  // Kill every kdispatch started for this fixture (the forked helper's child) and the helper.
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmd.rfind(KD_BINARY, 0) == 0 && cmd.find(host_->token()) != std::string::npos)
      kill(std::stoi(name), SIGKILL);
  }
  waitpid(kd, nullptr, 0);
  int left = 1;
  for (int i = 0; i < 100 && (left = processes_mentioning(host_->token())) > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(left, 0) << "the box outlived the dispatcher";
}

TEST_P(Battery, Row51_FdExhaustionAndOutputFlood) {
  auto l = lines({"fd-exhaust"}, {"--profile", profile_with({{"limits", {{"nofile", 64}}}})});
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0], "OK opened=61 then EMFILE");
  BoxOutcome o = host_->probe({"flood", "3"});
  EXPECT_EQ(o.result["stdout_truncated"], true);
  EXPECT_EQ(o.result["stdout"].get<std::string>().size(), 1u << 20);
  ASSERT_FALSE(o.result["denials"].empty());
  EXPECT_EQ(o.result["denials"][0]["layer"], "output");
}

TEST_P(Battery, Row52_NoPeekPathsCannotBeRead) {
  auto l = lines({"read",
                  wt("ok/existing"),
                  ";",
                  "read",
                  wt("secret.txt"),
                  ";",
                  "read",
                  "/proc/self/root" + wt("secret.txt"),
                  ";",
                  "list",
                  wt("nopeek"),
                  ";",
                  "read",
                  wt("nopeek/answer.txt"),
                  ";",
                  "link",
                  wt("secret.txt"),
                  wt("ok/h"),
                  ";",
                  "rename",
                  wt("secret.txt"),
                  wt("ok/s")});
  ASSERT_EQ(l.size(), 7u);
  EXPECT_EQ(l[0], "OK EXISTING");
  EXPECT_EQ(l[1], "ERR EACCES");
  EXPECT_EQ(l[2], "ERR EACCES");
  EXPECT_EQ(l[3], "ERR EACCES");
  EXPECT_EQ(l[4], "ERR EACCES");
  EXPECT_TRUE(any_of(l[5], {"ERR EXDEV", "ERR EPERM", "ERR EACCES"})) << l[5];
  EXPECT_EQ(l[6], "ERR EBUSY");
}

TEST_P(Battery, Row54_SecretsDoNotEnter) {
  BoxOutcome o = host_->probe({"env"});
  ASSERT_TRUE(o.result.is_object()) << o.err;
  const std::string env = o.result["stdout"];
  EXPECT_EQ(env.find("API_KEY"), std::string::npos);
  EXPECT_EQ(env.find(host_->token() + "\n"), std::string::npos);
  EXPECT_NE(env.find("PATH=/usr/local/bin:/usr/bin:/bin\n"), std::string::npos);  // control
  EXPECT_NE(env.find("TERM=xterm\n"), std::string::npos);
  EXPECT_EQ(env.find("KDISPATCH_POLICY_DIR"), std::string::npos);
}

TEST_P(Battery, Rows11_55_OnlyTheAssignedChipsNodes) {
  if (!running_as_root()) GTEST_SKIP() << "stand-in device nodes need root to mknod";
  const std::string dev = host_->root() + "/dev";
  fs::create_directories(dev);
  for (const char* n : {"accel0", "accel1"}) {
    ASSERT_EQ(mknod((dev + "/" + n).c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    chmod((dev + "/" + n).c_str(), 0666);
  }
  const std::string chips = host_->root() + "/chips.json";
  std::ofstream(chips) << json{{"chips",
                                {{{"id", "7"},
                                  {"kind", "tpu"},
                                  {"lock", host_->root() + "/chip7.lock"},
                                  {"env", {{"TPU_VISIBLE_DEVICES", "7"}}},
                                  {"devices", {dev + "/accel0"}}}}}}
                              .dump();
  auto l = lines({"open-rw", dev + "/accel0", ";", "open-rw", dev + "/accel1", ";", "mknod",
                  wt("ok/accel1"), ";", "mknod", dev + "/accel2"},
                 {"--chip", "7", "--chips", chips});
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0], "OK");
  EXPECT_EQ(l[1], "ERR ENOENT");
  EXPECT_TRUE(any_of(l[2], {"ERR EPERM", "ERR EACCES"})) << l[2];  // row 11: no CAP_MKNOD, Landlock
  EXPECT_TRUE(any_of(l[3], {"ERR EPERM", "ERR EROFS", "ERR EACCES"})) << l[3];
  BoxOutcome env = host_->probe({"env"}, {"--chip", "7", "--chips", chips});
  EXPECT_NE(env.result["stdout"].get<std::string>().find("TPU_VISIBLE_DEVICES=7\n"),
            std::string::npos);
  // A chip whose device node does not exist: refused, naming it.
  std::ofstream(chips)
      << json{{"chips", {{{"id", "8"}, {"kind", "tpu"}, {"devices", {dev + "/accel9"}}}}}}.dump();
  BoxOutcome missing = host_->probe({"env"}, {"--chip", "8", "--chips", chips});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("chip 8"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("accel9"), std::string::npos) << missing.err;
}

INSTANTIATE_TEST_SUITE_P(Modes, Battery, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "AsNobody" : "AsRoot"; });

}  // namespace
}  // namespace kd::test
