// An experiment's pages as committed: the family binding and the stub, every defect named. The
// brief builds on this; the audit uses it for the candidate plan and the binding's reference and
// no-peek list.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "briefs/binding.h"
#include "briefs/page.h"
#include "briefs/problem.h"
#include "briefs/stub.h"
#include "briefs/wiki_repo.h"

namespace kd::briefs {

// Reads and parses committed pages; every defect becomes a Problem under the caller's item.
class PageReader {
 public:
  PageReader(const WikiRepo& repo, Problems& problems, std::vector<std::string>& warnings)
      : repo_(repo), problems_(problems), warnings_(warnings) {}

  // nullopt when missing, uncommitted, a symlink leaving the wiki, not a file or malformed.
  // `what` names the page's role in messages ("class page"). A page whose working-tree bytes
  // differ from the commit is used as committed, with a warning.
  std::optional<Page> page(const std::string& path, const std::string& item,
                           const std::string& what);

 private:
  const WikiRepo& repo_;
  Problems& problems_;
  std::vector<std::string>& warnings_;
};

// Appends a "request" problem for a family that is not a [a-z0-9-] slug or an experiment that is
// not vNNN; returns whether both are valid.
bool check_request(const std::string& family, const std::string& experiment, Problems& problems);

struct ExperimentPages {
  std::optional<Binding> binding;
  std::optional<Stub> stub;
};

// The binding and the stub of `family` / `experiment` ("v001"). The stub must be committed and
// unedited in the working tree. Stub fields are checked as for dispatch (status in_progress
// included); a caller reading a filed experiment ignores that problem.
ExperimentPages read_experiment(const WikiRepo& repo, const std::string& family,
                                const std::string& experiment, PageReader& reader,
                                Problems& problems);

struct Experiment {
  std::string wiki_commit;
  ExperimentPages pages;
  Problems problems;
  std::vector<std::string> warnings;
};

// Opens the wiki at HEAD and reads the experiment; a wiki that is not a git repository is a
// problem under "wiki".
Experiment load_experiment(const std::filesystem::path& wiki, const std::string& family,
                           const std::string& experiment);

}  // namespace kd::briefs
