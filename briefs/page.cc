#include "briefs/page.h"

#include "common/errors.h"

namespace kd::briefs {
namespace {

std::string normalize(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    out += text[i];
  }
  return out;
}

bool is_fence(std::string_view line, bool closing) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t'))
    line.remove_suffix(1);
  return line == "---" || (closing && line == "...");
}

}  // namespace

const Section* Page::section(std::string_view name) const {
  for (const auto& s : sections)
    if (heading_matches(s.title, name)) return &s;
  return nullptr;
}

const Section* Page::section_with_prefix(std::string_view prefix) const {
  for (const auto& s : sections)
    if (std::string_view(s.title).substr(0, prefix.size()) == prefix) return &s;
  return nullptr;
}

Page parse_page(std::string_view text, std::string_view source) {
  Page page;
  page.source = std::string(source);
  std::string norm = normalize(text);
  std::string_view all = norm;
  size_t first_nl = all.find('\n');
  if (is_fence(all.substr(0, first_nl), false) && first_nl != std::string_view::npos) {
    size_t pos = first_nl + 1;
    int line = 2;
    for (;;) {
      if (pos >= all.size()) throw Error(page.source + ":1: front matter: no closing '---' line");
      size_t nl = all.find('\n', pos);
      std::string_view l = all.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
      if (is_fence(l, true)) {
        page.front = parse_front_matter(all.substr(first_nl + 1, pos - first_nl - 1), source, 1);
        pos = nl == std::string_view::npos ? all.size() : nl + 1;
        page.body = std::string(all.substr(pos));
        page.body_line = line + 1;
        break;
      }
      pos = nl == std::string_view::npos ? all.size() : nl + 1;
      ++line;
    }
  } else {
    page.body = std::move(norm);
  }
  page.sections = scan_sections(page.body, page.body_line);
  return page;
}

}  // namespace kd::briefs
