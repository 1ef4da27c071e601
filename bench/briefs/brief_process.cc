// Whole-process cost of `kdispatch brief`: runs the real binary N times and reports the median
// and p90 wall time, the median CPU time and the peak RSS (wait4 rusage), next to two floors:
// `kdispatch help` (exec of the same binary) and `/bin/true` (the machine's fork/exec). Usage:
//   bench_brief_process KDISPATCH WIKI FAMILY EXPERIMENT [RUNS]
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Sample {
  double wall_ms;
  double cpu_ms;  // user + system
  long peak_kb;
};

// Runs argv once with stdout to /dev/null; nullopt-like negative wall on failure.
Sample run_once(std::vector<char*>& argv) {
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(70);
  }
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) < 0) {
    std::perror("wait4");
    std::exit(70);
  }
  auto t1 = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s %s failed (status %d)\n", argv[0], argv[1], status);
    std::exit(70);
  }
  auto ms = [](const timeval& tv) { return tv.tv_sec * 1e3 + tv.tv_usec / 1e3; };
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(),
          ms(ru.ru_utime) + ms(ru.ru_stime), ru.ru_maxrss};
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

double median(std::vector<double> v) {
  return percentile(std::move(v), 0.5);
}

void report(const char* what, const std::vector<Sample>& s) {
  std::vector<double> wall, cpu;
  long peak = 0;
  for (const auto& x : s) {
    wall.push_back(x.wall_ms);
    cpu.push_back(x.cpu_ms);
    peak = std::max(peak, x.peak_kb);
  }
  std::printf(
      "%-16s %3zu runs: median wall %7.2f ms (min %7.2f, p90 %7.2f), median cpu %6.2f ms, "
      "peak RSS %5.1f MB\n",
      what, s.size(), median(wall), *std::min_element(wall.begin(), wall.end()),
      percentile(wall, 0.9), median(cpu), peak / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: bench_brief_process KDISPATCH WIKI FAMILY EXPERIMENT [RUNS]\n");
    return 64;
  }
  int runs = argc > 5 ? std::atoi(argv[5]) : 50;
  std::vector<std::string> brief = {argv[1],    "brief", "--wiki",       argv[2],
                                    "--family", argv[3], "--experiment", argv[4]};
  std::vector<std::string> help = {argv[1], "help"};
  std::vector<std::string> floor = {"/bin/true"};
  auto cargs = [](std::vector<std::string>& v) {
    std::vector<char*> out;
    for (auto& a : v)
      out.push_back(a.data());
    out.push_back(nullptr);
    return out;
  };
  std::vector<char*> brief_argv = cargs(brief), help_argv = cargs(help), floor_argv = cargs(floor);
  // Interleaved, so machine load affects every series alike.
  std::vector<Sample> b, h, t;
  for (int i = 0; i < runs; ++i) {
    b.push_back(run_once(brief_argv));
    h.push_back(run_once(help_argv));
    t.push_back(run_once(floor_argv));
  }
  report("kdispatch brief", b);
  report("kdispatch help", h);  // kdispatch's own floor: exec, loading, exit
  report("/bin/true", t);       // the machine's floor: fork, exec, exit
  std::vector<double> wall;
  long peak = 0;
  for (const auto& x : b) {
    wall.push_back(x.wall_ms);
    peak = std::max(peak, x.peak_kb);
  }
  bool ok = median(wall) < 20.0 && peak < 50 * 1024;
  std::printf("bounds (median < 20 ms, peak RSS < 50 MB): %s\n", ok ? "met" : "NOT met");
  return 0;
}
