#include <cstdio>
#include <filesystem>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "report/write.h"

namespace kd::cli {

// kdispatch report --run-root R [--out DIR]: the HTML report of every campaign under R, written
// to DIR (default R/report); prints where the index is.
int cmd_report(const Args& args) {
  ParsedArgs p = parse_args(args, {{"run-root"}, {"out"}});
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  std::filesystem::path root = p.required("run-root");
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec))
    throw UsageError("run root " + quote(root.string()) + " is not a directory");
  report::Report r = report::load_report(root);
  std::filesystem::path out =
      p.has("out") ? std::filesystem::path(p.get("out")) : r.root / "report";
  report::WriteStats s = report::write_report(r, out);
  std::printf("report: %s (%zu campaigns, %zu experiments)\n",
              std::filesystem::absolute(s.index).c_str(), r.campaigns.size(), s.pages);
  return kExitOk;
}

}  // namespace kd::cli
