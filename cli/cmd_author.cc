#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "common/exit_codes.h"
#include "dispatcher/author_run.h"
#include "dispatcher/preflight.h"

namespace kd::cli {

// kdispatch author --wiki DIR --family SLUG --experiment vNNN [MODEL] [--chip ID] [--chips FILE]
//                  [--run-root DIR] [--supervise | --supervise-dir DIR] [--tool-dir DIR]...
//                  [--max-turns N] [--max-cost USD]
int cmd_author(const Args& args) {
  std::vector<OptSpec> specs = {{"wiki"},
                                {"family"},
                                {"experiment"},
                                {"chip"},
                                {"chips"},
                                {"run-root"},
                                {"supervise", false},
                                {"supervise-dir"},
                                {"tool-dir", true, true}};
  for (auto& s : model_option_specs())
    specs.push_back(s);
  ParsedArgs p = parse_args(args, specs);
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  dispatcher::AuthorOptions o;
  o.wiki = p.required("wiki");
  o.family = p.required("family");
  o.experiment = p.required("experiment");
  if (p.has("chips")) o.chips = p.get("chips");
  if (p.has("chip")) o.chip = p.get("chip");
  o.run_root = p.get("run-root", "run-root");
  o.model = model_config(p);
  o.budgets = session_budgets(p);
  o.supervise = p.has("supervise");
  if (p.has("supervise-dir")) o.supervise_dir = p.get("supervise-dir");
  if (o.supervise && o.supervise_dir)
    throw UsageError("--supervise (the terminal) and --supervise-dir (files) exclude each other");
  for (const auto& d : p.all("tool-dir"))
    o.tool_dirs.emplace_back(d);

  check_family(o.family);
  check_experiment(o.experiment);

  dispatcher::PreflightInput pre;
  pre.wiki = o.wiki;
  pre.experiment = {o.family, o.experiment};
  pre.chips = o.chips;
  pre.run_root = o.run_root;
  pre.model = o.model;
  pre.budgets = o.budgets;
  pre.author = true;
  pre.tool_dirs = o.tool_dirs;
  if (auto checked = dispatcher::preflight(pre); !checked.ok())
    throw dispatcher::PreflightFailed(checked);

  dispatcher::AuthorReport r = dispatcher::run_author(o);
  if (r.refused) {
    std::printf("%s", r.refusal.c_str());
    return kExitRefused;
  }
  std::printf("run %s\nbranch %s\n", r.run_dir.c_str(), r.branch.c_str());
  for (const auto& c : r.commits)
    std::printf("commit %s %s\n", c.sha.c_str(), c.message.substr(0, c.message.find('\n')).c_str());
  std::printf("ended: %s after %d turns, %d tool calls, %ld tokens, $%.4f\ntranscript head %s\n",
              to_string(r.session.end_reason).c_str(), r.session.turns, r.session.tool_calls,
              r.session.input_tokens + r.session.output_tokens, r.session.cost_usd,
              r.session.transcript_head.c_str());
  if (r.session.end_reason == contract::EndReason::stopped())
    std::printf("stopped by the supervising person: nothing goes to the verifier\n");
  return r.session.end_reason == contract::EndReason::finished() ? kExitOk : kExitRefused;
}

}  // namespace kd::cli
