#include "briefs/brief.h"

#include <regex>

#include "briefs/load_mandate.h"
#include "briefs/page.h"
#include "briefs/wiki_repo.h"
#include "common/errors.h"
#include "common/sha256.h"

namespace kd::briefs {
namespace {

// Collects pages and problems while a brief is assembled.
class Assembly {
 public:
  Assembly(const WikiRepo& repo, Problems& problems, std::vector<std::string>& warnings)
      : repo_(repo), problems_(problems), warnings_(warnings) {}

  // Reads and parses a committed page; on any defect records a problem under `item` and returns
  // nullopt. `what` names the page's role in messages ("class page").
  std::optional<Page> page(const std::string& path, const std::string& item,
                           const std::string& what) {
    WikiFile f = repo_.read(path);
    switch (f.status) {
      case WikiFile::Status::missing:
        problems_.push_back({item, what + " " + path + " not found"});
        return std::nullopt;
      case WikiFile::Status::uncommitted:
        problems_.push_back({item, what + " " + path + " is not committed"});
        return std::nullopt;
      case WikiFile::Status::outside:
        problems_.push_back({item, what + " " + path + " is a symlink leading outside the wiki (" +
                                       quote(f.detail) + ")"});
        return std::nullopt;
      case WikiFile::Status::not_a_file:
        problems_.push_back({item, what + " " + path + " is not a file"});
        return std::nullopt;
      case WikiFile::Status::ok:
        break;
    }
    if (f.edited)
      warnings_.push_back(path + " has uncommitted edits; the committed version is used");
    try {
      return parse_page(f.content, path);
    } catch (const Error& e) {
      problems_.push_back({item, e.what()});
      return std::nullopt;
    }
  }

 private:
  const WikiRepo& repo_;
  Problems& problems_;
  std::vector<std::string>& warnings_;
};

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

// The stub file for `experiment` inside the family directory: <YYYY-MM-DD>-<experiment>-*.md.
std::vector<std::string> stub_candidates(const WikiRepo& repo, const std::string& dir,
                                         const std::string& experiment) {
  static const std::regex kName(R"(\d{4}-\d{2}-\d{2}-(v\d{3})-[A-Za-z0-9._-]+\.md)");
  std::vector<std::string> out;
  for (const auto& name : repo.list(dir)) {
    std::smatch m;
    if (std::regex_match(name, m, kName) && m[1] == experiment) out.push_back(dir + "/" + name);
  }
  return out;
}

void resolve_reference(const WikiRepo& repo, Brief& b, Problems& problems) {
  const Binding& bind = b.binding;
  if (bind.home_repo.empty() || bind.integration_branch.empty() || bind.reference.empty()) return;
  b.home_repo = "raw/code/" + bind.home_repo;
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
    GitTree tree(home, "refs/heads/" + bind.integration_branch);
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
    ChipInventory inv = load_chip_inventory_or_default(req.chips);
    if (const Chip* c = inv.find(b.binding.chip)) {
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

void resolve_reading(const LoadMandate& m, Assembly& pages, Brief& b, Problems& problems) {
  const std::string item = "required reading";
  if (auto index = pages.page(m.index_path, item, "index"))
    paste_sections(*index, m.index_sections, item, b.reading, problems);
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
  // The slug and experiment become wiki paths: nothing but [a-z0-9-] and vNNN may get there.
  static const std::regex kSlug("[a-z0-9][a-z0-9-]*"), kExperiment("v[0-9]{3}");
  if (!std::regex_match(req.family, kSlug))
    problems.push_back({"request", "family " + quote(req.family) + " is not a slug of [a-z0-9-]"});
  if (!std::regex_match(req.experiment, kExperiment))
    problems.push_back({"request", "experiment " + quote(req.experiment) + " is not vNNN"});
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
  b.branch = "kernel/" + req.family + "-" + req.experiment;
  const std::string dir = "wiki/kernel_experiments/" + req.family + "/pallas";
  b.worktree = dir + "/.repo";
  Assembly pages(*repo, problems, b.warnings);

  if (auto page = pages.page(binding_path(req.family), "binding", "family binding"))
    b.binding = parse_binding(*page, req.family, problems);

  std::vector<std::string> stubs = stub_candidates(*repo, dir, req.experiment);
  if (stubs.empty()) {
    problems.push_back(
        {"stub", "no experiment page " + dir + "/<YYYY-MM-DD>-" + req.experiment + "-<slug>.md"});
  } else if (stubs.size() > 1) {
    std::string names;
    for (const auto& s : stubs)
      names += (names.empty() ? "" : ", ") + s;
    problems.push_back({"stub", "more than one page for " + req.experiment + ": " + names});
  } else {
    WikiFile f = repo->read(stubs[0]);
    if (f.status == WikiFile::Status::ok && f.edited) {
      problems.push_back({"stub", "stub " + stubs[0] + " has uncommitted edits"});
    } else if (auto page = pages.page(stubs[0], "stub", "stub")) {
      b.stub = parse_stub(*page, problems);
      b.stub.commit = b.wiki_commit;
    }
  }

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
