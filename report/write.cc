#include "report/write.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "common/files.h"
#include "report/html.h"
#include "report/transcript_view.h"

namespace kd::report {

namespace fs = std::filesystem;

WriteStats write_report(Report& r, const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out / "experiments", ec);
  if (ec) throw Error("mkdir(" + quote((out / "experiments").string()) + "): " + ec.message());
  struct Job {
    const Campaign* c;
    ExperimentRow* e;  // each job updates its own row only
  };
  std::vector<Job> jobs;
  for (auto& c : r.campaigns)
    for (auto& e : c.experiments)
      jobs.push_back({&c, &e});

  // Pages are independent: a few threads render them (each reads its own transcript).
  std::atomic<size_t> next{0}, bytes{0};
  std::mutex mu;
  std::exception_ptr failure;
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      try {
        const Job& j = jobs[i];
        TranscriptView author;
        author.missing = true;
        if (!j.e->run_dir.empty())
          author = read_transcript(j.e->run_dir / "author" / "transcript.jsonl");
        apply_transcript(*j.e, author);
        fs::path vpath = j.e->run_dir / "verifier" / "transcript.jsonl";
        std::optional<TranscriptView> verifier;
        if (!j.e->run_dir.empty() && fs::exists(vpath)) verifier = read_transcript(vpath);
        std::string page =
            render_experiment(r, *j.c, *j.e, author, verifier ? &*verifier : nullptr);
        write_file_replace(out / j.e->page, page);
        bytes += page.size();
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const size_t n = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(n, jobs.size()); ++t)
    threads.emplace_back(work);
  work();
  for (auto& t : threads)
    t.join();
  if (failure) std::rethrow_exception(failure);
  for (auto& c : r.campaigns)
    finish_campaign(c);

  WriteStats s;
  std::string index = render_index(r);
  s.index = out / "index.html";
  write_file_atomic(s.index, index);
  s.pages = jobs.size();
  s.index_bytes = index.size();
  s.total_bytes = bytes + index.size();
  return s;
}

WriteStats generate_report(const fs::path& run_root, const fs::path& out) {
  Report r = load_report(run_root, false);
  return write_report(r, out.empty() ? r.root / "report" : out);
}

}  // namespace kd::report
