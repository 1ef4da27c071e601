// The Box API the agents layer calls: many commands in one box, file operations under the same
// confinement, the chip view, deadlines, fail-closed refusals.
#include "sandbox/box.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/errors.h"
#include "common/files.h"
#include "tests/sandbox/battery_support.h"

namespace kd::sandbox {
namespace {

namespace fs = std::filesystem;

class BoxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = std::make_unique<kd::test::BatteryHost>(false);
    spec_.profile = load_profile("author");
    spec_.worktree = host_->wt();
    spec_.ro = {host_->wt() + "/ref.py", host_->wt() + "/.git"};
    spec_.mask = {host_->wt() + "/secret.txt", host_->wt() + "/nopeek"};
  }
  RunResult sh(Box& box, const std::string& script, RunRequest req = {}) {
    req.argv = {"/bin/sh", "-c", script};
    return box.run(req);
  }
  std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::unique_ptr<kd::test::BatteryHost> host_;
  BoxSpec spec_;
};

TEST_F(BoxTest, RunsManyCommandsInOneBox) {
  auto box = Box::open(spec_);
  RunResult r = sh(*box, "pwd; echo hi > made; cat made; echo err >&2");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, host_->wt() + "\nhi\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(kd::read_file(host_->wt() + "/made"), "hi\n");
  EXPECT_EQ(sh(*box, "exit 3").exit_code, 3);
  RunResult killed = sh(*box, "kill -TERM $$");
  EXPECT_EQ(killed.signal, SIGTERM);
  EXPECT_EQ(killed.exit_code, -1);
  RunRequest in;
  in.argv = {"/bin/cat"};
  in.stdin_data = std::string(300000, 'q');  // more than a pipe holds
  EXPECT_EQ(box->run(in).out, in.stdin_data);
  RunRequest cwd;
  cwd.cwd = host_->wt() + "/ok";
  cwd.env = {{"KD_CALL", "seven"}};
  RunResult c = sh(*box, "pwd; echo $KD_CALL", cwd);
  EXPECT_EQ(c.out, host_->wt() + "/ok\nseven\n");
  RunRequest missing;
  missing.argv = {"no-such-tool"};
  RunResult m = box->run(missing);
  EXPECT_EQ(m.exit_code, 127);
  EXPECT_NE(m.err.find("execvp(\"no-such-tool\"): ENOENT"), std::string::npos) << m.err;
}

TEST_F(BoxTest, CommandsAreFoundAndRefusedAsExecvpFindsThem) {
  auto box = Box::open(spec_);
  ASSERT_EQ(sh(*box,
               "mkdir bin && printf '#!/bin/sh\\necho tool\\n' > bin/tool && "
               "printf 'echo plain $1\\n' > bin/plain && echo x > bin/data && "
               "cp bin/tool ok/here && chmod 755 bin/tool bin/plain ok/here")
                .exit_code,
            0);
  RunRequest req;
  req.cwd = host_->wt() + "/ok";
  // The command's own PATH; a missing directory is passed over, an empty entry is the cwd.
  req.env = {{"PATH", "/nonexistent::" + host_->wt() + "/bin"}};
  req.argv = {"tool"};
  RunResult tool = box->run(req);
  EXPECT_EQ(tool.out, "tool\n") << tool.err;
  req.argv = {"here"};
  EXPECT_EQ(box->run(req).out, "tool\n");
  // A file without "#!" runs under /bin/sh, with its arguments.
  req.argv = {"plain", "arg"};
  EXPECT_EQ(box->run(req).out, "plain arg\n");
  // Found but not executable: 126, the reason on the command's stderr.
  req.argv = {"data"};
  RunResult data = box->run(req);
  EXPECT_EQ(data.exit_code, 126);
  EXPECT_EQ(data.err, "sandbox: execvp(\"data\"): EACCES\n");
  req.argv = {"../bin/data"};
  EXPECT_EQ(box->run(req).err, "sandbox: execvp(\"../bin/data\"): EACCES\n");
  req.argv = {"../bin"};
  EXPECT_EQ(box->run(req).err, "sandbox: execvp(\"../bin\"): EACCES\n");
  req.argv = {"/nonexistent/tool"};
  RunResult missing = box->run(req);
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_EQ(missing.err, "sandbox: execvp(\"/nonexistent/tool\"): ENOENT\n");
  req.argv = {std::string(300, 't')};
  EXPECT_EQ(box->run(req).err,
            "sandbox: execvp(\"" + std::string(300, 't') + "\"): ENAMETOOLONG\n");
  // Without PATH, execvp's own default.
  req.env.clear();
  spec_.profile.env.set.erase("PATH");
  auto bare = Box::open(spec_);
  req.argv = {"true"};
  RunResult t = bare->run(req);
  EXPECT_EQ(t.exit_code, 0) << t.err;
}

