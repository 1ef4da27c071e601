#include "dispatcher/campaign_report.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/files.h"
#include "common/time.h"
#include "report/write.h"

extern char** environ;

namespace kd::dispatcher {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string regenerate_report(const fs::path& run_root) {
  try {
    return report::generate_report(run_root, run_root / "report").index.string();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kdispatch run: warning: the report was not written: %s\n", e.what());
    return "";
  }
}

json outcome_event(const ExperimentResult& r) {
  const std::string outcome = contract::to_string(r.outcome);
  std::string event = r.outcome.is_verdict() ? "verdict" : outcome;
  for (char& c : event)
    if (c == ' ') c = '_';
  return {{"event", event},       {"experiment", r.experiment},    {"outcome", outcome},
          {"reasons", r.reasons}, {"run_dir", r.run_dir.string()}, {"ts", utc_now_rfc3339()}};
}

json campaign_end_event(const CampaignReport& r, const std::string& report_index) {
  json outcomes = json::object();
  for (const auto& e : r.experiments) {
    const std::string o = contract::to_string(e.outcome);
    outcomes[o] = outcomes.value(o, 0) + 1;
  }
  return {{"event", "campaign_end"}, {"experiments", r.experiments.size()},
          {"outcomes", outcomes},    {"stopped", r.stopped},
          {"wall_s", r.wall_s},      {"report", report_index},
          {"ts", utc_now_rfc3339()}};
}

void Notifier::send(const json& event) {
  if (argv_.empty()) return;
  std::lock_guard lock(mu_);
  const std::string what = "notify command " + argv_[0];
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "kdispatch run: warning: %s: pipe2: %s\n", what.c_str(),
                 std::strerror(errno));
    return;
  }
  std::vector<char*> argv;
  for (auto& a : argv_)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);  // its output is the user's, beside our warnings
  // The run blocks SIGINT and SIGTERM in every thread for its watcher; the command gets none.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  if (rc != 0) {
    ::close(in[1]);
    std::fprintf(stderr, "kdispatch run: warning: %s: posix_spawnp: %s\n", what.c_str(),
                 std::strerror(rc));
    return;
  }
  // A command that does not read its stdin gets EPIPE, not a SIGPIPE of ours.
  std::string body = event.dump() + "\n";
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  for (size_t off = 0; off < body.size();) {
    ssize_t n = ::write(in[1], body.data() + off, body.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(in[1]);
  timespec zero{0, 0};
  while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      std::fprintf(stderr, "kdispatch run: warning: %s killed after %.0f s\n", what.c_str(),
                   timeout_s_);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    std::fprintf(stderr, "kdispatch run: warning: %s failed (status %d) on %s\n", what.c_str(),
                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                 event.value("event", "").c_str());
}

}  // namespace kd::dispatcher
