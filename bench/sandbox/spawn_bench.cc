// Sandbox spawn costs, side by side in one run (interleaved rounds, so machine noise hits every
// variant alike): a fresh sandbox (exec_once) vs bubblewrap with equivalent isolation vs the
// kernel's floor for that isolation, and a command inside an open box vs a bare fork/exec.
// Prints medians and ratios.
//   bench_sandbox_spawn WORKTREE [ROUNDS [BALLAST_MB]]
// (as root the worktree must belong to a non-root user). BALLAST_MB of touched heap make this
// process as large as a dispatcher in a campaign, for what a fork of the caller would copy.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/sandbox/kernel_floor.h"
#include "sandbox/box.h"

namespace {

using Clock = std::chrono::steady_clock;

int run_argv(const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> a;
    for (const auto& s : argv)
      a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Variant {
  const char* name;
  std::function<int()> run;
  std::vector<double> ms;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s WORKTREE [ROUNDS]\n", argv[0]);
    return 64;
  }
  const std::string wt = argv[1];
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 50;
  const size_t ballast_mb = argc > 3 ? size_t(std::atol(argv[3])) : 0;
  const std::vector<char> ballast(ballast_mb << 20, 1);  // every page written
  kd::sandbox::BoxSpec spec;
  spec.worktree = wt;
  spec.profile = kd::sandbox::load_profile("author");
  kd::sandbox::RunRequest req;
  req.argv = {"/bin/true"};
  auto box = kd::sandbox::Box::open(spec);
  const std::vector<std::string> bwrap = {"bwrap",      "--ro-bind",     "/",
                                          "/",          "--dev",         "/dev",
                                          "--proc",     "/proc",         "--tmpfs",
                                          "/tmp",       "--bind",        wt,
                                          wt,           "--unshare-all", "--die-with-parent",
                                          "--cap-drop", "ALL",           "true"};
  const kd::sandbox::BoxUser user = kd::sandbox::box_user(wt);  // the floor's too
  std::vector<Variant> variants = {
      {"fresh sandbox (exec_once)",
       [&] { return kd::sandbox::exec_once(spec, req).exit_code; },
       {}},
      {"bubblewrap (equivalent isolation)", [&] { return run_argv(bwrap); }, {}},
      {"command in an open box (Box::run)", [&] { return box->run(req).exit_code; }, {}},
      {"bare fork/exec /bin/true", [&] { return run_argv({"/bin/true"}); }, {}},
      {"kernel floor (namespaces + tree)",
       [&] { return kernel_floor(wt, user.uid, user.gid); },
       {}},
  };
  // ONLY=N times variant N alone (0-4), for profiling one path.
  if (const char* only = std::getenv("ONLY")) {
    Variant v = variants.at(size_t(std::atoi(only)));
    variants = {v};
  }
  for (int i = 0; i < rounds + 3; ++i) {
    for (auto& v : variants) {
      const auto t0 = Clock::now();
      const int rc = v.run();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (rc != 0) {
        std::fprintf(stderr, "%s: exit %d\n", v.name, rc);
        return 1;
      }
      if (i >= 3) v.ms.push_back(ms);  // three warm-up rounds
    }
  }
  std::printf("rounds: %d (interleaved), ballast %zu MB\n%-36s %10s %10s %10s\n", rounds,
              ballast.size() >> 20, "variant", "median ms", "min ms", "max ms");
  for (const auto& v : variants) {
    std::printf("%-36s %10.3f %10.3f %10.3f\n", v.name, median(v.ms),
                *std::min_element(v.ms.begin(), v.ms.end()),
                *std::max_element(v.ms.begin(), v.ms.end()));
  }
  if (variants.size() == 1) return 0;
  const double fresh = median(variants[0].ms), bw = median(variants[1].ms),
               inbox = median(variants[2].ms), bare = median(variants[3].ms),
               kernel = median(variants[4].ms);
  std::printf("fresh sandbox / bubblewrap: %.2fx (target <= 0.5x)\n", fresh / bw);
  std::printf("kernel floor / bubblewrap: %.2fx; fresh sandbox - kernel floor: %.2f ms\n",
              kernel / bw, fresh - kernel);
  std::printf("in-box command / bare fork+exec: %.2fx (target <= 1.5x)\n", inbox / bare);
  return 0;
}