TEST_F(BoxTest, BadRequestsAreErrorsNamingTheProblem) {
  auto box = Box::open(spec_);
  RunRequest key;
  key.argv = {"/bin/true"};
  key.env = {{"OPENAI_API_KEY", "sk-x"}};
  EXPECT_EQ(error_of([&] { box->run(key); }),
            "environment: OPENAI_API_KEY is denied by the sandbox profile");
  EXPECT_EQ(error_of([&] { box->run(RunRequest{}); }), "run: empty command");
  RunRequest chip;
  chip.argv = {"/bin/true"};
  chip.use_chip = true;
  EXPECT_EQ(error_of([&] { box->run(chip); }), "run: use_chip asked, but this box has no chip");
  RunRequest cwd;
  cwd.argv = {"/bin/true"};
  cwd.cwd = "/nonexistent";
  EXPECT_EQ(error_of([&] { box->run(cwd); }), "run: chdir(/nonexistent): ENOENT");
  RunRequest huge;
  huge.argv = {"/bin/echo", std::string(200000, 'a')};
  EXPECT_NE(error_of([&] { box->run(huge); }).find("are limited to 131072 bytes"),
            std::string::npos);
  EXPECT_EQ(sh(*box, "true").exit_code, 0);  // the box still works
}

TEST_F(BoxTest, WhatACommandLeavesBehindDiesWithIt) {
  auto box = Box::open(spec_);
  RunResult r = sh(*box, "sleep 100 & echo started");
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(r.wall_s, 5.0);
  // Gone by the time run returned, not merely soon after: the next command sees no sleep.
  RunResult ps = sh(*box, "cat /proc/[0-9]*/comm");
  EXPECT_NE(ps.out.find("sh\n"), std::string::npos) << ps.out;
  EXPECT_EQ(ps.out.find("sleep"), std::string::npos) << ps.out;
}

TEST_F(BoxTest, DeadlinePerCall) {
  auto box = Box::open(spec_);
  RunRequest req;
  req.argv = {"/bin/sleep", "30"};
  req.timeout_s = 0.3;
  RunResult r = box->run(req);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_LT(r.wall_s, 5.0);
  ASSERT_EQ(r.denials.size(), 1u);
  EXPECT_EQ(r.denials[0].layer, "timeout");
  const auto j = r.to_json();
  EXPECT_EQ(j["timed_out"], true);
  EXPECT_EQ(j["signal_name"], "KILL");
  EXPECT_EQ(j["denials"][0]["layer"], "timeout");
}

TEST_F(BoxTest, ConcurrentCallsGetTheirOwnResults) {
  auto box = Box::open(spec_);
  std::vector<std::thread> threads;
  std::vector<std::string> outs(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back(
        [&, i] { outs[i] = sh(*box, "sleep 0.1; echo " + std::to_string(i)).out; });
  }
  for (auto& t : threads)
    t.join();
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(outs[i], std::to_string(i) + "\n");
}

