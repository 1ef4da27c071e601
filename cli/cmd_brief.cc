#include <cstdio>

#include "briefs/brief.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "common/files.h"

namespace kd::cli {

// kdispatch brief --wiki DIR --family SLUG --experiment vNNN [--chips FILE] [--json] [--out FILE]
// Prints the author brief (markdown, or JSON with --json), or every reason it is refused (exit 2).
int cmd_brief(const Args& args) {
  ParsedArgs p =
      parse_args(args, {{"wiki"}, {"family"}, {"experiment"}, {"chips"}, {"json", false}, {"out"}});
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  briefs::BriefRequest req;
  req.wiki = p.required("wiki");
  req.family = p.required("family");
  req.experiment = p.required("experiment");
  check_family(req.family);
  check_experiment(req.experiment);
  if (p.has("chips")) req.chips = p.get("chips");
  bool json = p.has("json");

  briefs::BriefOutcome outcome = briefs::build_brief(req);
  if (!outcome.brief) {
    std::string text = json ? briefs::problems_json(outcome.problems).dump(2) + "\n"
                            : briefs::render_problems(outcome.problems);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitRefused;
  }
  std::string text = json ? outcome.brief->json().dump(2) + "\n" : outcome.brief->markdown();
  if (p.has("out")) {
    write_file_atomic(p.get("out"), text);
    std::fprintf(stderr, "brief %s written to %s\n", outcome.brief->sha256().c_str(),
                 p.get("out").c_str());
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return kExitOk;
}

}  // namespace kd::cli
