// The demo (`kdispatch demo`): the whole loop on CPU with the embedded fake model, twice on the
// shipped example: an honest author and a cheating one. Each runs in its own copy of the example
// wiki: brief -> author in its box -> commits -> verifier on the other simulated chip -> receipt
// -> verdict -> audit (saved as the run's audit.json) -> the HTML report of both.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kd::examples {

struct DemoRow {
  std::string experiment;  // <slug>/vNNN
  std::string author;      // honest | cheating
  std::string verdict;
  std::string speedup;          // from the verifier's receipt, or "-"
  std::string receipt;          // wiki-relative, or "-"
  std::string transcript_head;  // the author transcript's chain head
  std::string audit;            // "clean" or "<n> findings (<v> violations)"
  int audit_violations = 0;
  std::vector<std::string> blocked;  // the author's tool calls the box or the loop refused
  std::filesystem::path run_dir;
  std::filesystem::path wiki;
};

// Whether `root` may hold a demo: absent, empty, or a previous demo's (marked).
bool demo_root_usable(const std::filesystem::path& root);

// `root` must be usable (above); a previous demo there is replaced. Throws kd::Error
// when something of the environment fails.
std::vector<DemoRow> run_demo(const std::filesystem::path& root);

// Writes the HTML report of the demo root (ROOT/report); returns its index.html.
std::filesystem::path write_demo_report(const std::filesystem::path& root);

// The table and where to look, as the demo prints it; columns are aligned by display width, so
// a "…" or a wide character takes the columns it shows in. `report` is the index to point at.
std::string render_demo(const std::vector<DemoRow>& rows, const std::filesystem::path& root,
                        const std::filesystem::path& report);

}  // namespace kd::examples