TEST_F(BoxTest, FileOperationsHaveTheConfinementOfCommands) {
  auto box = Box::open(spec_);
  FileRequest w{FileRequest::Write, "ok/notes.txt", "hello", 0};
  EXPECT_TRUE(box->file(w).ok);
  EXPECT_EQ(kd::read_file(host_->wt() + "/ok/notes.txt"), "hello");
  FileResult r = box->file({FileRequest::Read, host_->wt() + "/ok/notes.txt", "", 3});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.data, "hel");
  EXPECT_TRUE(r.truncated);
  FileResult ls = box->file({FileRequest::List, ".", "", 0});
  ASSERT_TRUE(ls.ok);
  std::vector<std::pair<std::string, char>> want = {
      {".git", 'd'}, {"nopeek", 'd'}, {"ok", 'd'}, {"ref.py", 'f'}, {"secret.txt", 'f'}};
  EXPECT_EQ(ls.entries, want);
  FileResult st = box->file({FileRequest::Stat, "ref.py", "", 0});
  EXPECT_TRUE(st.ok);
  EXPECT_EQ(st.type, 'f');
  EXPECT_EQ(st.size, 10u);
  // The same refusals as a command gets.
  FileResult ref = box->file({FileRequest::Write, "ref.py", "x", 0});
  EXPECT_FALSE(ref.ok);
  EXPECT_EQ(ref.err, EROFS);
  EXPECT_EQ(ref.error, "open(\"ref.py\", O_WRONLY|O_CREAT|O_TRUNC): EROFS");
  EXPECT_EQ(box->file({FileRequest::Read, "secret.txt", "", 100}).err, EACCES);
  EXPECT_EQ(box->file({FileRequest::List, "nopeek", "", 0}).err, EACCES);
  EXPECT_EQ(box->file({FileRequest::Write, "/etc/kd-escape", "x", 0}).err, EROFS);
  EXPECT_EQ(box->file({FileRequest::Write, "../escape", "x", 0}).err, EROFS);
  EXPECT_EQ(box->file({FileRequest::Write, ".git/config", "x", 0}).err, EROFS);
  EXPECT_EQ(box->file({FileRequest::Read, host_->outside() + "/file.txt", "", 100}).err, ENOENT);
  ASSERT_EQ(sh(*box, "ln -s /etc/kd-escape ok/link && mkfifo ok/fifo").exit_code, 0);
  EXPECT_EQ(box->file({FileRequest::Write, "ok/link", "x", 0}).err, EROFS);  // a planted link
  FileResult fifo = box->file({FileRequest::Read, "ok/fifo", "", 10});
  EXPECT_FALSE(fifo.ok);
  EXPECT_EQ(fifo.error, "open(\"ok/fifo\"): not a regular file");
  EXPECT_FALSE(fs::exists("/etc/kd-escape"));
  EXPECT_FALSE(fs::exists(host_->root() + "/escape"));
}

TEST_F(BoxTest, RefusedFileOperationsNameTheLayer) {
  auto box = Box::open(spec_);
  auto layer_of = [](const FileResult& r) {
    return r.denials.size() == 1 ? r.denials[0].layer
                                 : "(" + std::to_string(r.denials.size()) + ")";
  };
  FileResult ro = box->file({FileRequest::Write, "ref.py", "x", 0});
  EXPECT_EQ(layer_of(ro), "mount");
  EXPECT_EQ(ro.denials[0].op, "write");
  EXPECT_EQ(ro.denials[0].path, "ref.py");
  EXPECT_EQ(ro.denials[0].err, EROFS);
  EXPECT_EQ(layer_of(box->file({FileRequest::Read, "secret.txt", "", 10})), "permissions");
  EXPECT_EQ(layer_of(box->file({FileRequest::List, "nopeek", "", 0})), "permissions");
  // /proc/self/comm is the caller's own file, mode 0644, on a read-write mount: only Landlock
  // (write rights beneath the worktree, extra dirs and tmpfs only) refuses the write.
  FileResult ll = box->file({FileRequest::Write, "/proc/self/comm", "x", 0});
  EXPECT_EQ(ll.err, EACCES) << ll.error;
  EXPECT_EQ(layer_of(ll), "landlock");
  // Not refusals: a missing file and a success carry no denial.
  EXPECT_TRUE(box->file({FileRequest::Read, "no-such-file", "", 10}).denials.empty());
  EXPECT_TRUE(box->file({FileRequest::Write, "ok/fine", "x", 0}).denials.empty());
}

