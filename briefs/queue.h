// The campaign queue (docs/dispatcher.md, `kdispatch run`): every experiment page of the wiki whose
// status is in_progress, family by family, in experiment order.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kd::briefs {

struct QueuedExperiment {
  std::string family;      // slug
  std::string experiment;  // vNNN
  std::string page;        // wiki-relative
  std::string problem;     // the page could not be read; the run refuses this one, naming it
};

// Reads the pages' front matter as they are on disk; whether a page was committed is the brief's
// question, asked at dispatch. `families` limits the scan (all families when empty); a named
// family without a directory is an error naming it. A malformed page is queued with its problem
// rather than stopping the whole campaign.
std::vector<QueuedExperiment> in_progress_experiments(const std::filesystem::path& wiki,
                                                      const std::vector<std::string>& families);

}  // namespace kd::briefs
