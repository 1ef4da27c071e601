#include <cstdio>
#include <filesystem>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "examples/demo.h"

namespace kd::cli {

// kdispatch demo [--run-root DIR]: the whole loop on the example, an honest and a cheating
// author, and the table of what came out.
int cmd_demo(const Args& args) {
  ParsedArgs p = parse_args(args, {{"run-root"}});
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  std::filesystem::path root = p.get("run-root", "run-root/demo");
  if (!examples::demo_root_usable(root)) {
    std::fprintf(stderr,
                 "kdispatch demo: %s is not empty and not a previous demo; refusing to use it\n",
                 root.c_str());
    return kExitRefused;
  }
  std::fprintf(stderr,
               "kdispatch demo: the example rms-norm family, honest and cheating authors, in %s\n",
               root.c_str());
  std::vector<examples::DemoRow> rows = examples::run_demo(root);
  std::filesystem::path report = examples::write_demo_report(std::filesystem::absolute(root));
  std::string table = examples::render_demo(rows, std::filesystem::absolute(root), report);
  std::fwrite(table.data(), 1, table.size(), stdout);
  return kExitOk;
}

}  // namespace kd::cli
