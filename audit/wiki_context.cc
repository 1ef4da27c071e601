#include "audit/wiki_context.h"

#include <git2.h>

#include <ctime>

#include "briefs/experiment.h"
#include "common/errors.h"

namespace kd::audit {
namespace {

namespace fs = std::filesystem;

std::string rfc3339(git_time_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The committer time of the oldest first-parent commit from HEAD whose tree holds `rel`: when
// the page was pre-registered.
std::string introduced_at(const fs::path& repo_path, const std::string& rel) {
  git_libgit2_init();
  git_repository* repo = nullptr;
  if (git_repository_open(&repo, repo_path.c_str()) != 0)
    throw Error("git_repository_open(" + quote(repo_path.string()) + ") failed");
  git_revwalk* walk = nullptr;
  git_revwalk_new(&walk, repo);
  git_revwalk_simplify_first_parent(walk);
  git_revwalk_push_head(walk);
  std::string when;
  git_oid oid;
  while (git_revwalk_next(&oid, walk) == 0) {
    git_commit* c = nullptr;
    if (git_commit_lookup(&c, repo, &oid) != 0) break;
    git_tree* tree = nullptr;
    git_tree_entry* entry = nullptr;
    bool has =
        git_commit_tree(&tree, c) == 0 && git_tree_entry_bypath(&entry, tree, rel.c_str()) == 0;
    if (has) when = rfc3339(git_commit_time(c));
    git_tree_entry_free(entry);
    git_tree_free(tree);
    git_commit_free(c);
    if (!has) break;
  }
  git_revwalk_free(walk);
  git_repository_free(repo);
  git_libgit2_shutdown();
  return when;
}

}  // namespace

AuditContext context_from_wiki(const fs::path& wiki_in, const std::string& family,
                               const std::string& experiment) {
  fs::path wiki = fs::absolute(wiki_in).lexically_normal();
  briefs::Experiment exp = briefs::load_experiment(wiki, family, experiment);
  if (!exp.pages.binding || !exp.pages.stub) {
    std::string why;
    for (const auto& p : exp.problems)
      why += "\n- " + p.item + ": " + p.reason;
    throw Error("the wiki does not give the audit its context:" + why);
  }
  const briefs::Binding& b = *exp.pages.binding;
  const briefs::Stub& s = *exp.pages.stub;
  AuditContext ctx;
  fs::path worktree = wiki / "wiki/kernel_experiments" / family / "pallas/.repo";
  ctx.worktree = worktree.string();
  ctx.wiki = wiki.string();
  ctx.references = {(worktree / b.reference).string()};
  const std::string home = "raw/code/" + b.home_repo + "/";
  for (const auto& g : b.no_peek) {
    // Written from the wiki root: the shared checkout's path, and the same path in the worktree.
    ctx.no_peek.push_back((wiki / g).string());
    ctx.no_peek.push_back(g.rfind(home, 0) == 0 ? g.substr(home.size()) : g);
  }
  for (const auto& item : s.plan)
    ctx.plan.push_back(item.id);
  ctx.bar = s.bar;
  ctx.stub_committed = introduced_at(wiki, s.path);
  ctx.repository = (wiki / "raw/code" / b.home_repo).string();
  ctx.branch = "kernel/" + family + "-" + experiment;
  ctx.receipt_dirs = {wiki.string()};
  return ctx;
}

}  // namespace kd::audit
