#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "common/time.h"
#include "dispatcher/campaign_state.h"

namespace kd::cli {

// kdispatch status [--run-root DIR]: one line per experiment of every campaign under the root.
int cmd_status(const Args& args) {
  ParsedArgs p = parse_args(args, {{"run-root"}});
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  std::filesystem::path root = p.get("run-root", "run-root");
  if (!std::filesystem::is_directory(root))
    throw UsageError("run root " + quote(root.string()) + " is not a directory");
  std::vector<std::filesystem::path> journals;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (std::filesystem::is_regular_file(entry.path() / "journal.jsonl"))
      journals.push_back(entry.path() / "journal.jsonl");
  }
  std::sort(journals.begin(), journals.end());
  if (journals.empty()) {
    std::printf("no campaigns under %s\n", root.c_str());
    return kExitOk;
  }
  std::string now = utc_now_rfc3339();
  for (const auto& path : journals) {
    auto states = dispatcher::fold_journal(dispatcher::Journal::read(path));
    size_t done = 0;
    for (const auto& s : states)
      done += s.done();
    std::printf("campaign %s: %zu experiments, %zu done\n", path.parent_path().filename().c_str(),
                states.size(), done);
    for (const auto& s : states)
      std::printf("  %s\n", dispatcher::status_line(s, now).c_str());
  }
  return kExitOk;
}

}  // namespace kd::cli
