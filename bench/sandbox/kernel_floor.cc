#include "bench/sandbox/kernel_floor.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

// Inside the child nothing is reported but the failing step: the exit code tells the benchmark
// the floor did not run, so a broken floor is never timed as a fast one.
[[noreturn]] void fail(const char* step) {
  std::perror(step);
  _exit(99);
}

void check(long rc, const char* step) {
  if (rc < 0) fail(step);
}

bool write_file(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size());
  close(fd);
  return ok;
}

void make_dir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) < 0 && errno != EEXIST) fail(path.c_str());
}

void tmpfs(const std::string& at, const char* options, unsigned long flags) {
  make_dir(at);
  check(mount("tmpfs", at.c_str(), "tmpfs", flags, options), at.c_str());
}

void bind(const std::string& from, const std::string& at, bool read_only) {
  check(mount(from.c_str(), at.c_str(), nullptr, MS_BIND | MS_REC, nullptr), at.c_str());
  const unsigned long ro = read_only ? MS_RDONLY : 0;
  check(mount(nullptr, at.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | ro,
              nullptr),
        at.c_str());
}

// Pid 1 of the new namespaces: the tree, loopback, pivot, then the command as its child.
[[noreturn]] void pid1(int go, const std::string& worktree) {
  char c;
  if (read(go, &c, 1) != 1) fail("wait for the id maps");
  check(setresgid(0, 0, 0), "setresgid");
  check(setresuid(0, 0, 0), "setresuid");
  check(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), "make / private");
  // Opened in this mount namespace (a mount of the caller's cannot be bound here) and before
  // the new root covers /tmp, where the worktree may lie.
  const int worktree_fd = open(worktree.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  check(worktree_fd, worktree.c_str());
  const std::string root = "/tmp";  // the new root
  tmpfs(root, "size=16m,mode=755", MS_NOSUID | MS_NODEV);
  for (const char* dir : {"/usr", "/etc", "/opt"}) {
    make_dir(root + dir);
    bind(dir, root + dir, true);
  }
  for (const char* link : {"bin", "sbin", "lib", "lib32", "lib64"}) {  // Debian's merged /usr
    check(symlink((std::string("usr/") + link).c_str(), (root + "/" + link).c_str()), link);
  }
  tmpfs(root + "/tmp", "size=1g,mode=1777", MS_NOSUID | MS_NODEV);
  tmpfs(root + "/run", "size=16m,mode=755", MS_NOSUID | MS_NODEV);
  tmpfs(root + "/dev", "size=1m,mode=755", MS_NOSUID | MS_NOEXEC);
  tmpfs(root + "/dev/shm", "size=256m,mode=1777", MS_NOSUID | MS_NODEV);
  for (const char* dev : {"null", "zero", "full", "random", "urandom", "tty"}) {
    const std::string at = root + "/dev/" + dev;
    check(close(open(at.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), at.c_str());
    check(mount((std::string("/dev/") + dev).c_str(), at.c_str(), nullptr, MS_BIND, nullptr),
          at.c_str());
  }
  make_dir(root + "/proc");
  check(mount("proc", (root + "/proc").c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr),
        "proc");
  std::string at = root;  // the worktree at its own path inside, its parents made first
  for (size_t slash = 1; slash != std::string::npos; slash = worktree.find('/', slash + 1)) {
    at = root + worktree.substr(0, worktree.find('/', slash + 1));
    make_dir(at);
  }
  bind("/proc/self/fd/" + std::to_string(worktree_fd), at, false);
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  check(s, "socket");
  ifreq ifr{};
  std::strcpy(ifr.ifr_name, "lo");
  ifr.ifr_flags = IFF_UP | IFF_RUNNING;
  check(ioctl(s, SIOCSIFFLAGS, &ifr), "lo up");
  close(s);
  check(chdir(root.c_str()), "chdir new root");
  check(syscall(SYS_pivot_root, ".", "."), "pivot_root");
  check(umount2(".", MNT_DETACH), "detach old root");
  check(chdir("/"), "chdir /");
  check(mount(nullptr, "/", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
              nullptr),
        "/ read-only");
  const pid_t command = fork();
  check(command, "fork the command");
  if (command == 0) {
    char name[] = "true";
    char* args[] = {name, nullptr};
    char* env[] = {nullptr};
    execve("/bin/true", args, env);
    _exit(127);
  }
  int status = 0;
  check(waitpid(command, &status, 0), "waitpid");
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

}  // namespace

int kernel_floor(const std::string& worktree, uid_t uid, gid_t gid) {
  int go[2];
  if (pipe2(go, O_CLOEXEC) < 0) return 98;
  clone_args args{};
  args.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
               CLONE_NEWUTS | CLONE_NEWCGROUP;
  args.exit_signal = SIGCHLD;
  const long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) std::perror("clone3");
  if (pid == 0) {
    close(go[1]);
    pid1(go[0], worktree);
  }
  close(go[0]);
  int rc = 98;
  if (pid > 0) {
    // One id each: root inside is the caller (as a user) or the worktree's owner (as root).
    const std::string proc = "/proc/" + std::to_string(pid);
    const bool mapped = write_file(proc + "/setgroups", "deny") &&
                        write_file(proc + "/uid_map", "0 " + std::to_string(uid) + " 1") &&
                        write_file(proc + "/gid_map", "0 " + std::to_string(gid) + " 1");
    if (!mapped) {
      std::perror(("id maps of " + proc).c_str());
      kill(pid_t(pid), SIGKILL);
    }
    const bool woken = mapped && write(go[1], "g", 1) == 1;
    close(go[1]);  // unwoken, pid 1 reads the end of the pipe and fails
    int status = 0;
    waitpid(pid_t(pid), &status, 0);
    if (woken) rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (!mapped) rc = 97;
  } else {
    close(go[1]);
  }
  return rc;
}
