// The report of a generated campaign (bench_report_gen): wall time to read the run root and
// write every page, the summary page's size, the whole report's size, and peak RSS.
//   bench_report RUN_ROOT OUT
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "common/files.h"
#include "report/html.h"
#include "report/transcript_view.h"
#include "report/write.h"

namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Where one thread's time goes, page by page: reading and verifying the transcript, rendering
// the page, writing it.
void phases(const char* root, const char* out) {
  kd::report::Report r = kd::report::load_report(root, false);
  double read = 0, render = 0, write = 0;
  for (auto& c : r.campaigns) {
    for (auto& e : c.experiments) {
      auto t = std::chrono::steady_clock::now();
      kd::report::TranscriptView v =
          kd::report::read_transcript(e.run_dir / "author" / "transcript.jsonl");
      read += since(t);
      t = std::chrono::steady_clock::now();
      std::string page = kd::report::render_experiment(r, c, e, v, nullptr);
      render += since(t);
      t = std::chrono::steady_clock::now();
      kd::write_file_replace(std::filesystem::path(out) / e.page, page);
      write += since(t);
    }
  }
  std::printf("one thread: read+verify %.2f s, render %.2f s, write %.2f s\n", read, render, write);
}

}  // namespace

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
  phases(argv[1], argv[2]);
  return 0;
}
