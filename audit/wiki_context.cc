#include "audit/wiki_context.h"

#include "briefs/experiment.h"
#include "common/errors.h"
#include "common/time.h"
#include "contract/wiki_layout.h"
#include "git/reader.h"

namespace kd::audit {

namespace fs = std::filesystem;

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
  const contract::ExperimentId id{family, experiment};
  AuditContext ctx;
  fs::path worktree = wiki / contract::worktree_dir(family);
  ctx.worktree = worktree.string();
  ctx.wiki = wiki.string();
  ctx.references = {(worktree / b.reference).string()};
  const std::string home = contract::home_repo_dir(b.home_repo) + "/";
  for (const auto& g : b.no_peek) {
    // Written from the wiki root: the shared checkout's path, and the same path in the worktree.
    ctx.no_peek.push_back((wiki / g).string());
    ctx.no_peek.push_back(g.rfind(home, 0) == 0 ? g.substr(home.size()) : g);
  }
  for (const auto& item : s.plan)
    ctx.plan.push_back(item.id);
  ctx.bar = s.bar;
  // When the stub was pre-registered: the oldest commit of HEAD's unbroken line that holds it.
  if (auto t = git::Reader(wiki).introduced_at(s.path)) ctx.stub_committed = format_rfc3339_s(*t);
  ctx.repository = (wiki / contract::home_repo_dir(b.home_repo)).string();
  ctx.branch = id.branch();
  ctx.receipt_dirs = {wiki.string()};
  return ctx;
}

}  // namespace kd::audit
