#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/errors.h"
#include "common/fd.h"

extern char** environ;

namespace kd {

namespace {

using Clock = std::chrono::steady_clock;

// The posix_spawn attributes and file actions, released on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    ::posix_spawnattr_destroy(&attr);
    ::posix_spawn_file_actions_destroy(&actions);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
};

std::vector<std::string> child_environment(const CommandOptions& o) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if (!o.env.count(name) && (!o.inherit_if || o.inherit_if(name))) out.push_back(std::move(kv));
  }
  for (const auto& [k, v] : o.env)
    out.push_back(k + "=" + v);
  return out;
}

void kill_and_reap(pid_t pid, int& status) {
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options) {
  if (argv.empty()) throw Error("run_command: empty command line");
  const std::string& program = argv[0];
  const auto deadline = Clock::now() + options.deadline;
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw_sys("pipe2", program, errno);
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw_sys("pipe2", program, errno);
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);

  SpawnSetup s;
  ::posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&s.actions, out_write.get(), 1);
  ::posix_spawn_file_actions_adddup2(&s.actions, err_write.get(), 2);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  ::posix_spawnattr_setsigmask(&s.attr, &none);
  ::posix_spawnattr_setsigdefault(&s.attr, &all);
  ::posix_spawnattr_setpgroup(&s.attr, 0);
  ::posix_spawnattr_setflags(
      &s.attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> env = child_environment(options);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env)
    cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  pid_t pid = -1;
  if (int rc =
          ::posix_spawnp(&pid, program.c_str(), &s.actions, &s.attr, cargv.data(), cenv.data()))
    throw_sys("posix_spawnp", program, rc);
  out_write.reset();
  err_write.reset();

  CommandResult r;
  int status = 0;
  struct Stream {
    UniqueFd* fd;
    std::string* text;
  } streams[2] = {{&out_read, &r.out}, {&err_read, &r.err}};
  // Non-blocking, so a stream poll did not report readable is skipped, not waited on.
  ::fcntl(out_read.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err_read.get(), F_SETFL, O_NONBLOCK);
  while (out_read || err_read) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    for (auto& st : streams)
      if (*st.fd) fds[n++] = {st.fd->get(), POLLIN, 0};
    int ready = ::poll(fds, n, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) {
      int e = errno;
      kill_and_reap(pid, status);
      throw_sys("poll", program, e);
    }
    for (auto& st : streams) {
      if (!*st.fd) continue;
      char buf[65536];
      ssize_t got = ::read(st.fd->get(), buf, sizeof buf);
      if (got > 0) {
        st.text->append(buf, static_cast<size_t>(got));
        if (st.text->size() > options.max_output) {
          kill_and_reap(pid, status);
          throw Error(program + ": printed more than " + std::to_string(options.max_output) +
                      " bytes");
        }
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        st.fd->reset();
      }
    }
  }
  if (r.timed_out) {
    kill_and_reap(pid, status);
  } else {
    // Both pipes closed: the program is exiting; its descendants may still hold none of them.
    for (;;) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) throw_sys("waitpid", program, errno);
      if (Clock::now() >= deadline) {
        r.timed_out = true;
        kill_and_reap(pid, status);
        break;
      }
      ::usleep(1000);
    }
  }
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

}  // namespace kd
