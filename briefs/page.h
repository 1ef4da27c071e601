// One wiki page: optional YAML front matter, then a markdown body split into sections.
// CRLF line ends and a UTF-8 byte-order mark are accepted and normalized away.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "briefs/front_matter.h"
#include "briefs/markdown.h"

namespace kd::briefs {

struct Page {
  std::string source;  // wiki-relative path, used in every message
  FrontMatter front;
  std::string body;   // text after the front matter, LF line ends
  int body_line = 1;  // page line number of the body's first line
  std::vector<Section> sections;

  // The first section whose heading matches `name` (see heading_matches).
  const Section* section(std::string_view name) const;
  // The first section whose title starts with `prefix` (e.g. "K1").
  const Section* section_with_prefix(std::string_view prefix) const;
  // Section text without its heading, trailing separators removed.
  std::string_view text(const Section& s) const { return section_text(body, s, false); }
};

// Parses a page; throws kd::Error "<source>:<line>: ..." for malformed front matter (an
// unterminated `---` block, an unsupported construct, a duplicate key).
Page parse_page(std::string_view text, std::string_view source);

}  // namespace kd::briefs