TEST_F(BoxTest, SeccompDenialsAreReportedByName) {
  spec_.ro.push_back(KD_PROBE);
  auto box = Box::open(spec_);
  RunRequest req;
  req.argv = {KD_PROBE, "unshare", ";", "packet", ";", "write", host_->wt() + "/ok/x"};
  RunResult r = box->run(req);
  EXPECT_EQ(r.out, "ERR EPERM\nERR EPERM\nOK\n") << r.err;
  ASSERT_EQ(r.denials.size(), 2u) << r.to_json().dump();
  EXPECT_EQ(r.denials[0].layer, "seccomp");
  EXPECT_EQ(r.denials[0].op, "unshare");
  EXPECT_EQ(r.denials[0].err, EPERM);
  EXPECT_NE(r.denials[0].detail.find("unshare(CLONE_NEWNS|CLONE_NEWUSER"), std::string::npos)
      << r.denials[0].detail;
  EXPECT_EQ(r.denials[1].op, "socket");
  EXPECT_NE(r.denials[1].detail.find("AF_PACKET"), std::string::npos) << r.denials[1].detail;
  EXPECT_EQ(r.unobserved_layers, (std::vector<std::string>{"mount", "landlock"}));
  const auto j = r.to_json();
  EXPECT_EQ(j["denials"][0]["layer"], "seccomp");
  EXPECT_EQ(j["denials"][0]["errno"], "EPERM");
  // The next command starts with a clean record.
  EXPECT_TRUE(sh(*box, "true").denials.empty());
  // A flood of denied calls is itemized up to a cap, then counted.
  req.argv = {"/bin/sh", "-c"};
  std::string many;
  for (int i = 0; i < 70; ++i)
    many += std::string(KD_PROBE) + " unshare >/dev/null; ";
  req.argv.push_back(many);
  RunResult flood = box->run(req);
  ASSERT_EQ(flood.denials.size(), 65u);
  EXPECT_EQ(flood.denials.back().op, "more");
  EXPECT_EQ(flood.denials.back().detail, "6 more denied calls, not itemized");
  // Reported as they happen: a command killed at its deadline keeps its denials.
  RunRequest slow;
  slow.argv = {"/bin/sh", "-c", std::string(KD_PROBE) + " unshare; sleep 100"};
  slow.timeout_s = 0.5;
  RunResult late = box->run(slow);
  EXPECT_TRUE(late.timed_out);
  ASSERT_EQ(late.denials.size(), 2u) << late.to_json().dump();
  EXPECT_EQ(late.denials[0].op, "unshare");
  EXPECT_EQ(late.denials[1].layer, "timeout");
}

TEST_F(BoxTest, WithoutUserNotificationTheResultSaysSo) {
  spec_.ro.push_back(KD_PROBE);
  spec_.profile.seccomp_notify = Need::Off;
  auto box = Box::open(spec_);
  RunRequest req;
  req.argv = {KD_PROBE, "unshare"};
  RunResult r = box->run(req);
  EXPECT_EQ(r.out, "ERR EPERM\n");  // still refused
  EXPECT_TRUE(r.denials.empty());
  EXPECT_EQ(r.unobserved_layers, (std::vector<std::string>{"mount", "landlock", "seccomp"}));
}

TEST_F(BoxTest, SourcesUnderARootOnlyDirectoryAreBound) {
  if (!kd::test::running_as_root()) GTEST_SKIP() << "needs root to make a root-only directory";
  // root/private (0700, root's) holds a worktree and a wiki the box's user could not reach.
  const std::string priv = host_->root() + "/private";
  fs::create_directories(priv + "/wt/ok");
  fs::create_directories(priv + "/wiki");
  std::ofstream(priv + "/wiki/page.md") << "PAGE\n";
  ASSERT_EQ(chmod(priv.c_str(), 0700), 0);
  ASSERT_EQ(chown((priv + "/wt").c_str(), 65534, 65534), 0);
  ASSERT_EQ(chown((priv + "/wt/ok").c_str(), 65534, 65534), 0);
  BoxSpec s = spec_;
  s.worktree = priv + "/wt";
  s.ro = {priv + "/wiki"};
  s.mask = {};
  auto box = Box::open(s);
  RunResult r = sh(*box, "id -u; cat " + priv + "/wiki/page.md; echo made > ok/new; pwd");
  EXPECT_EQ(r.out, "65534\nPAGE\n" + priv + "/wt\n") << r.err;
  EXPECT_EQ(kd::read_file(priv + "/wt/ok/new"), "made\n");
  EXPECT_NE(sh(*box, "echo x > " + priv + "/wiki/page.md").exit_code, 0);
  EXPECT_EQ(kd::read_file(priv + "/wiki/page.md"), "PAGE\n");
  // The box's user still cannot reach it on the host: the binds came from root's fds.
  kd::test::BatteryHost nobody(true);
  auto o = nobody.run({"/bin/cat", priv + "/wiki/page.md"});
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("Permission denied"), std::string::npos) << o.err;
}

