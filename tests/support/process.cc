#include "tests/support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace kd::test {

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdin_text,
                          const std::map<std::string, std::string>& env) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    throw std::runtime_error("pipe2 failed");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);

  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (!env.count(kv.substr(0, kv.find('=')))) envs.push_back(kv);
  }
  for (const auto& [k, v] : env)
    envs.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : envs)
    cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    throw std::runtime_error("posix_spawnp(" + argv[0] + "): " + std::strerror(rc));
  }
  // Feed stdin and drain both outputs together so no pipe fills up.
  ProcessResult r;
  size_t written = 0;
  int wfd = in[1];
  if (stdin_text.empty()) {
    close(wfd);
    wfd = -1;
  }
  bool out_open = true, err_open = true;
  while (out_open || err_open || wfd >= 0) {
    pollfd fds[3] = {{out_open ? out[0] : -1, POLLIN, 0},
                     {err_open ? err[0] : -1, POLLIN, 0},
                     {wfd, POLLOUT, 0}};
    if (poll(fds, 3, -1) < 0 && errno != EINTR) break;
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else {
        (i == 0 ? out_open : err_open) = false;
      }
    }
    if (wfd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(wfd, stdin_text.data() + written, stdin_text.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 || written == stdin_text.size()) {
        close(wfd);
        wfd = -1;
      }
    }
  }
  close(out[0]);
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

ProcessResult run_kdispatch(const std::vector<std::string>& args, const std::string& stdin_text,
                            const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {KD_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, stdin_text, env);
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "kdtest.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::TempDir(const std::string& parent) {
  std::string tmpl = parent + "/kdtest.XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed under " + parent);
  path_ = tmpl;
}

std::string outside_box_tmpfs() {
  std::string build = KD_BINARY_DIR;
  for (const char* tmpfs : {"/tmp/", "/var/tmp/", "/run/", "/dev/shm/"}) {
    if ((build + "/").rfind(tmpfs, 0) == 0) {
      std::string alt = "/var/lib/kdispatch-tests";
      std::filesystem::create_directories(alt);
      return alt;
    }
  }
  std::filesystem::create_directories(build + "/test-scratch");
  return build + "/test-scratch";
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace kd::test
