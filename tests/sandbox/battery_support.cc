#include "tests/sandbox/battery_support.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/files.h"
#include "common/sha256.h"

namespace kd::test {
namespace {

namespace fs = std::filesystem;
constexpr uid_t kNobody = 65534;

void put(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string slurp_fd(int fd) {
  std::string out;
  char buf[65536];
  ::lseek(fd, 0, SEEK_SET);
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0)
    out.append(buf, size_t(n));
  return out;
}

}  // namespace

bool running_as_root() {
  return ::geteuid() == 0;
}

// Where the planted worktrees live. Inside a box /tmp, /var/tmp, /run and /dev/shm are private
// tmpfs mounts, so the host files planted beside a worktree below one of them would not be
// visible inside at all, and the rows that try to change them would prove nothing: keep the
// scratch root outside them, whichever folder the build tree sits in.
std::string scratch_root() {
  std::string build = KD_TEST_SCRATCH;
  for (const char* tmpfs : {"/tmp/", "/var/tmp/", "/run/", "/dev/shm/"}) {
    if ((build + "/").rfind(tmpfs, 0) == 0) {
      std::string alt = "/var/lib/kdispatch-tests";
      fs::create_directories(alt);
      ::chmod(alt.c_str(), 0755);
      return alt;
    }
  }
  return build;
}

BatteryHost::BatteryHost(bool as_nobody) : nobody_(as_nobody) {
  std::string tmpl = scratch_root() + "/battery-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  root_ = tmpl;
  token_ = fs::path(root_).filename().string();
  ::chmod(root_.c_str(), 0755);
  fs::create_directories(wt() + "/ok");
  fs::create_directories(wt() + "/.git/hooks");
  fs::create_directories(wt() + "/nopeek");
  fs::create_directories(outside());
  put(wt() + "/ref.py", "REFERENCE\n");
  put(wt() + "/.git/config", "[core]\n");
  put(wt() + "/secret.txt", "SECRET\n");
  put(wt() + "/nopeek/answer.txt", "ANSWER\n");
  put(wt() + "/ok/existing", "EXISTING\n");
  put(outside() + "/file.txt", "OUTSIDE\n");
  if (running_as_root()) {
    // Root's box runs as the worktree's owner; the nobody variant needs it writable too.
    for (const auto& e : fs::recursive_directory_iterator(wt()))
      ::lchown(e.path().c_str(), kNobody, kNobody);
    ::chown(wt().c_str(), kNobody, kNobody);
  }
}

BatteryHost::~BatteryHost() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::string BatteryHost::fingerprint() const {
  std::ostringstream all;
  std::vector<fs::path> roots = {outside(),        wt() + "/ref.py",
                                 wt() + "/.git",   wt() + "/secret.txt",
                                 wt() + "/nopeek", wt() + "/ok/existing"};
  for (const auto& r : roots) {
    std::vector<fs::path> paths = {r};
    if (fs::is_directory(fs::symlink_status(r))) {
      for (const auto& e : fs::recursive_directory_iterator(r))
        paths.push_back(e.path());
    }
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      struct stat st {};
      if (::lstat(p.c_str(), &st) != 0) {
        all << p.string() << " missing\n";
        continue;
      }
      all << p.string() << " " << st.st_mode << " " << st.st_uid << " " << st.st_size << " "
          << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec;
      if (S_ISREG(st.st_mode)) all << " " << kd::sha256_hex(kd::read_file(p));
      all << "\n";
    }
  }
  for (const char* dir : {"/etc", "/var/tmp", "/tmp", "/"}) {
    all << dir << " escape marker " << fs::exists(std::string(dir) + "/kd-escape-" + token_)
        << "\n";
  }
  all << root_ << " stray " << fs::exists(root_ + "/x") << "\n";
  return kd::sha256_hex(all.str());
}

BoxOutcome BatteryHost::run(const std::vector<std::string>& argv) const {
  char out_tmpl[] = "/tmp/kd-battery-out-XXXXXX";
  char err_tmpl[] = "/tmp/kd-battery-err-XXXXXX";
  int out = ::mkstemp(out_tmpl), err = ::mkstemp(err_tmpl);
  ::unlink(out_tmpl);
  ::unlink(err_tmpl);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (nobody_ && running_as_root()) {
      if (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
          ::setresuid(kNobody, kNobody, kNobody) != 0) {
        ::_exit(99);
      }
    }
    std::vector<char*> a;
    for (const auto& s : argv)
      a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    std::string policy = std::string("KDISPATCH_POLICY_DIR=") + KD_SOURCE_DIR + "/policies";
    std::string key = "ANTHROPIC_API_KEY=sk-ant-must-not-leak-" + token_;
    char* env[] = {policy.data(), key.data(), const_cast<char*>("PATH=/usr/bin:/bin"),
                   const_cast<char*>("TERM=xterm"), nullptr};
    ::execve(a[0], a.data(), env);
    ::_exit(98);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  BoxOutcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  const std::string text = slurp_fd(out);
  o.err = slurp_fd(err);
  ::close(out);
  ::close(err);
  o.result = nlohmann::json::parse(text, nullptr, false);
  if (o.result.is_object() && o.result.contains("stdout")) {
    std::istringstream lines(o.result["stdout"].get<std::string>());
    for (std::string l; std::getline(lines, l);)
      o.lines.push_back(l);
  }
  return o;
}

BoxOutcome BatteryHost::probe(const std::vector<std::string>& probe_args,
                              const std::vector<std::string>& flags) const {
  std::vector<std::string> argv = {KD_BINARY,
                                   "sandbox",
                                   "exec",
                                   "--worktree",
                                   wt(),
                                   "--ro",
                                   wt() + "/ref.py",
                                   "--ro",
                                   wt() + "/.git",
                                   "--ro",
                                   KD_PROBE,
                                   "--mask",
                                   wt() + "/secret.txt",
                                   "--mask",
                                   wt() + "/nopeek",
                                   "--json"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.push_back(KD_PROBE);
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());
  return run(argv);
}

}  // namespace kd::test
