#include "common/glob.h"

namespace kd {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Backtracks only to the last '*': linear in practice, never exponential.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

bool path_glob_match(std::string_view p, std::string_view s) {
  while (!p.empty()) {
    if (p.substr(0, 2) == "**") {
      std::string_view rest = p.substr(2);
      if (!rest.empty() && rest[0] == '/') rest.remove_prefix(1);
      for (size_t i = 0; i <= s.size(); ++i)
        if ((i == 0 || s[i - 1] == '/') && path_glob_match(rest, s.substr(i))) return true;
      return rest.empty();
    }
    if (p[0] == '*') {
      for (size_t i = 0; i <= s.size(); ++i) {
        if (path_glob_match(p.substr(1), s.substr(i))) return true;
        if (i < s.size() && s[i] == '/') break;
      }
      return false;
    }
    if (s.empty()) return false;
    if (p[0] != '?' ? p[0] != s[0] : s[0] == '/') return false;
    p.remove_prefix(1);
    s.remove_prefix(1);
  }
  return s.empty();
}

}  // namespace kd
