// A misbehaving program for the escape battery (docs/sandbox.md): run inside a sandbox, it makes
// real attempts and prints one line per operation: "OK [detail]" or "ERR <ERRNO>".
//   sandbox_probe OP [ARG...] [\; OP [ARG...]]...
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Args = std::vector<std::string>;

int result(long r) {
  if (r < 0) {
    std::printf("ERR %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
  } else {
    std::printf("OK\n");
  }
  std::fflush(stdout);
  return 0;
}

long write_to(const std::string& path, int extra = 0) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | extra, 0644);
  if (fd < 0) return -1;
  long r = write(fd, "x", 1);
  close(fd);
  return r;
}

long connect_inet(int family, const std::string& host, int port, int type = SOCK_STREAM) {
  int s = socket(family, type, 0);
  if (s < 0) return -1;
  long r;
  if (family == AF_INET) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    inet_pton(AF_INET, host.c_str(), &a.sin_addr);
    r = type == SOCK_DGRAM ? sendto(s, "x", 1, 0, (sockaddr*)&a, sizeof a)
                           : connect(s, (sockaddr*)&a, sizeof a);
  } else {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(uint16_t(port));
    inet_pton(AF_INET6, host.c_str(), &a.sin6_addr);
    r = connect(s, (sockaddr*)&a, sizeof a);
  }
  int e = errno;
  close(s);
  errno = e;
  return r;
}

long connect_unix(const std::string& name, bool abstract) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  if (s < 0) return -1;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  size_t off = abstract ? 1 : 0;
  std::memcpy(a.sun_path + off, name.data(), std::min(name.size(), sizeof a.sun_path - 1 - off));
  long r =
      connect(s, (sockaddr*)&a, socklen_t(offsetof(sockaddr_un, sun_path) + off + name.size()));
  int e = errno;
  close(s);
  errno = e;
  return r;
}

// A pseudo-terminal pair in the box's own devpts; returns the replica's fd.
int open_pty() {
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) return -1;
  return open(ptsname(m), O_RDWR | O_NOCTTY);
}

int loopback() {
  int srv = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(srv, (sockaddr*)&a, len) != 0 || listen(srv, 1) != 0 ||
      getsockname(srv, (sockaddr*)&a, &len) != 0) {
    return result(-1);
  }
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(c, (sockaddr*)&a, len) != 0) return result(-1);
  int s = accept(srv, nullptr, nullptr);
  char buf[2] = {};
  if (write(c, "hi", 2) != 2 || read(s, buf, 2) != 2) return result(-1);
  std::printf("OK %.2s\n", buf);
  return 0;
}

