// The load mandate as data (policies/load-mandate.json): which wiki content an author brief
// pastes for a kernel category, and which pages it must never paste in a cold run.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kd::briefs {

struct LoadMandate {
  std::filesystem::path source;  // the policy file
  std::string index_path;
  std::vector<std::string> index_sections;
  std::string routing_table;  // the index section whose table routes categories to class pages
  std::string mechanics_path;
  std::string mechanics_through;   // pasted from the page start through this section
  std::string rules_path;          // pasted whole
  std::string class_page_pattern;  // contains {category}
  std::vector<std::string> class_page_warn_without;
  std::string distillation_pattern;  // contains {doc}
  std::vector<std::string> distillations_always;
  std::map<std::string, std::vector<std::string>>
      distillations_by_category;   // key set = categories
  std::vector<std::string> never;  // globs: '*' within a segment, '?' one char, '**' any depth
  std::string verifier_path;
  std::vector<std::string> verifier_sections;

  std::vector<std::string> categories() const;
  bool has_category(const std::string& c) const { return distillations_by_category.count(c) > 0; }
  std::string class_page(const std::string& category) const;
  // Wiki paths of the distillations for a category: the always-list, then the category's.
  std::vector<std::string> distillations(const std::string& category) const;
  // The first `never` glob matching `path`, if any.
  std::optional<std::string> forbidden(const std::string& path) const;
};

// Parses and validates; throws kd::Error naming the file and the field
// ("load-mandate.json: index.sections[2] must be a non-empty string").
LoadMandate parse_load_mandate(const std::string& json_text, const std::filesystem::path& source);
LoadMandate load_load_mandate(const std::filesystem::path& path);
// policies/load-mandate.json from the policy directory.
LoadMandate load_default_load_mandate();

}  // namespace kd::briefs
