// The report of a generated campaign (bench_report_gen): wall time to read the run root and
// write every page, the summary page's size, the whole report's size, and peak RSS.
//   bench_report RUN_ROOT OUT
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "report/write.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_report RUN_ROOT OUT\n");
    return 64;
  }
  auto t0 = std::chrono::steady_clock::now();
  kd::report::WriteStats s = kd::report::generate_report(argv[1], argv[2]);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  double cpu = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  std::printf(
      "report: %zu pages in %.2f s wall (%.2f s cpu), summary page %.0f KiB, whole report "
      "%.1f MiB, peak RSS %ld MiB\n",
      s.pages, wall, cpu, double(s.index_bytes) / 1024, double(s.total_bytes) / (1 << 20),
      u.ru_maxrss / 1024);
  return 0;
}
