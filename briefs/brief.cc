#include "briefs/brief.h"

#include "briefs/experiment.h"
#include "briefs/load_mandate.h"
#include "briefs/page.h"
#include "briefs/wiki_repo.h"
#include "common/errors.h"
#include "common/sha256.h"
#include "contract/wiki_layout.h"

namespace kd::briefs {
namespace {

PastedPart part(std::string source, std::string section, std::string_view content) {
  return PastedPart{std::move(source), std::move(section), sha256_hex(content),
                    std::string(content)};
}

void paste_sections(const Page& page, const std::vector<std::string>& names,
                    const std::string& item, std::vector<PastedPart>& out, Problems& problems) {
  for (const auto& name : names) {
    const Section* s = page.section(name);
    if (!s) {
      problems.push_back({item, page.source + " has no section " + quote(name)});
      continue;
    }
    if (page.text(*s).empty()) {
      problems.push_back({item, page.source + ": section " + quote(s->title) + " is empty"});
      continue;
    }
    out.push_back(part(page.source, s->title, section_text(page.body, *s, true)));
  }
}

std::string_view trimmed(std::string_view t) {
  while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
    t.remove_suffix(1);
  while (!t.empty() && t.front() == '\n')
    t.remove_prefix(1);
  return t;
}

void resolve_reference(const WikiRepo& repo, Brief& b, Problems& problems) {
  const Binding& bind = b.binding;
  if (bind.home_repo.empty() || bind.integration_branch.empty() || bind.reference.empty()) return;
  b.home_repo = contract::home_repo_dir(bind.home_repo);
  std::filesystem::path home = repo.root() / b.home_repo;
  std::error_code ec;
  auto real = std::filesystem::weakly_canonical(home, ec);
  auto root = std::filesystem::canonical(repo.root(), ec);
  if (!ec && real.string().rfind(root.string() + "/", 0) != 0) {
    problems.push_back(
        {"reference module",
         b.home_repo + " is a symlink leading outside the wiki (" + quote(real.string()) + ")"});
    return;
  }
  try {
    git::CommitTree tree(home, "refs/heads/" + bind.integration_branch);
    b.home_commit = tree.commit();
    auto e = tree.lookup(bind.reference);
    if (!e || !e->is_file) {
      problems.push_back({"reference module", bind.reference + " not found in the home repo " +
                                                  b.home_repo + " at " + bind.integration_branch});
    } else if (e->symlink) {
      problems.push_back(
          {"reference module", bind.reference + " in " + b.home_repo +
                                   " is a symlink; the parity oracle must be a file"});
    } else {
      b.reference_sha256 = sha256_hex(e->content);
    }
  } catch (const Error& e) {
    problems.push_back({"reference module", "home repo " + b.home_repo + " at branch " +
                                                quote(bind.integration_branch) + ": " + e.what()});
  }
  for (const auto& t : bind.target)
    if (t == bind.reference)
      problems.push_back({"target path", t + " is the reference module, which is never edited"});
}

void resolve_chip(const BriefRequest& req, Brief& b, Problems& problems) {
  if (b.binding.chip.empty()) return;
  try {
    contract::ChipInventory inv = contract::load_chip_inventory_or_default(req.chips);
    // Under Slurm the binding's chip names no particular one: Slurm gives each job its own.
    if (inv.slurm) {
      b.chip = inv.slurm_chip();
      return;
    }
    if (const contract::Chip* c = inv.find(b.binding.chip)) {
      b.chip = *c;
      return;
    }
    std::string ids;
    for (const auto& id : inv.ids())
      ids += (ids.empty() ? "" : ", ") + id;
    problems.push_back(
        {"chip + lock", "chip " + quote(b.binding.chip) + " is not in the inventory " +
                            inv.source.filename().string() + " (valid: " + ids + ")"});
  } catch (const Error& e) {
    problems.push_back({"chip + lock", e.what()});
  }
}

void resolve_reading(const LoadMandate& m, PageReader& pages, Brief& b, Problems& problems) {
  const std::string item = "required reading";
  std::optional<Page> index = pages.page(m.index_path, item, "index");
  if (index) paste_sections(*index, m.index_sections, item, b.reading, problems);
  if (auto mech = pages.page(m.mechanics_path, item, "authoring mechanics")) {
    if (const Section* s = mech->section(m.mechanics_through)) {
      std::string_view upto = std::string_view(mech->body).substr(0, s->end);
      b.reading.push_back(part(mech->source, "start through " + s->title, trimmed(upto)));
    } else {
      problems.push_back({item, mech->source + " has no section " + quote(m.mechanics_through)});
    }
  }
  std::optional<Page> rules = pages.page(m.rules_path, item, "earned rules");
  if (rules) {
    if (trimmed(rules->body).empty())
      problems.push_back({item, rules->source + " is empty"});
    else
      b.reading.push_back(part(rules->source, "(whole page)", trimmed(rules->body)));
  }
  const std::string& cat = b.stub.category;
  if (b.stub.path.empty()) {
    // The stub is refused already; the category-specific reading waits for a readable stub.
  } else if (cat.empty()) {
    problems.push_back({item, b.stub.path + " has no category"});
  } else if (!m.has_category(cat)) {
    std::string valid;
    for (const auto& c : m.categories())
      valid += (valid.empty() ? "" : ", ") + c;
    problems.push_back({item, "unknown category " + quote(cat) + " (valid: " + valid + ")"});
  } else {
    std::string cls = m.class_page(cat);
    // The policy decides; a routing table that no longer names the category means the two drifted.
    if (index) {
      const Section* routing = index->section(m.routing_table);
      if (!routing)
        b.warnings.push_back(index->source + " has no section " + quote(m.routing_table));
      else if (index->text(*routing).find(cat) == std::string_view::npos)
        b.warnings.push_back("the routing table of " + index->source + " does not list category " +
                             quote(cat));
    }
    if (b.stub.class_page.empty())
      problems.push_back({item, b.stub.path + " has no class page"});
    else if (b.stub.class_page.find(std::filesystem::path(cls).filename().string()) ==
             std::string::npos)
      problems.push_back({item, b.stub.path + ": class page " + quote(b.stub.class_page) +
                                    " does not name " + cls + " (the routing table's page for " +
                                    cat + ")"});
    if (auto page = pages.page(cls, item, "class page")) {
      if (trimmed(page->body).empty())
        problems.push_back({item, "class page " + cls + " is empty"});
      else
        b.reading.push_back(part(cls, "(whole page)", trimmed(page->body)));
      for (const auto& want : m.class_page_warn_without)
        if (!page->section(want))
          b.warnings.push_back("class page " + cls + " has no section " + quote(want));
    }
    for (const auto& doc : m.distillations(cat)) {
      if (auto page = pages.page(doc, item, "doc distillation")) {
        if (trimmed(page->body).empty())
          problems.push_back({item, "doc distillation " + doc + " is empty"});
        else
          b.reading.push_back(part(doc, "(whole page)", trimmed(page->body)));
      }
    }
  }
  if (rules)
    paste_sections(*rules, m.verifier_sections, "verifier reading", b.verifier_reading, problems);
  // Defense in depth: nothing pasted may come from a page the mandate forbids.
  for (const auto& p : b.reading)
    if (auto g = m.forbidden(p.source))
      problems.push_back({item, p.source + " is forbidden in a cold run (" + quote(*g) + ")"});
}

}  // namespace

BriefOutcome build_brief(const BriefRequest& req) {
  BriefOutcome out;
  Problems& problems = out.problems;
  LoadMandate mandate = req.mandate ? load_load_mandate(*req.mandate) : load_default_load_mandate();
  check_request(req.family, req.experiment, problems);
  if (!problems.empty()) return out;
  std::optional<WikiRepo> repo;
  try {
    repo.emplace(req.wiki);
  } catch (const Error& e) {
    problems.push_back({"wiki", e.what()});
    return out;
  }
  Brief b;
  b.family = req.family;
  b.experiment = req.experiment;
  b.wiki_commit = repo->commit();
  b.branch = contract::ExperimentId{req.family, req.experiment}.branch();
  b.worktree = contract::worktree_dir(req.family);
  PageReader pages(*repo, problems, b.warnings);
  ExperimentPages ep = read_experiment(*repo, req.family, req.experiment, pages, problems);
  if (ep.binding) b.binding = std::move(*ep.binding);
  if (ep.stub) b.stub = std::move(*ep.stub);

  if (!b.binding.path.empty()) {
    resolve_reference(*repo, b, problems);
    resolve_chip(req, b, problems);
    if (b.stub.activity == "capability-eval" && b.binding.no_peek.empty())
      b.warnings.push_back("activity is capability-eval but the binding lists no no_peek paths");
  }
  resolve_reading(mandate, pages, b, problems);

  if (problems.empty()) out.brief = std::move(b);
  return out;
}

std::string render_problems(const Problems& problems) {
  std::string out = "refused: " + std::to_string(problems.size()) +
                    (problems.size() == 1 ? " problem\n" : " problems\n");
  for (const auto& p : problems)
    out += "- " + p.item + ": " + p.reason + "\n";
  return out;
}

nlohmann::json problems_json(const Problems& problems) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : problems)
    list.push_back({{"item", p.item}, {"reason", p.reason}});
  return {{"refused", true}, {"problems", list}};
}

}  // namespace kd::briefs
