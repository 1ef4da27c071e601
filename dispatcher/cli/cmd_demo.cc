#include <cstdio>
#include <filesystem>

#include "briefs/brief.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "common/files.h"
#include "dispatcher/cli/args.h"
#include "dispatcher/cli/commands.h"
#include "dispatcher/example_wiki.h"

namespace fs = std::filesystem;

namespace kd::cli {
namespace {

// Marks a run root as made by the demo, so a later demo may replace it and nothing else.
constexpr const char* kMarker = ".kdispatch-demo";

}  // namespace

// kdispatch demo [--run-root DIR]: materializes the example wiki and home repository into the run
// root and prints the brief of the example family. (Interim: the full author/verify loop lands
// with the dispatcher.)
int cmd_demo(const Args& args) {
  ParsedArgs p = parse_args(args, {{"run-root"}});
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  fs::path root = p.get("run-root", "run-root/demo");
  std::error_code ec;
  if (fs::exists(root, ec) && !fs::is_empty(root, ec)) {
    if (!fs::exists(root / kMarker)) {
      std::fprintf(
          stderr, "kdispatch demo: %s is not empty and not a previous demo; refusing to reuse it\n",
          root.c_str());
      return kExitRefused;
    }
    fs::remove_all(root, ec);
    if (ec) throw Error("remove_all(" + quote(root.string()) + "): " + ec.message());
  }
  fs::create_directories(root, ec);
  if (ec) throw Error("mkdir(" + quote(root.string()) + "): " + ec.message());
  write_file_atomic(root / kMarker, "made by kdispatch demo\n");
  auto ex = dispatcher::materialize_example(root / "wiki");
  std::fprintf(stderr, "example wiki at %s (commit %s)\n", ex.wiki.c_str(), ex.wiki_commit.c_str());

  briefs::BriefRequest req{
      ex.wiki, dispatcher::kExampleFamily, dispatcher::kExampleExperiment, {}, {}};
  briefs::BriefOutcome outcome = briefs::build_brief(req);
  if (!outcome.brief) {
    std::string text = briefs::render_problems(outcome.problems);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitRefused;
  }
  std::string md = outcome.brief->markdown();
  std::fwrite(md.data(), 1, md.size(), stdout);
  std::fprintf(stderr, "brief sha256 %s\n", outcome.brief->sha256().c_str());
  return kExitOk;
}

}  // namespace kd::cli
