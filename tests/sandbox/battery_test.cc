// The escape battery of docs/sandbox.md (every row; rows 55-56 with stand-in device nodes, row
// 53 for the sandbox's half): real attempts by tests/sandbox/probe.cc inside `kdispatch sandbox
// exec`, each with a positive control, and a host-side fingerprint taken before and after. Every
// test runs with kdispatch as root and as nobody.
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
#include <cstdlib>
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

  // Runs the probe and returns its lines, checking the sandbox started; the whole outcome
  // stays in last_.
  std::vector<std::string> lines(const std::vector<std::string>& args,
                                 const std::vector<std::string>& flags = {}) {
    last_ = host_->probe(args, flags);
    EXPECT_TRUE(last_.result.is_object() && last_.result.contains("stdout")) << last_.err;
    return last_.lines;
  }

  // The seccomp denials of the last run whose system call is `call`.
  std::vector<json> denied(const std::string& call) const {
    std::vector<json> out;
    for (const auto& d : last_.result.value("denials", json::array())) {
      if (d.value("layer", "") == "seccomp" && d.value("op", "") == call) out.push_back(d);
    }
    return out;
  }
  size_t seccomp_denials() const {
    size_t n = 0;
    for (const auto& d : last_.result.value("denials", json::array()))
      n += d.value("layer", "") == "seccomp";
    return n;
  }

  std::unique_ptr<BatteryHost> host_;
  BoxOutcome last_;
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
  // Refused by the mount layer and Landlock, which leave no record: said so in the result.
  EXPECT_EQ(seccomp_denials(), 0u) << last_.result.dump();
  EXPECT_EQ(last_.result["unobserved_layers"], json::array({"mount", "landlock"}));
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
  // Each refusal by the filter is reported by name, with the caller's pid.
  for (const char* call : {"mount", "umount2", "unshare", "clone", "fsopen", "open_tree", "chroot",
                           "pivot_root", "name_to_handle_at", "open_by_handle_at"}) {
    auto d = denied(call);
    ASSERT_FALSE(d.empty()) << call << ": " << last_.result["denials"].dump();
    EXPECT_EQ(d[0]["errno"], "EPERM");
    EXPECT_NE(d[0]["detail"].get<std::string>().find("pid "), std::string::npos);
  }
  EXPECT_EQ(denied("mount").size(), 2u);  // remount and bind
  EXPECT_NE(denied("unshare")[0]["detail"].get<std::string>().find("CLONE_NEWNS|CLONE_NEWUSER"),
            std::string::npos)
      << denied("unshare")[0].dump();
  EXPECT_TRUE(denied("clone3").empty());  // ENOSYS sends libc to clone: not a denial
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
  EXPECT_EQ(denied("ptrace").size(), 1u) << last_.result.dump();
  EXPECT_EQ(denied("process_vm_readv").size(), 1u);
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
  auto ioctls = denied("ioctl");
  ASSERT_EQ(ioctls.size(), 3u) << last_.result.dump();  // not the TIOCGWINSZ control
  EXPECT_NE(ioctls[0]["detail"].get<std::string>().find("0x5412"), std::string::npos);  // TIOCSTI
  for (const char* call : {"io_uring_setup", "userfaultfd", "bpf", "perf_event_open", "keyctl",
                           "add_key", "personality"}) {
    EXPECT_EQ(denied(call).size(), 1u) << call;
  }
  EXPECT_EQ(denied("ptrace").size(), 1u);  // after the stacked filter too
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
  // The filter refused three families (raw ICMP is the network namespace's EPERM), by name.
  auto sockets = denied("socket");
  ASSERT_EQ(sockets.size(), 3u) << last_.result.dump();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NE(sockets[i]["detail"].get<std::string>().find(
                  std::vector<std::string>{"AF_PACKET", "AF_NETLINK", "AF_VSOCK"}[i]),
              std::string::npos)
        << sockets[i].dump();
  }
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
  // What the filter refused before the deadline is still reported.
  o = host_->probe({"unshare", ";", "sleep", "100"}, {"--timeout", "0.5"});
  ASSERT_EQ(o.result["denials"].size(), 2u) << o.result.dump();
  EXPECT_EQ(o.result["denials"][0]["op"], "unshare");
  EXPECT_EQ(o.result["denials"][1]["layer"], "timeout");
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

