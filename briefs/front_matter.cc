#include "briefs/front_matter.h"

#include <algorithm>

#include "common/errors.h"
#include "common/text.h"

namespace kd::briefs {
namespace {

[[noreturn]] void fail(std::string_view source, int line, const std::string& what) {
  throw Error(std::string(source) + ":" + std::to_string(line) + ": front matter: " + what);
}

// Reads one quoted scalar starting at s[0] (a quote); returns the value and advances `s` past
// the closing quote.
std::string read_quoted(std::string_view& s, std::string_view source, int line) {
  char q = s[0];
  std::string out;
  size_t i = 1;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (q == '\'' && c == '\'') {
      if (i + 1 < s.size() && s[i + 1] == '\'') {
        out += '\'';
        ++i;
        continue;
      }
      break;
    }
    if (q == '"' && c == '"') break;
    if (q == '"' && c == '\\') {
      if (++i == s.size()) break;
      switch (s[i]) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        default:
          fail(source, line, std::string("unsupported escape \\") + s[i]);
      }
      continue;
    }
    out += c;
  }
  if (i >= s.size()) fail(source, line, "unterminated quoted string");
  s.remove_prefix(i + 1);
  return out;
}

// A plain scalar ends at " #" (a comment).
std::string plain_scalar(std::string_view s) {
  if (size_t hash = s.find(" #"); hash != std::string_view::npos) s = s.substr(0, hash);
  return std::string(trim_blanks(s));
}

std::string scalar(std::string_view s, std::string_view source, int line) {
  s = trim_blanks(s);
  if (!s.empty() && (s[0] == '"' || s[0] == '\'')) {
    std::string v = read_quoted(s, source, line);
    s = trim_blanks(s);
    if (!s.empty() && s[0] != '#') fail(source, line, "text after closing quote");
    return v;
  }
  return plain_scalar(s);
}

std::vector<std::string> inline_list(std::string_view s, std::string_view source, int line) {
  // s starts with '['.
  std::vector<std::string> items;
  s.remove_prefix(1);
  for (;;) {
    s = trim_blanks(s);
    if (s.empty()) fail(source, line, "unterminated inline list");
    if (s[0] == ']') {
      s.remove_prefix(1);
      break;
    }
    std::string item;
    if (s[0] == '"' || s[0] == '\'') {
      item = read_quoted(s, source, line);
    } else {
      size_t end = s.find_first_of(",]");
      if (end == std::string_view::npos) fail(source, line, "unterminated inline list");
      item = std::string(trim_blanks(s.substr(0, end)));
      s.remove_prefix(end);
    }
    if (item.empty() && !s.empty() && s[0] == ',') fail(source, line, "empty inline list item");
    items.push_back(std::move(item));
    s = trim_blanks(s);
    if (!s.empty() && s[0] == ',')
      s.remove_prefix(1);
    else if (s.empty() || s[0] != ']')
      fail(source, line, "expected ',' or ']' in inline list");
  }
  s = trim_blanks(s);
  if (!s.empty() && s[0] != '#') fail(source, line, "text after inline list");
  return items;
}

bool valid_key(std::string_view key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == ' ' || c == '.';
  });
}

}  // namespace

const FrontValue* FrontMatter::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

const FrontValue* FrontMatter::find_any(std::initializer_list<std::string_view> keys) const {
  for (auto k : keys)
    if (const FrontValue* v = find(k)) return v;
  return nullptr;
}

FrontMatter parse_front_matter(std::string_view yaml, std::string_view source, int first_line) {
  FrontMatter fm;
  FrontValue* open_block = nullptr;  // the key whose value is an empty scalar so far
  int line_no = first_line;
  size_t pos = 0;
  while (pos < yaml.size()) {
    size_t nl = yaml.find('\n', pos);
    std::string_view raw = yaml.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? yaml.size() : nl + 1;
    ++line_no;
    std::string_view line = trim_blanks(raw);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '-' && (line.size() == 1 || line[1] == ' ')) {
      if (!open_block) fail(source, line_no, "list item without a key");
      open_block->is_list = true;
      open_block->items.push_back(scalar(line.substr(1), source, line_no));
      continue;
    }
    if (raw[0] == ' ' || raw[0] == '\t') fail(source, line_no, "nested mappings are not supported");
    size_t colon = line.find(": ");
    if (colon == std::string_view::npos && line.back() == ':') colon = line.size() - 1;
    if (colon == std::string_view::npos) fail(source, line_no, "expected 'key: value'");
    std::string key(trim_blanks(line.substr(0, colon)));
    if (!valid_key(key)) fail(source, line_no, "invalid key " + quote(key));
    if (fm.find(key)) fail(source, line_no, "duplicate key " + quote(key));
    std::string_view rest = trim_blanks(line.substr(colon + 1));
    FrontValue v;
    if (!rest.empty() && rest[0] == '[') {
      v.is_list = true;
      v.items = inline_list(rest, source, line_no);
    } else if (!rest.empty() && (rest[0] == '{' || rest[0] == '|' || rest[0] == '>')) {
      fail(source, line_no, "flow mappings and block scalars are not supported");
    } else {
      v.scalar = scalar(rest, source, line_no);
    }
    fm.entries.emplace_back(std::move(key), std::move(v));
    FrontValue& added = fm.entries.back().second;
    open_block = (!added.is_list && added.scalar.empty()) ? &added : nullptr;
  }
  return fm;
}

}  // namespace kd::briefs