int do_op(const Args& a) {
  const std::string& op = a[0];
  auto arg = [&](size_t i) { return i < a.size() ? a[i] : std::string(); };
  if (op == "write") return result(write_to(arg(1)));
  if (op == "read") {
    int fd = open(arg(1).c_str(), O_RDONLY);
    if (fd < 0) return result(-1);
    char buf[64] = {};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0) return result(-1);
    while (n > 0 && buf[n - 1] == '\n')
      buf[--n] = '\0';
    std::printf("OK %s\n", buf);
    return 0;
  }
  if (op == "list") {
    DIR* d = opendir(arg(1).c_str());
    if (!d) return result(-1);
    int n = 0;
    while (readdir(d))
      ++n;
    closedir(d);
    std::printf("OK %d\n", n);
    return 0;
  }
  if (op == "openat-write") {  // DIR REL
    int d = open(arg(1).c_str(), O_RDONLY | O_DIRECTORY);
    if (d < 0) return result(-1);
    int fd = openat(d, arg(2).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = errno;
    long r = fd < 0 ? -1 : write(fd, "x", 1);
    if (fd >= 0) close(fd);
    close(d);
    errno = e;
    return result(r);
  }
  if (op == "symlink-write") {  // TARGET LINK
    if (symlink(arg(1).c_str(), arg(2).c_str()) != 0) return result(-1);
    return result(write_to(arg(2)));
  }
  if (op == "link") return result(link(arg(1).c_str(), arg(2).c_str()));
  if (op == "rename") return result(rename(arg(1).c_str(), arg(2).c_str()));
  if (op == "unlink") return result(unlink(arg(1).c_str()));
  if (op == "rmdir") return result(rmdir(arg(1).c_str()));
  if (op == "truncate") return result(truncate(arg(1).c_str(), 0));
  if (op == "chmod") return result(chmod(arg(1).c_str(), 0777));
  if (op == "utime") return result(utimensat(AT_FDCWD, arg(1).c_str(), nullptr, 0));
  if (op == "setxattr") return result(setxattr(arg(1).c_str(), "user.kd", "x", 1, 0));
  if (op == "mknod") return result(mknod(arg(1).c_str(), S_IFCHR | 0666, makedev(1, 3)));
  if (op == "mkfifo") return result(mkfifo(arg(1).c_str(), 0644));
  if (op == "open-rw") {
    int fd = open(arg(1).c_str(), O_RDWR);
    if (fd >= 0) close(fd);
    return result(fd);
  }
  if (op == "remount-rw")
    return result(mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND, nullptr));
  if (op == "bind") return result(mount(arg(1).c_str(), arg(2).c_str(), nullptr, MS_BIND, nullptr));
  if (op == "umount") return result(umount2(arg(1).c_str(), MNT_DETACH));
  if (op == "unshare") return result(unshare(CLONE_NEWUSER | CLONE_NEWNS));
  if (op == "clone-newuser") {
    long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(pid_t(pid), nullptr, 0);
    return result(pid);
  }
  if (op == "clone3") {
    struct {
      uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    } args{};
    args.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(pid_t(pid), nullptr, 0);
    return result(pid);
  }
  if (op == "fsopen") return result(syscall(SYS_fsopen, "tmpfs", 0));
  if (op == "open_tree")
    return result(syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
  if (op == "chroot") return result(chroot("."));
  if (op == "pivot_root") return result(syscall(SYS_pivot_root, ".", "."));
  if (op == "setns") {
    int fd = open(arg(1).c_str(), O_RDONLY);
    if (fd < 0) return result(-1);
    long r = setns(fd, 0);
    int e = errno;
    close(fd);
    errno = e;
    return result(r);
  }
  if (op == "caps") {
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[2] = {};
    syscall(SYS_capget, &h, d);
    std::printf("OK eff=%x,%x prm=%x,%x nnp=%d\n", d[0].effective, d[1].effective, d[0].permitted,
                d[1].permitted, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    return 0;
  }
  if (op == "nosuid") {  // PATH of a setuid binary: is it honoured?
    struct stat st;
    struct statvfs vfs;
    if (stat(arg(1).c_str(), &st) != 0 || statvfs(arg(1).c_str(), &vfs) != 0) return result(-1);
    std::printf("OK setuid_bit=%d nosuid_mount=%d nnp=%d\n", (st.st_mode & S_ISUID) != 0,
                (vfs.f_flag & ST_NOSUID) != 0, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    return 0;
  }
  if (op == "name_to_handle") {
    char buf[sizeof(file_handle) + 128];
    auto* fh = reinterpret_cast<file_handle*>(buf);
    fh->handle_bytes = 128;
    int mount_id;
    return result(name_to_handle_at(AT_FDCWD, "/", fh, &mount_id, 0));
  }
  if (op == "open_by_handle") {
    char buf[sizeof(file_handle) + 8] = {};
    auto* fh = reinterpret_cast<file_handle*>(buf);
    fh->handle_bytes = 8;
    fh->handle_type = 1;
    return result(open_by_handle_at(AT_FDCWD, fh, O_RDONLY));
  }
  if (op == "ptrace")
    return result(ptrace(PTRACE_ATTACH, std::atoi(arg(1).c_str()), nullptr, nullptr));
  if (op == "process_vm_readv") {
    char local[8], remote[8] = {};
    iovec l{local, 8}, r{remote, 8};
    return result(process_vm_readv(getpid(), &l, 1, &r, 1, 0));
  }
  if (op == "kill-all") return result(kill(-1, SIGKILL));
  if (op == "tiocsti" || op == "tiocsti-high" || op == "tioclinux" || op == "tiocgwinsz") {
    int fd = open_pty();
    if (fd < 0) return result(-1);
    char c = 'x';
    winsize ws;
    if (op == "tiocsti") return result(ioctl(fd, TIOCSTI, &c));
    if (op == "tiocsti-high") return result(syscall(SYS_ioctl, fd, (0x123UL << 32) | TIOCSTI, &c));
    if (op == "tioclinux") return result(ioctl(fd, TIOCLINUX, &c));
    return result(ioctl(fd, TIOCGWINSZ, &ws));
  }
  if (op == "io_uring") {
    char params[120] = {};
    return result(syscall(SYS_io_uring_setup, 4, params));
  }
  if (op == "userfaultfd") return result(syscall(SYS_userfaultfd, 0));
  if (op == "bpf") {
    char attr[128] = {};
    return result(syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, attr, sizeof attr));
  }
  if (op == "perf") {
    char attr[128] = {};
    return result(syscall(SYS_perf_event_open, attr, 0, -1, -1, 0));
  }
  if (op == "keyctl") return result(syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3, 0));
  if (op == "add_key") return result(syscall(SYS_add_key, "user", "kd", "x", 1, -3));
  if (op == "personality")
    return result(syscall(SYS_personality, 0x0040000 /* ADDR_NO_RANDOMIZE */));
  if (op == "x32") return result(syscall(0x40000000 | SYS_getpid));
  if (op == "int80") {
    long r;
    asm volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");  // i386 getpid
    return result(r);
  }
  if (op == "seccomp-stack") {
    sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    sock_fprog prog{1, allow};
    return result(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog));
  }
  if (op == "tcp") return result(connect_inet(AF_INET, arg(1), std::atoi(arg(2).c_str())));
  if (op == "tcp6") return result(connect_inet(AF_INET6, arg(1), std::atoi(arg(2).c_str())));
  if (op == "udp")
    return result(connect_inet(AF_INET, arg(1), std::atoi(arg(2).c_str()), SOCK_DGRAM));
  if (op == "raw") return result(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
  if (op == "packet") return result(socket(AF_PACKET, SOCK_RAW, 0));
  if (op == "netlink") return result(socket(AF_NETLINK, SOCK_RAW, 0));
  if (op == "vsock") return result(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0));
  if (op == "unix") return result(connect_unix(arg(1), false));
  if (op == "abstract") return result(connect_unix(arg(1), true));
  if (op == "loopback") return loopback();
  if (op == "fds") {
    DIR* d = opendir("/proc/self/fd");
    std::string list;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.' || std::atoi(e->d_name) == dirfd(d)) continue;
      list += std::string(list.empty() ? "" : ",") + e->d_name;
    }
    std::printf("OK %s\n", list.c_str());
    return 0;
  }
  if (op == "fork-bomb") {
    int n = 0;
    for (;;) {
      pid_t p = fork();
      if (p == 0) {
        pause();
        _exit(0);
      }
      if (p < 0) break;
      ++n;
    }
    std::printf("OK forked=%d then %s\n", n, strerrorname_np(errno));
    return 0;
  }
  if (op == "mem-bomb") {  // MB
    size_t mb = std::strtoul(arg(1).c_str(), nullptr, 10);
    for (size_t i = 0; i < mb; ++i) {
      char* p = static_cast<char*>(malloc(1 << 20));
      if (!p) return result(-1);
      std::memset(p, 1, 1 << 20);
    }
    std::printf("OK allocated=%zu\n", mb);
    return 0;
  }
  if (op == "cpu-spin") {
    volatile unsigned long spins = 0;
    for (;;)
      spins = spins + 1;
  }
  if (op == "fill") {  // PATH MB
    int fd = open(arg(1).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return result(-1);
    std::vector<char> buf(1 << 20, 'z');
    for (long i = 0; i < std::atol(arg(2).c_str()); ++i) {
      if (write(fd, buf.data(), buf.size()) != ssize_t(buf.size())) return result(-1);
    }
    return result(close(fd));
  }
  if (op ==
      "daemon") {  // MARKER: setsid + double fork + SIGTERM ignored, then touch MARKER forever
    pid_t p = fork();
    if (p == 0) {
      setsid();
      if (fork() != 0) _exit(0);
      signal(SIGTERM, SIG_IGN);
      signal(SIGHUP, SIG_IGN);
      for (unsigned i = 0;; ++i) {
        int fd = open(arg(1).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
          dprintf(fd, "%u\n", i);
          close(fd);
        }
        usleep(50000);
      }
    }
    waitpid(p, nullptr, 0);
    std::printf("OK\n");
    std::fflush(stdout);
    if (arg(2) == "wait") pause();
    return 0;
  }
  if (op == "sleep") {
    signal(SIGTERM, SIG_IGN);
    sleep(unsigned(std::atoi(arg(1).c_str())));
    return result(0);
  }
  if (op == "fd-exhaust") {
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0)
      ++n;
    std::printf("OK opened=%d then %s\n", n, strerrorname_np(errno));
    return 0;
  }
  if (op == "flood") {  // MB to stdout
    std::vector<char> buf(1 << 20, 'f');
    for (long i = 0; i < std::atol(arg(1).c_str()); ++i)
      fwrite(buf.data(), 1, buf.size(), stdout);
    std::printf("\n");
    return 0;
  }
  if (op == "env") {
    for (char** e = environ; *e; ++e)
      std::printf("%s\n", *e);
    return 0;
  }
  if (op == "pids") {
    DIR* d = opendir("/proc");
    int n = 0;
    while (dirent* e = readdir(d))
      n += std::atoi(e->d_name) > 0;
    std::printf("OK %d\n", n);
    return 0;
  }
  std::printf("UNKNOWN %s\n", op.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args cur;
  int rc = 0;
  for (int i = 1; i <= argc; ++i) {
    if (i == argc || std::strcmp(argv[i], ";") == 0) {
      if (!cur.empty()) rc |= do_op(cur);
      cur.clear();
    } else {
      cur.push_back(argv[i]);
    }
  }
  return rc;
}
