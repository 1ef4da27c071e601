#include "audit/json_skim.h"

#include <cstring>

namespace kd::audit {
namespace {

// Index just past the closing quote of the string starting at s[i] == '"', or npos.
size_t skip_string(std::string_view s, size_t i) {
  ++i;
  for (;;) {
    const void* q = std::memchr(s.data() + i, '"', s.size() - i);
    if (!q) return std::string_view::npos;
    size_t at = static_cast<const char*>(q) - s.data();
    size_t backslashes = 0;
    while (at - backslashes > i && s[at - backslashes - 1] == '\\')
      ++backslashes;
    if (backslashes % 2 == 0) return at + 1;
    i = at + 1;
  }
}

bool ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Index just past the value starting at s[i], or npos. Nested containers are matched by depth,
// strings skipped whole; scalars run to the next delimiter.
size_t skip_value(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') return skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      char c = s[i];
      if (c == '"') {
        i = skip_string(s, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (c == '{' || c == '[')
        ++depth;
      else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return std::string_view::npos;
  }
  size_t start = i;
  while (i < s.size() && s[i] != ',' && s[i] != '}' && !ws(s[i]))
    ++i;
  return i > start ? i : std::string_view::npos;
}

}  // namespace

bool skim_object(std::string_view s, SkimField* fields, size_t count) {
  size_t i = 0;
  while (i < s.size() && ws(s[i]))
    ++i;
  if (i >= s.size() || s[i] != '{') return false;
  ++i;
  for (;;) {
    while (i < s.size() && ws(s[i]))
      ++i;
    if (i < s.size() && s[i] == '}') break;
    if (i >= s.size() || s[i] != '"') return false;
    size_t key_end = skip_string(s, i);
    if (key_end == std::string_view::npos) return false;
    std::string_view key = s.substr(i + 1, key_end - i - 2);
    // An escaped key may spell a wanted one ("\u0074ype"); only a full parse can tell.
    if (key.find('\\') != std::string_view::npos) return false;
    i = key_end;
    while (i < s.size() && ws(s[i]))
      ++i;
    if (i >= s.size() || s[i] != ':') return false;
    ++i;
    while (i < s.size() && ws(s[i]))
      ++i;
    size_t end = skip_value(s, i);
    if (end == std::string_view::npos) return false;
    // A repeated key holds its last value, as in a full parse: a later non-string clears it.
    for (size_t f = 0; f < count; ++f)
      if (fields[f].key == key)
        fields[f].value = s[i] == '"' ? std::optional(s.substr(i + 1, end - i - 2)) : std::nullopt;
    i = end;
    while (i < s.size() && ws(s[i]))
      ++i;
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}') break;
    return false;
  }
  ++i;
  while (i < s.size() && ws(s[i]))
    ++i;
  return i == s.size();
}

}  // namespace kd::audit
