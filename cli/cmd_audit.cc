#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "audit/auditor.h"
#include "audit/report.h"
#include "audit/wiki_context.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "common/policy_path.h"
#include "common/time.h"

namespace kd::cli {

// kdispatch audit PATH... : findings in the three-line form (or --json); exit 0 clean,
// 1 only DRIFT/HYGIENE, 2 any VIOLATION or FABRICATION.
int cmd_audit(const Args& args) {
  ParsedArgs p = parse_args(args, {{"worktree"},
                                   {"reference", true, true},
                                   {"no-peek", true, true},
                                   {"plan", true, true},
                                   {"bar"},
                                   {"stub-committed"},
                                   {"repo"},
                                   {"branch"},
                                   {"receipts", true, true},
                                   {"policy"},
                                   {"wiki"},
                                   {"family"},
                                   {"experiment"},
                                   {"json", false}});
  if (p.positional.empty())
    throw UsageError("expected at least one PATH (transcript, run directory or folder)");
  // The binding and stub give the context; explicit flags override what they give.
  audit::AuditContext ctx;
  if (p.has("wiki") || p.has("family") || p.has("experiment")) {
    ctx = audit::context_from_wiki(p.required("wiki"), p.required("family"),
                                   p.required("experiment"));
  }
  if (p.has("worktree"))
    ctx.worktree = std::filesystem::absolute(p.get("worktree")).lexically_normal().string();
  if (p.has("reference")) ctx.references = p.all("reference");
  if (p.has("no-peek")) ctx.no_peek = p.all("no-peek");
  if (p.has("plan")) ctx.plan = p.all("plan");
  if (p.has("bar")) {
    char* end = nullptr;
    std::string bar = p.get("bar");
    double v = std::strtod(bar.c_str(), &end);
    if (bar.empty() || *end != '\0' || !(v > 0))
      throw UsageError("--bar must be a positive number, got \"" + bar + "\"");
    ctx.bar = v;
  }
  if (p.has("stub-committed")) {
    ctx.stub_committed = p.get("stub-committed");
    if (!parse_rfc3339(ctx.stub_committed))
      throw UsageError("--stub-committed must be an RFC 3339 time, got \"" + ctx.stub_committed +
                       "\"");
  }
  if (p.has("repo")) ctx.repository = p.get("repo");
  if (p.has("branch")) ctx.branch = p.get("branch");
  if (p.has("receipts")) ctx.receipt_dirs = p.all("receipts");
  audit::AuditPolicy policy = audit::load_audit_policy(
      p.has("policy") ? std::filesystem::path(p.get("policy")) : policy_file("audit.json"));
  std::vector<std::filesystem::path> inputs(p.positional.begin(), p.positional.end());
  audit::AuditReport report = audit::run_audit(inputs, ctx, policy);
  std::string out = p.has("json") ? audit::render_json(report) : audit::render_text(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return audit::audit_exit_status(report);
}

}  // namespace kd::cli
