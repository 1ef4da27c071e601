#include "briefs/load_mandate.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/policy_path.h"

namespace kd::briefs {
namespace {

using nlohmann::json;

struct Reader {
  std::string file;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error(file + ": " + field + " " + what);
  }
  const json& object(const json& parent, const std::string& key, const std::string& where) const {
    auto it = parent.find(key);
    if (it == parent.end() || !it->is_object()) fail(where + key, "must be an object");
    return *it;
  }
  std::string string(const json& parent, const std::string& key, const std::string& where) const {
    auto it = parent.find(key);
    if (it == parent.end() || !it->is_string() || it->get<std::string>().empty())
      fail(where + key, "must be a non-empty string");
    return it->get<std::string>();
  }
  std::vector<std::string> strings(const json& parent, const std::string& key,
                                   const std::string& where, bool allow_empty) const {
    auto it = parent.find(key);
    if (it == parent.end() || !it->is_array()) fail(where + key, "must be an array of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& v = (*it)[i];
      if (!v.is_string() || v.get<std::string>().empty())
        fail(where + key + "[" + std::to_string(i) + "]", "must be a non-empty string");
      out.push_back(v.get<std::string>());
    }
    if (out.empty() && !allow_empty) fail(where + key, "must not be empty");
    return out;
  }
  void relative(const std::string& field, const std::string& path) const {
    if (path[0] == '/' || path.find("..") != std::string::npos)
      fail(field, "must be a wiki-relative path without '..' (got " + quote(path) + ")");
  }
};

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
  Reader r{source.filename().string()};
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw Error(r.file + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object()) r.fail("top level", "must be an object");
  LoadMandate m;
  m.source = source;
  const json& index = r.object(doc, "index", "");
  m.index_path = r.string(index, "path", "index.");
  m.index_sections = r.strings(index, "sections", "index.", false);
  m.routing_table = r.string(index, "routing_table", "index.");
  const json& mech = r.object(doc, "mechanics", "");
  m.mechanics_path = r.string(mech, "path", "mechanics.");
  m.mechanics_through = r.string(mech, "through", "mechanics.");
  m.rules_path = r.string(r.object(doc, "rules", ""), "path", "rules.");
  const json& cls = r.object(doc, "class_page", "");
  m.class_page_pattern = r.string(cls, "path", "class_page.");
  if (m.class_page_pattern.find("{category}") == std::string::npos)
    r.fail("class_page.path", "must contain {category}");
  if (cls.contains("warn_without"))
    m.class_page_warn_without = r.strings(cls, "warn_without", "class_page.", true);
  const json& dist = r.object(doc, "distillations", "");
  m.distillation_pattern = r.string(dist, "path", "distillations.");
  if (m.distillation_pattern.find("{doc}") == std::string::npos)
    r.fail("distillations.path", "must contain {doc}");
  m.distillations_always = r.strings(dist, "always", "distillations.", true);
  const json& by = r.object(dist, "by_category", "distillations.");
  if (by.empty()) r.fail("distillations.by_category", "must name at least one category");
  for (const auto& [cat, docs] : by.items()) {
    if (cat.empty() ||
        cat.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      r.fail("distillations.by_category", "key " + quote(cat) + " is not a category slug");
    m.distillations_by_category[cat] = r.strings(by, cat, "distillations.by_category.", true);
  }
  m.never = r.strings(doc, "never", "", false);
  const json& ver = r.object(doc, "verifier", "");
  m.verifier_path = r.string(ver, "path", "verifier.");
  m.verifier_sections = r.strings(ver, "sections", "verifier.", false);

  r.relative("index.path", m.index_path);
  r.relative("mechanics.path", m.mechanics_path);
  r.relative("rules.path", m.rules_path);
  r.relative("class_page.path", m.class_page_pattern);
  r.relative("distillations.path", m.distillation_pattern);
  r.relative("verifier.path", m.verifier_path);
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
      r.fail(field, "would paste " + quote(path) + ", which never[] forbids (" + quote(*g) + ")");
  return m;
}

LoadMandate load_load_mandate(const std::filesystem::path& path) {
  return parse_load_mandate(read_file(path), path);
}

LoadMandate load_default_load_mandate() {
  return load_load_mandate(policy_file("load-mandate.json"));
}

}  // namespace kd::briefs
