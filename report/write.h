// Writes a report to a folder: OUT/index.html and OUT/experiments/<page>.html. Each file is
// replaced by a rename, so a browser never reads a torn page; the pages go first and the index
// last (durably), so an index never links to a page not yet written.
#pragma once

#include <filesystem>

#include "report/model.h"

namespace kd::report {

struct WriteStats {
  std::filesystem::path index;
  std::size_t pages = 0;
  std::size_t index_bytes = 0, total_bytes = 0;
};

// Renders and writes every page of `r` under `out` (created when absent). Each author
// transcript is read once, for its page, and its summary applied to `r` (apply_transcript)
// before the index is drawn. Throws kd::Error naming the file that could not be written.
WriteStats write_report(Report& r, const std::filesystem::path& out);

// load_report(run_root) (transcripts left to the pages) then write_report: the report of a run root
// in `out` (default RUN_ROOT/report).
WriteStats generate_report(const std::filesystem::path& run_root,
                           const std::filesystem::path& out = {});

}  // namespace kd::report
