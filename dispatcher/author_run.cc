#include "dispatcher/author_run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "agents/roles.h"
#include "agents/session_runner.h"
#include "agents/tools.h"
#include "briefs/brief.h"
#include "briefs/load_mandate.h"
#include "common/agent_file.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/policy_path.h"
#include "common/sha256.h"
#include "contract/run_record.h"
#include "contract/wiki_layout.h"
#include "dispatcher/author_tools.h"
#include "dispatcher/campaign_state.h"
#include "dispatcher/experiment_error.h"
#include "dispatcher/file_supervisor.h"
#include "dispatcher/journal.h"
#include "git/reader.h"
#include "sandbox/box.h"
#include "sandbox/box_user.h"
#include "sandbox/env_scrub.h"
#include "sandbox/profile.h"

namespace kd::dispatcher {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// no_peek globs name paths of the home repository, so they match paths in the worktree.
std::vector<fs::path> expand_no_peek(const fs::path& worktree, const std::string& home_repo,
                                     std::vector<std::string> globs) {
  std::vector<fs::path> out;
  if (globs.empty()) return out;
  // A glob written from the wiki root names the shared checkout; the worktree holds the same tree.
  const std::string prefix = home_repo + "/";
  for (auto& g : globs) {
    if (g.rfind(prefix, 0) == 0) g = g.substr(prefix.size());
  }
  for (auto it = fs::recursive_directory_iterator(worktree);
       it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = fs::relative(it->path(), worktree).string();
    if (rel == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    for (const auto& g : globs) {
      if (path_glob_match(g, rel)) {
        out.push_back(it->path());
        if (it->is_directory()) it.disable_recursion_pending();
        break;
      }
    }
  }
  return out;
}

// The reference is bound read-only where the branch has it. A tree where that path no longer
// holds the committed reference (a parent renamed and remade by an earlier author, a link on the
// way) gets no box: it is read beneath the worktree without following anything.
std::optional<std::string> reference_problem(const fs::path& home_repo,
                                             const git::WorktreeSetup& wt,
                                             const std::string& reference) {
  const std::optional<std::string> committed = git::file_at(home_repo, wt.base_commit, reference);
  std::string present;
  try {
    present = read_agent_file(wt.worktree, reference, git::kMaxCommittedFileBytes);
  } catch (const Error& e) {
    return "the reference " + quote(reference) +
           " is not a plain file in the worktree: " + e.what();
  }
  if (!committed || present != *committed)
    return "the worktree's " + quote(reference) + " is not the reference " + wt.base_commit +
           " commits";
  return std::nullopt;
}

// author/tree.json: what the session left in the worktree that its branch does not commit and a
// path could be redirected or hung by (links, special files, moved directories, a reference no
// longer the committed one). The audit reads it: renames and links planted from inside a
// program leave no trace in the commands' text.
void survey_tree(const fs::path& run_dir, const git::WorktreeSetup& wt,
                 const std::string& reference, const fs::path& home_repo) {
  json found = json::array();
  try {
    for (auto& f : git::survey_worktree(wt.worktree, wt.gitdir))
      found.push_back(std::move(f));
    if (auto problem = reference_problem(home_repo, wt, reference)) found.push_back(*problem);
  } catch (const Error& e) {
    found.push_back(e.what());
  }
  write_file_atomic(
      run_dir / "author/tree.json",
      json{{"worktree", wt.worktree.string()}, {"branch", wt.branch}, {"findings", found}}.dump(2) +
          "\n");
}

std::string policy_digest(const std::string& rel) {
  return sha256_file_hex(policy_file(rel));
}

std::string first_message(const briefs::Brief& b, const fs::path& wiki, const fs::path& worktree,
                          const fs::path& artifact_dir, const std::vector<fs::path>& tool_dirs) {
  std::string m = "Author the candidates of " + b.family + " " + b.experiment +
                  " now, following your brief.\n\n";
  m += "- Your work dir is " + worktree.string() + " (the tools take paths relative to it).\n";
  m +=
      "- Save every receipt of your author-side measurements under " + artifact_dir.string() +
      " ($KD_ARTIFACT_DIR in commands) and cite them in the ledger's receipt column by their path\n"
      "  relative to the wiki: " +
      fs::relative(artifact_dir, wiki).string() + "/<name>.json\n";
  for (const auto& d : tool_dirs)
    m += "- Tools you may run are in " + d.string() + " (read-only).\n";
  m += "- Commit each candidate that ran on the chip with the commit tool before writing the next "
       "one.\n";
  m += "- End with the finish tool and the full output contract.\n";
  return m;
}

}  // namespace

AuthorReport run_author(const AuthorOptions& o) {
  AuthorReport report;
  briefs::BriefOutcome outcome =
      briefs::build_brief({o.wiki, o.family, o.experiment, o.chips, std::nullopt});
  if (!outcome.brief) {
    report.refused = true;
    report.refusal = briefs::render_problems(outcome.problems);
    return report;
  }
  const briefs::Brief& brief = *outcome.brief;
  const briefs::Binding& bind = brief.binding;
  contract::Chip chip = brief.chip;
  const contract::ChipInventory inventory = contract::load_chip_inventory_or_default(o.chips);
  std::unique_ptr<ChipBackend> own_backend;
  ChipBackend* backend = o.chip_backend;
  if (!backend) backend = (own_backend = make_chip_backend(inventory)).get();
  if (o.chip) {
    const auto& inv = inventory;
    const contract::Chip* c = inv.find(*o.chip);
    if (!c) throw Error("chip " + *o.chip + " is not in the inventory " + inv.source.string());
    chip = *c;
  }

  const contract::ExperimentId id{o.family, o.experiment};
  fs::path wiki = fs::absolute(o.wiki);
  fs::path campaign = fs::absolute(contract::campaign_dir(o.run_root, bind.campaign_tag));
  report.run_dir = campaign / id.run_name();
  fs::create_directories(report.run_dir / "author");
  write_file_atomic(report.run_dir / "brief.md", brief.markdown());
  write_file_atomic(report.run_dir / "brief.json", brief.json().dump(2) + "\n");
  JournalSet own_journals;
  Journal& journal = (o.journals ? o.journals : &own_journals)->at(campaign);
  const std::string key = id.key();
  std::optional<JournalRecord> dispatched;
  if (o.resume) {
    for (const auto& r : journal.records()) {
      if (r.experiment == key && r.type == rec::kDispatched) dispatched = r;
    }
    if (!dispatched) throw Error("nothing to resume: the journal has no dispatch of " + key);
  }
  if (o.retry_after_error && fs::exists(report.run_dir / "author/transcript.jsonl")) {
    // The failed attempt stays as evidence; its spending is in the journal already.
    int n = 1;
    while (fs::exists(report.run_dir / ("author.error-" + std::to_string(n))))
      ++n;
    fs::path aside = report.run_dir / ("author.error-" + std::to_string(n));
    std::error_code ec;
    fs::rename(report.run_dir / "author", aside, ec);
    if (ec)
      throw_sys("rename",
                quote((report.run_dir / "author").string()) + " -> " + quote(aside.string()),
                ec.value());
    fs::create_directories(report.run_dir / "author");
  }

  git::WorktreeRequest ref{wiki / brief.home_repo, wiki / brief.worktree, o.family,
                           bind.integration_branch,
                           [&](int n) { return id.branch(bind.campaign_tag, n); }};
  git::WorktreeSetup wt = git::prepare_worktree(
      ref, dispatched ? std::optional(dispatched->data.value("branch", "")) : std::nullopt);
  if (dispatched) wt.base_commit = dispatched->data.value("base_commit", wt.base_commit);
  report.branch = wt.branch;
  fs::path artifact_dir = wiki / id.artifact_dir(bind.campaign_tag, contract::Role::Author);
  fs::create_directories(artifact_dir);
  sandbox::hand_to_box_user(wt.worktree);
  sandbox::hand_to_box_user(artifact_dir);
  if (!dispatched)
    journal.append(rec::kDispatched, key,
                   {{"branch", wt.branch},
                    {"base_commit", wt.base_commit},
                    {"worktree", wt.worktree.string()},
                    {"gitdir", wt.gitdir.string()},
                    {"chip", chip.id},
                    {"run_dir", report.run_dir.string()},
                    {"brief_sha256", brief.sha256()},
                    {"notes", wt.notes}});

  if (auto problem = reference_problem(ref.home_repo, wt, bind.reference))
    throw Error("refusing to start the author's box: " + *problem);
  sandbox::BoxSpec spec;
  spec.profile = sandbox::load_profile("author");
  spec.worktree = wt.worktree;
  spec.ro = {wt.worktree / bind.reference, wt.worktree / ".git"};
  for (const auto& d : o.tool_dirs)
    spec.ro.push_back(fs::absolute(d));
  spec.rw_extra = {artifact_dir};
  spec.mask = expand_no_peek(wt.worktree, brief.home_repo, bind.no_peek);
  // Under Slurm the session's box on this host has no chip: chip work runs on a node, in a box
  // opened there from the same spec.
  if (!backend->is_slurm()) spec.chip = chip;
  std::unique_ptr<sandbox::Box> box = sandbox::Box::open(spec);

  // One supervisor per session: a prefix approved lasts the session.
  std::unique_ptr<Supervisor> supervising;
  if (o.supervise_dir)
    supervising = std::make_unique<FileSupervisor>(*o.supervise_dir, key);
  else if (o.supervise)
    supervising = std::make_unique<TerminalSupervisor>(STDIN_FILENO, STDOUT_FILENO);
  Supervisor* supervisor = supervising.get();
  AuthorToolConfig tc;
  tc.box = box.get();
  tc.chip = chip;
  tc.chips = backend;
  tc.spec = spec;
  tc.run_dir = report.run_dir;
  tc.record = [&journal, key](const char* type, json data) {
    journal.append(type, key, std::move(data));
  };
  tc.worktree = wt.worktree;
  tc.gitdir = wt.gitdir;
  tc.branch = wt.branch;
  tc.family = o.family;
  tc.experiment = o.experiment;
  tc.supervisor = supervisor;
  tc.env["KD_ARTIFACT_DIR"] = artifact_dir.string();
  tc.env.merge(sandbox::tool_env(o.tool_dirs));
  if (dispatched) {
    tc.existing_commits = git::branch_commits(ref.home_repo, wt.branch, wt.base_commit);
    for (const auto& s : fold_journal(journal.records())) {
      if (s.experiment != key) continue;
      for (const auto& [job_id, j] : s.jobs)
        if (j.value("purpose", "") == "run_on_chip" && !j.contains("finished"))
          tc.jobs_in_flight.push_back(j);
    }
  }
  tc.on_commit = [&](const git::CommitInfo& c, const std::string& candidate) {
    journal.append(rec::kCommitted, key,
                   {{"candidate", candidate}, {"sha", c.sha}, {"message", c.message}});
  };
  AuthorToolHost host(tc);

  std::vector<std::string> plan_ids;
  for (const auto& item : brief.stub.plan)
    plan_ids.push_back(item.id);
  agents::SessionConfig sc;
  sc.session_id = o.family + "-" + o.experiment + "-author";
  sc.role = "author";
  sc.system_prompt = agents::author_system_prompt(brief.markdown(), plan_ids);
  sc.first_user_message = first_message(brief, wiki, wt.worktree, artifact_dir, o.tool_dirs);
  sc.tools = agents::author_tools();
  sc.budgets = o.budgets;
  sc.transcript_dir = report.run_dir / "author";
  std::vector<std::string> references = {(wt.worktree / bind.reference).string()};
  sc.header = {
      {"family", o.family},
      {"experiment", o.experiment},
      {"brief_sha256", brief.sha256()},
      {"policies",
       {{"sandbox/author.json", policy_digest("sandbox/author.json")},
        {"providers.json", policy_digest("providers.json")},
        {"load-mandate.json", policy_digest("load-mandate.json")}}},
      {"model",
       {{"provider", o.model.provider}, {"name", o.model.model}, {"base_url", o.model.base_url}}},
      {"chip", chip.id},
      {"worktree", wt.worktree.string()},
      {"branch", wt.branch},
      {"reference", references},
      {"no_peek", bind.no_peek},
      {"artifact_dir", artifact_dir.string()}};
  sc.finish.plan_ids = plan_ids;
  sc.finish.compliance_required = brief.stub.activity == "capability-eval" || !bind.no_peek.empty();
  sc.finish.commit_exists = [&host](const std::string& sha) {
    for (const auto& c : host.commits()) {
      if (c.sha == sha) return true;
    }
    return false;
  };
  // A citation names a file of this author's artifact dir, resolved only beneath it: any other
  // path, even one that exists, is refused without being looked at (no probe of host paths).
  sc.finish.receipt_exists =
      [artifact_dir, artifact_rel = fs::relative(artifact_dir, wiki)](const std::string& path) {
        const fs::path p = fs::path(path).lexically_normal();
        const fs::path rel = p.lexically_relative(p.is_absolute() ? artifact_dir : artifact_rel);
        if (rel.empty() || *rel.begin() == ".." || *rel.begin() == ".") return false;
        return agent_regular_file(artifact_dir, rel);
      };
  if (supervisor) {
    sc.on_text = [supervisor](std::string_view text) { supervisor->show(text); };
    sc.on_turn_start = [supervisor](int turn) { supervisor->turn(turn); };
  }
  sc.resume = dispatched.has_value();
  // Each complete turn is journalled as it happens: a resume knows what was paid for.
  sc.on_turn = [&](const agents::SessionResult& so_far) {
    journal.append(rec::kAuthorTurn, key,
                   {{"turn", so_far.turns},
                    {"input_tokens", so_far.input_tokens},
                    {"output_tokens", so_far.output_tokens},
                    {"cost_usd", so_far.cost_usd},
                    {"transcript_head", so_far.transcript_head}});
  };

  report.session = run_session_blocking(sc, host, o.model);
  report.commits = host.commits();
  // What the author left in the tree is looked at once nothing of the box runs any more.
  box.reset();
  survey_tree(report.run_dir, wt, bind.reference, ref.home_repo);

  if (report.session.finish)
    write_file_atomic(report.run_dir / "author/finish.json", report.session.finish->dump(2) + "\n");
  contract::RunRecord run{wiki,
                          o.family,
                          o.experiment,
                          wt.branch,
                          wt.worktree,
                          wt.gitdir,
                          wiki / brief.home_repo,
                          bind.integration_branch,
                          wt.base_commit,
                          chip.id,
                          o.chips ? o.chips->string() : "",
                          brief.sha256(),
                          report.session.transcript_head,
                          to_string(report.session.end_reason)};
  run.save(report.run_dir);
  if (const auto& failure = report.session.provider_failure) {
    const contract::ErrorCause cause = error_cause(failure->kind);
    const std::string message = provider_failure_message(*failure);
    journal.append(rec::kError, key,
                   {{"cause", contract::to_string(cause)},
                    {"message", message},
                    {"phase", "author"},
                    {"provider_failure", agents::to_string(failure->kind)},
                    {"end_reason", to_string(report.session.end_reason)},
                    {"transcript_head", report.session.transcript_head}});
    throw ExperimentError(cause, key + ": " + message);
  }
  json final_sha = report.session.finish
                       ? report.session.finish->value("/final_candidate/sha"_json_pointer, "")
                       : "";
  journal.append(rec::kFinished, key,
                 {{"end_reason", to_string(report.session.end_reason)},
                  {"final_sha", final_sha},
                  {"transcript_head", report.session.transcript_head}});
  return report;
}

}  // namespace kd::dispatcher
