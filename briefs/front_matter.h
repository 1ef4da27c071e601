// YAML front matter, the subset wiki pages use: `key: scalar`, quoted strings, inline lists
// (`[a, "b"]`) and block lists (`- item` lines), keys that contain spaces (`class page`).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kd::briefs {

struct FrontValue {
  bool is_list = false;
  std::string scalar;              // when !is_list
  std::vector<std::string> items;  // when is_list
};

struct FrontMatter {
  std::vector<std::pair<std::string, FrontValue>> entries;  // in page order, keys unique

  const FrontValue* find(std::string_view key) const;
  // The scalar value of the first present key among `keys` (e.g. {"class page", "class_page"}).
  const FrontValue* find_any(std::initializer_list<std::string_view> keys) const;
};

// Parses the lines between the `---` fences. `first_line` is the page line of the first one,
// for messages. Throws kd::Error "<source>:<line>: <problem>".
FrontMatter parse_front_matter(std::string_view yaml, std::string_view source, int first_line);

}  // namespace kd::briefs
