#include "briefs/load_mandate.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/json_read.h"
#include "common/policy_path.h"

namespace kd::briefs {
namespace {

// Policy paths are wiki-relative and never climb out of the wiki.
void check_relative(const JsonObjectReader& r, const std::string& key, const std::string& path) {
  if (path[0] == '/' || path.find("..") != std::string::npos)
    r.field_error(key, "must be a wiki-relative path without '..' (got " + quote(path) + ")");
}

// An array of non-empty strings that must hold at least one.
std::vector<std::string> some_strings(const JsonObjectReader& r, const std::string& key) {
  std::vector<std::string> out = r.strings(key);
  if (out.empty()) r.field_error(key, "must not be empty");
  return out;
}

std::string substitute(std::string pattern, std::string_view key, const std::string& value) {
  std::string token = "{" + std::string(key) + "}";
  for (size_t at; (at = pattern.find(token)) != std::string::npos;)
    pattern.replace(at, token.size(), value);
  return pattern;
}

}  // namespace

std::vector<std::string> LoadMandate::categories() const {
  std::vector<std::string> out;
  for (const auto& [c, _] : distillations_by_category)
    out.push_back(c);
  return out;
}

std::string LoadMandate::class_page(const std::string& category) const {
  return substitute(class_page_pattern, "category", category);
}

std::vector<std::string> LoadMandate::distillations(const std::string& category) const {
  std::vector<std::string> out;
  for (const auto& d : distillations_always)
    out.push_back(substitute(distillation_pattern, "doc", d));
  if (auto it = distillations_by_category.find(category); it != distillations_by_category.end())
    for (const auto& d : it->second)
      out.push_back(substitute(distillation_pattern, "doc", d));
  return out;
}

std::optional<std::string> LoadMandate::forbidden(const std::string& path) const {
  for (const auto& g : never)
    if (path_glob_match(g, path)) return g;
  return std::nullopt;
}

LoadMandate parse_load_mandate(const std::string& json_text, const std::filesystem::path& source) {
  const std::string file = source.filename().string();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file + ": not valid JSON: " + e.what());
  }
  // Messages name a field by its path ("index.sections[2] must be a non-empty string").
  const JsonObjectReader r(doc, file, FieldNames::Path);
  r.allow_only({"comment", "derived_from", "index", "mechanics", "rules", "class_page",
                "distillations", "never", "verifier"});
  LoadMandate m;
  m.source = source;
  const JsonObjectReader index = r.object("index");
  index.allow_only({"path", "sections", "routing_table"});
  m.index_path = index.string("path");
  m.index_sections = some_strings(index, "sections");
  m.routing_table = index.string("routing_table");
  const JsonObjectReader mech = r.object("mechanics");
  mech.allow_only({"path", "through"});
  m.mechanics_path = mech.string("path");
  m.mechanics_through = mech.string("through");
  const JsonObjectReader rules = r.object("rules");
  rules.allow_only({"path"});
  m.rules_path = rules.string("path");
  const JsonObjectReader cls = r.object("class_page");
  cls.allow_only({"path", "warn_without"});
  m.class_page_pattern = cls.string("path");
  if (m.class_page_pattern.find("{category}") == std::string::npos)
    cls.field_error("path", "must contain {category}");
  m.class_page_warn_without = cls.strings("warn_without", true);
  const JsonObjectReader dist = r.object("distillations");
  dist.allow_only({"path", "always", "by_category"});
  m.distillation_pattern = dist.string("path");
  if (m.distillation_pattern.find("{doc}") == std::string::npos)
    dist.field_error("path", "must contain {doc}");
  m.distillations_always = dist.strings("always");
  const JsonObjectReader by = dist.object("by_category");
  if (by.raw().empty()) dist.field_error("by_category", "must name at least one category");
  for (const auto& member : by.raw().items()) {
    const std::string& cat = member.key();
    if (cat.empty() ||
        cat.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      dist.field_error("by_category", "key " + quote(cat) + " is not a category slug");
    m.distillations_by_category[cat] = by.strings(cat);
  }
  m.never = some_strings(r, "never");
  const JsonObjectReader ver = r.object("verifier");
  ver.allow_only({"path", "sections"});
  m.verifier_path = ver.string("path");
  m.verifier_sections = some_strings(ver, "sections");

  check_relative(index, "path", m.index_path);
  check_relative(mech, "path", m.mechanics_path);
  check_relative(rules, "path", m.rules_path);
  check_relative(cls, "path", m.class_page_pattern);
  check_relative(dist, "path", m.distillation_pattern);
  check_relative(ver, "path", m.verifier_path);
  // Fail closed: a mandate that would paste a page it also forbids is a broken policy.
  std::vector<std::pair<std::string, std::string>> pasted = {{"index.path", m.index_path},
                                                             {"mechanics.path", m.mechanics_path},
                                                             {"rules.path", m.rules_path}};
  for (const auto& c : m.categories()) {
    pasted.emplace_back("class_page.path", m.class_page(c));
    for (const auto& d : m.distillations(c))
      pasted.emplace_back("distillations", d);
  }
  for (const auto& [field, path] : pasted)
    if (auto g = m.forbidden(path))
      r.field_error(field,
                    "would paste " + quote(path) + ", which never[] forbids (" + quote(*g) + ")");
  return m;
}

LoadMandate load_load_mandate(const std::filesystem::path& path) {
  return parse_load_mandate(read_file(path), path);
}

LoadMandate load_default_load_mandate() {
  return load_load_mandate(policy_file("load-mandate.json"));
}

}  // namespace kd::briefs
