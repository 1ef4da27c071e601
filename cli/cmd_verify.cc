#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "common/exit_codes.h"
#include "dispatcher/preflight.h"
#include "dispatcher/verify_run.h"

namespace kd::cli {

// kdispatch verify --run DIR [--chip ID] [--chips FILE] [--mode screen|full]
//                  [--verify-cmd TEMPLATE] [--tool-dir DIR]... [--file] [--json] [MODEL]
// MODEL runs the optional LLM verifier on the receipt.
// Exit 0 for a verdict the receipt carries (supported, refuted), 2 for invalid or inconclusive.
int cmd_verify(const Args& args) {
  std::vector<OptSpec> specs = {{"run"},         {"chip"},       {"chips"},
                                {"mode"},        {"verify-cmd"}, {"tool-dir", true, true},
                                {"file", false}, {"json", false}};
  for (auto& s : model_option_specs())
    specs.push_back(s);
  ParsedArgs p = parse_args(args, specs);
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  dispatcher::VerifyOptions o;
  o.run_dir = p.required("run");
  if (p.has("chip")) o.chip = p.get("chip");
  if (p.has("chips")) o.chips = p.get("chips");
  o.mode = p.get("mode", "full");
  if (o.mode != "screen" && o.mode != "full") throw UsageError("--mode is screen or full");
  if (p.has("verify-cmd")) o.verify_cmd = p.get("verify-cmd");
  for (const auto& d : p.all("tool-dir"))
    o.tool_dirs.emplace_back(d);
  o.file = p.has("file");
  if (p.has("provider")) o.verifier_model = model_config(p);

  dispatcher::PreflightInput pre;
  pre.run_dir = o.run_dir;
  pre.chips = o.chips;
  pre.verify = true;
  pre.verify_cmd = o.verify_cmd;
  pre.tool_dirs = o.tool_dirs;
  pre.model = o.verifier_model;
  pre.budgets.max_cost_usd = 0;  // the LLM verifier has no cost budget of its own
  if (auto checked = dispatcher::preflight(pre); !checked.ok())
    throw dispatcher::PreflightFailed(checked);

  dispatcher::VerifyReport r = dispatcher::run_verify(o);
  if (p.has("json")) {
    std::printf("%s\n", r.outcome.dump(2).c_str());
  } else {
    std::printf("%s: %s%s\n", r.experiment.c_str(),
                std::string(contract::to_string(r.verdict)).c_str(),
                r.reused ? " (recorded earlier; nothing ran again)" : "");
    for (const auto& reason : r.reasons)
      std::printf("  - %s\n", reason.c_str());
    std::printf("outcome %s\n", r.outcome_path.c_str());
    if (o.file) std::printf("filed into the wiki\n");
  }
  return r.verdict == contract::Verdict::Supported || r.verdict == contract::Verdict::Refuted
             ? kExitOk
             : kExitRefused;
}

}  // namespace kd::cli