TEST_F(BoxTest, AWorktreeDeepInAPrivateTmpfsHasReadOnlyParents) {
  // /tmp is a private tmpfs inside: a worktree under it gets its parents made there, and they
  // must refuse writes as the root's do, not take them into the tmpfs.
  std::string tmpl = "/tmp/kd-parents-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  struct Cleanup {
    std::string dir;
    ~Cleanup() { fs::remove_all(dir); }
  } cleanup{tmpl};
  ASSERT_EQ(chmod(tmpl.c_str(), 0755), 0);
  const std::string wt = tmpl + "/wiki/fam/wt";
  fs::create_directories(wt);
  if (kd::test::running_as_root()) {
    ASSERT_EQ(chown(wt.c_str(), 65534, 65534), 0);
  }
  BoxSpec s = spec_;
  s.worktree = wt;
  s.ro = {};
  s.mask = {};
  auto box = Box::open(s);
  EXPECT_EQ(sh(*box, "echo in > made && cat made").out, "in\n");
  RunResult page = sh(*box, "echo verdict >> ../page.md");
  EXPECT_NE(page.exit_code, 0);
  EXPECT_NE(page.err.find("Read-only file system"), std::string::npos) << page.err;
  RunResult beside = sh(*box, "mkdir " + tmpl + "/other");
  EXPECT_NE(beside.exit_code, 0);
  EXPECT_NE(beside.err.find("Read-only file system"), std::string::npos) << beside.err;
  // The rest of /tmp is still the box's scratch.
  EXPECT_EQ(sh(*box, "echo s > /tmp/scratch && cat /tmp/scratch").out, "s\n");
  box.reset();
  EXPECT_EQ(kd::read_file(wt + "/made"), "in\n");
  EXPECT_FALSE(fs::exists(tmpl + "/wiki/fam/page.md"));
  EXPECT_FALSE(fs::exists(tmpl + "/other"));
  EXPECT_FALSE(fs::exists("/tmp/scratch"));
}