// Row 53 has two halves. The dispatcher builds the worktree from a history without no-peek
// content (its own tests); what the sandbox adds is that the worktree's object database is not
// in the box at all: a git worktree's `.git` file points into the main repository, which is
// never bound, so neither git nor a direct read reaches any revision, pack, reflog or stash.
TEST_P(Battery, Row53_NoPeekContentIsNotInTheVisibleObjectDatabase) {
  if (!fs::exists("/usr/bin/git")) GTEST_SKIP() << "git is not installed";
  const std::string repo = host_->root() + "/repo", gwt = host_->root() + "/gwt";
  const std::string hidden = "HIDDEN-" + host_->token();
  fs::create_directories(repo);
  const std::string git = "git -c user.name=t -c user.email=t@t -c safe.directory='*' -C " + repo;
  const std::string setup = git + " init -q && echo visible > " + repo + "/visible.txt && echo " +
                            hidden + " > " + repo + "/hidden.txt && " + git + " add -A && " + git +
                            " commit -qm one && " + git + " rm -q hidden.txt && " + git +
                            " commit -qm two && " + git + " stash list && " + git +
                            " worktree add -q " + gwt + " HEAD";
  ASSERT_EQ(std::system(setup.c_str()), 0) << setup;
  if (running_as_root()) {
    ASSERT_EQ(std::system(("chown -R 65534:65534 " + gwt).c_str()), 0);
  }
  // Control: on the host, the revision with the no-peek file is one command away.
  const std::string host_show = "git -c safe.directory='*' -C " + gwt + " show HEAD~1:hidden.txt";
  BoxOutcome host_side = host_->run({"/bin/sh", "-c", host_show});
  ASSERT_EQ(host_side.exit_code, 0) << host_side.err;
  auto in_box = [&](const std::vector<std::string>& cmd) {
    std::vector<std::string> argv = {KD_BINARY,     "sandbox", "exec",   "--worktree", gwt, "--ro",
                                     gwt + "/.git", "--ro",    KD_PROBE, "--json",     "--"};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return host_->run(argv);
  };
  BoxOutcome show = in_box({"/bin/sh", "-c", host_show + " 2>&1; echo status=$?"});
  ASSERT_TRUE(show.result.is_object()) << show.err;
  const std::string out = show.result["stdout"];
  EXPECT_EQ(out.find(hidden), std::string::npos) << out;
  EXPECT_NE(out.find("not a git repository"), std::string::npos) << out;
  EXPECT_EQ(out.find("status=0"), std::string::npos) << out;
  BoxOutcome probe =
      in_box({KD_PROBE, "read", gwt + "/visible.txt", ";", "list", repo + "/.git/objects", ";",
              "read", repo + "/.git/logs/HEAD", ";", "list", repo + "/.git/worktrees"});
  ASSERT_EQ(probe.lines.size(), 4u) << probe.err;
  EXPECT_EQ(probe.lines[0], "OK visible");  // control: the checked-out files are there
  EXPECT_EQ(probe.lines[1], "ERR ENOENT");
  EXPECT_EQ(probe.lines[2], "ERR ENOENT");
  EXPECT_EQ(probe.lines[3], "ERR ENOENT");
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

// Row 56 asks what a GPU run would show: other GPUs reached through the control node, UVM,
// PCI resources in /sys, or the driver's /proc entries. Without a GPU here, stand-in nodes make
// the chip's view: only the assigned node and its companion control node exist, /sys is not
// mounted and /proc/driver is masked, so none of the side doors exists inside. Whether the
// real driver confines ioctls on the control node to the opened device is the driver's matter
// and needs a GPU host.
TEST_P(Battery, Row56_NoSideDoorsToOtherChips) {
  if (!running_as_root()) GTEST_SKIP() << "stand-in device nodes need root to mknod";
  const std::string dev = host_->root() + "/dev";
  fs::create_directories(dev);
  for (const char* n : {"nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"}) {
    ASSERT_EQ(mknod((dev + "/" + n).c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    chmod((dev + "/" + n).c_str(), 0666);
  }
  const std::string chips = host_->root() + "/chips.json";
  std::ofstream(chips) << json{{"chips",
                                {{{"id", "0"},
                                  {"kind", "gpu"},
                                  {"lock", host_->root() + "/chip0.lock"},
                                  {"devices", {dev + "/nvidia0", dev + "/nvidiactl"}}}}}}
                              .dump();
  auto l = lines({"open-rw",
                  dev + "/nvidia0",
                  ";",
                  "open-rw",
                  dev + "/nvidiactl",
                  ";",
                  "open-rw",
                  dev + "/nvidia1",
                  ";",
                  "open-rw",
                  dev + "/nvidia-uvm",
                  ";",
                  "list",
                  "/sys/bus/pci/devices",
                  ";",
                  "read",
                  "/sys/bus/pci/devices/0000:00:00.0/resource0",
                  ";",
                  "list",
                  "/proc/driver",
                  ";",
                  "read",
                  "/proc/driver/nvidia/gpus/0000:00:00.0/information",
                  ";",
                  "list",
                  "/proc/self"},
                 {"--chip", "0", "--chips", chips});
  ASSERT_EQ(l.size(), 9u);
  EXPECT_EQ(l[0], "OK");  // control: the assigned chip
  EXPECT_EQ(l[1], "OK");  // and its control node
  EXPECT_EQ(l[2], "ERR ENOENT");
  EXPECT_EQ(l[3], "ERR ENOENT");
  EXPECT_EQ(l[4], "ERR ENOENT");
  EXPECT_EQ(l[5], "ERR ENOENT");
  EXPECT_EQ(l[6], "ERR EACCES");  // masked: an empty mode-0 directory
  EXPECT_EQ(l[7], "ERR EACCES");
  EXPECT_EQ(l[8].rfind("OK ", 0), 0u) << l[8];  // control: the rest of /proc is there
}

INSTANTIATE_TEST_SUITE_P(Modes, Battery, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "AsNobody" : "AsRoot"; });

}  // namespace
}  // namespace kd::test
