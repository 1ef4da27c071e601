#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "audit/auditor.h"
#include "audit/report.h"
#include "audit/run_dirs.h"
#include "audit/wiki_context.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "common/errors.h"
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
  const bool wiki_flags = p.has("wiki") || p.has("family") || p.has("experiment");
  if (wiki_flags) {
    check_family(p.required("family"));
    check_experiment(p.required("experiment"));
    ctx = audit::context_from_wiki(p.required("wiki"), p.required("family"),
                                   p.required("experiment"));
  }
  // Explicit flags win over what the wiki or a run gives.
  auto apply_flags = [&](audit::AuditContext& c) {
    if (p.has("worktree"))
      c.worktree = std::filesystem::absolute(p.get("worktree")).lexically_normal().string();
    if (p.has("reference")) c.references = p.all("reference");
    if (p.has("no-peek")) c.no_peek = p.all("no-peek");
    if (p.has("plan")) c.plan = p.all("plan");
    if (p.has("bar")) {
      char* end = nullptr;
      std::string bar = p.get("bar");
      double v = std::strtod(bar.c_str(), &end);
      if (bar.empty() || *end != '\0' || !(v > 0))
        throw UsageError("--bar must be a positive number, got \"" + bar + "\"");
      c.bar = v;
    }
    if (p.has("stub-committed")) {
      c.stub_committed = p.get("stub-committed");
      if (!parse_rfc3339(c.stub_committed))
        throw UsageError("--stub-committed must be an RFC 3339 time, got \"" + c.stub_committed +
                         "\"");
    }
    if (p.has("repo")) c.repository = p.get("repo");
    if (p.has("branch")) c.branch = p.get("branch");
    if (p.has("receipts")) c.receipt_dirs = p.all("receipts");
  };
  apply_flags(ctx);
  audit::AuditPolicy policy = audit::load_audit_policy(
      p.has("policy") ? std::filesystem::path(p.get("policy")) : policy_file("audit.json"));
  // Runs of `kdispatch run` (a run directory, a campaign, a run root) are audited one by one,
  // each with the context its run.json names unless the flags give one, and their transcripts'
  // heads checked against what the dispatcher recorded; other inputs together, as given.
  std::vector<std::filesystem::path> inputs;
  audit::AuditReport report;
  size_t runs = 0;
  for (const auto& arg : p.positional) {
    const std::filesystem::path in(arg);
    if (!std::filesystem::exists(in))
      throw InputError("audit input " + quote(arg) + " does not exist");
    std::vector<std::filesystem::path> found = audit::experiment_runs(in);
    if (found.empty()) {
      inputs.push_back(in);
      continue;
    }
    for (const auto& run : found) {
      ++runs;
      audit::AuditContext run_ctx = ctx;
      std::string why;
      if (!wiki_flags) {
        if (auto c = audit::context_from_run(run, why)) {
          run_ctx = *c;
          apply_flags(run_ctx);
        } else {
          report.not_checked.emplace("wiki-context", run.string() + ": " + why);
        }
      }
      audit::merge_report(report, audit::run_audit({run}, run_ctx, policy));
      for (auto& f : audit::transcript_head_findings(run))
        report.findings.push_back(std::move(f));
    }
  }
  if (!inputs.empty()) audit::merge_report(report, audit::run_audit(inputs, ctx, policy));
  if (runs > 1 && !p.has("json")) std::printf("audited %zu experiment runs\n", runs);
  std::string out = p.has("json") ? audit::render_json(report) : audit::render_text(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return audit::audit_exit_status(report);
}

}  // namespace kd::cli