TEST_F(BoxTest, ChipDevicesAndEnvOnlyForChipCalls) {
  if (!kd::test::running_as_root()) GTEST_SKIP() << "stand-in device nodes need root to mknod";
  const std::string dev = host_->root() + "/accel0";
  ASSERT_EQ(mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  chmod(dev.c_str(), 0666);
  spec_.chip =
      contract::Chip{"0", "tpu", host_->root() + "/lock", {{"TPU_VISIBLE_DEVICES", "0"}}, {dev}};
  auto box = Box::open(spec_);
  const std::string script = "test -c " + dev + " && echo dev; echo ${TPU_VISIBLE_DEVICES:-none}";
  EXPECT_EQ(sh(*box, script).out, "none\n");
  RunRequest chip;
  chip.use_chip = true;
  EXPECT_EQ(sh(*box, script + "; echo x > " + dev + " && echo wrote", chip).out, "dev\n0\nwrote\n");
  EXPECT_EQ(sh(*box, script).out, "none\n");  // the view does not stick
}

TEST_F(BoxTest, ClosingTheBoxKillsEverythingInside) {
  auto box = Box::open(spec_);
  const pid_t init = box->init_pid();
  ASSERT_GT(init, 0);
  EXPECT_EQ(kill(init, 0), 0);
  std::string in_flight;
  std::thread t([&] { in_flight = error_of([&] { sh(*box, "sleep 100"); }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  RunResult quick = sh(*box, "echo still");
  EXPECT_EQ(quick.out, "still\n");
  // A command in flight ends with the box.
  kill(init, SIGKILL);
  t.join();
  EXPECT_EQ(in_flight, "box: the box's pid 1 died before reporting the command's status");
  box.reset();
  EXPECT_NE(kill(init, 0), 0);
}

TEST_F(BoxTest, DeclaredPathsAreCheckedBeforeAnythingRuns) {
  BoxSpec s = spec_;
  s.ro = {host_->wt() + "/missing.py"};
  EXPECT_NE(error_of([&] { Box::open(s); }).find("read-only path"), std::string::npos);
  fs::create_symlink("/etc", host_->wt() + "/ok/etc-link");
  s.ro = {host_->wt() + "/ok/etc-link"};
  EXPECT_NE(error_of([&] { Box::open(s); }).find("is a symbolic link"), std::string::npos);
  s = spec_;
  s.mask = {"relative/secret"};
  EXPECT_NE(error_of([&] { Box::open(s); }).find("must be an absolute path"), std::string::npos);
  s = spec_;
  s.worktree = host_->root() + "/nope";
  EXPECT_NE(error_of([&] { Box::open(s); }).find("worktree"), std::string::npos);
  if (kd::test::running_as_root()) {
    s = spec_;
    s.worktree = host_->outside();  // owned by root
    EXPECT_NE(error_of([&] { Box::open(s); }).find("owned by root"), std::string::npos);
  }
}

// The reference's parent can neither be renamed away inside the box (the bind would move with it
// and leave the path to the author) nor replaced by a link outside it before a later box (the
// bind would land on a file of a root-only directory): the bind stays where the host reads it.
TEST_F(BoxTest, TheReferenceStaysWhereTheHostBindsIt) {
  const std::string wt = host_->wt();
  fs::create_directories(wt + "/pkg/sub");
  kd::write_file_atomic(wt + "/pkg/sub/ref.py", "REFERENCE\n");
  struct stat owner;
  ASSERT_EQ(::stat(wt.c_str(), &owner), 0);
  for (const char* p : {"/pkg", "/pkg/sub", "/pkg/sub/ref.py"})
    ASSERT_EQ(::lchown((wt + p).c_str(), owner.st_uid, owner.st_gid), 0);
  BoxSpec s = spec_;
  s.ro.push_back(wt + "/pkg/sub/ref.py");
  {
    auto box = Box::open(s);
    RunResult r = sh(*box,
                     "mv pkg moved; echo mv=$?; mv pkg/sub pkg/moved; echo mv2=$?; "
                     "python3 -c 'import os; os.rename(\"pkg\", \"moved2\")' 2>&1 | tail -1; "
                     "echo fake > pkg/sub/ref.py; cat pkg/sub/ref.py");
    EXPECT_NE(r.out.find("mv=1"), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.out.find("mv2=1"), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.out.find("Device or resource busy"), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.out.find("REFERENCE"), std::string::npos) << r.out << r.err;
  }
  EXPECT_EQ(kd::read_file(wt + "/pkg/sub/ref.py"), "REFERENCE\n");
  EXPECT_FALSE(fs::exists(wt + "/moved"));

  // As a crashed author could leave it: the parent renamed and replaced by a link to a directory
  // only root may read. The next box refuses to start instead of binding that directory's file.
  const std::string priv = host_->root() + "/private";
  fs::create_directories(priv + "/sub");
  ::chmod(priv.c_str(), 0700);
  kd::write_file_atomic(priv + "/sub/ref.py", "ROOT ONLY\n");
  fs::rename(wt + "/pkg", wt + "/pkg-moved");
  fs::create_symlink(priv, wt + "/pkg");
  const std::string err = error_of([&] { Box::open(s); });
  EXPECT_NE(err.find("RESOLVE_NO_SYMLINKS"), std::string::npos) << err;
  EXPECT_NE(err.find("ELOOP"), std::string::npos) << err;
  // A link deeper down is refused the same way, and so is a no-peek path reached through one.
  fs::remove(wt + "/pkg");
  fs::create_directories(wt + "/pkg");
  fs::create_symlink(priv + "/sub", wt + "/pkg/sub");
  EXPECT_NE(error_of([&] { Box::open(s); }).find("ELOOP"), std::string::npos);
  s = spec_;
  s.mask = {wt + "/pkg/sub/ref.py"};
  EXPECT_NE(error_of([&] { Box::open(s); }).find("ELOOP"), std::string::npos);
}

// The same as an unprivileged user, where the sources are opened in the box's own mount
// namespace instead of by root before it drops: the parent is pinned, and a parent swapped for a
// link refuses the box.
TEST(BoxAsNobody, TheReferenceStaysWhereTheHostBindsIt) {
  kd::test::BatteryHost nobody(true);
  const std::string wt = nobody.wt();
  fs::create_directories(wt + "/pkg");
  kd::write_file_atomic(wt + "/pkg/ref.py", "REFERENCE\n");
  struct stat owner;
  ASSERT_EQ(::stat(wt.c_str(), &owner), 0);
  for (const char* p : {"/pkg", "/pkg/ref.py"})
    ASSERT_EQ(::lchown((wt + p).c_str(), owner.st_uid, owner.st_gid), 0);
  const std::vector<std::string> exec = {KD_BINARY, "sandbox",          "exec",   "--worktree", wt,
                                         "--ro",    wt + "/pkg/ref.py", "--json", "--"};
  auto argv = exec;
  argv.insert(argv.end(), {"/bin/sh", "-c", "mv pkg moved; echo mv=$?; cat pkg/ref.py"});
  auto o = nobody.run(argv);
  ASSERT_TRUE(o.result.is_object()) << o.err;
  EXPECT_EQ(o.lines, (std::vector<std::string>{"mv=1", "REFERENCE"})) << o.result.dump(2);
  EXPECT_NE(o.result["stderr"].get<std::string>().find("Device or resource busy"),
            std::string::npos)
      << o.result.dump(2);
  fs::rename(wt + "/pkg", wt + "/pkg-moved");
  fs::create_symlink(nobody.outside(), wt + "/pkg");
  kd::write_file_atomic(nobody.outside() + "/ref.py", "OUTSIDE REF\n");
  argv = exec;
  argv.insert(argv.end(), {"/bin/cat", wt + "/pkg/ref.py"});
  auto refused = nobody.run(argv);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE((refused.err + refused.result.dump()).find("ELOOP"), std::string::npos)
      << refused.err << refused.result.dump();
  EXPECT_EQ((refused.err + refused.result.dump()).find("OUTSIDE REF"), std::string::npos);
}

TEST_F(BoxTest, AMissingRequiredLayerRefusesToRun) {
  // As nobody no cgroup can be made here: a profile that requires one must refuse, naming it.
  kd::test::BatteryHost nobody(true);
  auto p = nlohmann::json::parse(
      kd::read_file(std::string(KD_SOURCE_DIR) + "/policies/sandbox/author.json"));
  p["cgroup"] = "required";
  const std::string file = nobody.root() + "/needs-cgroup.json";
  std::ofstream(file) << p.dump();
  auto o = nobody.run({KD_BINARY, "sandbox", "exec", "--worktree", nobody.wt(), "--profile", file,
                       "--", "/bin/true"});
  if (kd::test::running_as_root() && o.exit_code == 0)
    GTEST_SKIP() << "this host lets nobody make cgroups";
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("kdispatch sandbox: refused: cgroup: mkdir"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace kd::sandbox

namespace kd::sandbox {
namespace {

TEST(SandboxCli, PassesTheCommandsOutputAndStatusThrough) {
  kd::test::BatteryHost host(!kd::test::running_as_root());
  auto o = host.run({KD_BINARY, "sandbox", "exec", "--worktree", host.wt(), "--", "/bin/sh", "-c",
                     "echo out; echo err >&2; exit 7"});
  EXPECT_EQ(o.exit_code, 7);
  EXPECT_TRUE(o.lines.empty());  // not --json
  EXPECT_EQ(o.err, "err\n");
  auto sig = host.run({KD_BINARY, "sandbox", "exec", "--worktree", host.wt(), "--", "/bin/sh", "-c",
                       "kill -KILL $$"});
  EXPECT_EQ(sig.exit_code, 128 + SIGKILL);
  auto usage = host.run({KD_BINARY, "sandbox", "exec", "--worktree", host.wt(), "/bin/true"});
  EXPECT_EQ(usage.exit_code, 64);
  EXPECT_NE(usage.err.find("the command goes after --"), std::string::npos) << usage.err;
  auto refused = host.run(
      {KD_BINARY, "sandbox", "exec", "--worktree", host.root() + "/absent", "--", "/bin/true"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("kdispatch sandbox: refused: worktree"), std::string::npos)
      << refused.err;
  auto profile = host.run({KD_BINARY, "sandbox", "exec", "--worktree", host.wt(), "--profile",
                           "nosuch", "--", "/bin/true"});
  EXPECT_EQ(profile.exit_code, 2);
  EXPECT_NE(profile.err.find("not a known profile"), std::string::npos) << profile.err;
}

}  // namespace
}  // namespace kd::sandbox
