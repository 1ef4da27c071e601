// Small text helpers shared by the parsers.
#pragma once

#include <string>
#include <string_view>

namespace kd {

// `s` without leading and trailing spaces and tabs.
inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

inline bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// `s` without leading and trailing ASCII whitespace (spaces, tabs, line ends).
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back()))
    s.remove_suffix(1);
  return s;
}

// `s` with ASCII letters lower-cased (locale-independent).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace kd
