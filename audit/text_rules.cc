#include "audit/text_rules.h"

#include <algorithm>
#include <cctype>

#include "common/text.h"

namespace kd::audit {
namespace {

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string snippet(std::string_view text, size_t at, size_t len) {
  size_t from = at > 40 ? at - 40 : 0;
  size_t to = std::min(text.size(), at + len + 40);
  std::string s(text.substr(from, to - from));
  std::replace(s.begin(), s.end(), '\n', ' ');
  return (from > 0 ? "…" : "") + s + (to < text.size() ? "…" : "");
}

}  // namespace

std::optional<std::string> find_verdict_language(std::string_view text, const AuditPolicy& policy) {
  std::string low = lower(text);
  for (const auto& marker : policy.verdict_markers) {
    size_t at = low.find(lower(marker));
    if (at != std::string::npos) return snippet(text, at, marker.size());
  }
  for (const auto& word : policy.verdict_words) {
    std::string w = lower(word);
    for (size_t at = low.find(w); at != std::string::npos; at = low.find(w, at + 1)) {
      if ((at > 0 && word_char(low[at - 1])) ||
          (at + w.size() < low.size() && word_char(low[at + w.size()])))
        continue;
      // The sentence around the word.
      size_t from = low.find_last_of(".!?\n", at);
      from = from == std::string::npos ? 0 : from + 1;
      size_t to = low.find_first_of(".!?\n", at);
      std::string_view sentence = std::string_view(low).substr(
          from, to == std::string::npos ? std::string::npos : to - from);
      for (const auto& ctx : policy.verdict_context)
        if (sentence.find(lower(ctx)) != std::string_view::npos) return snippet(text, at, w.size());
    }
  }
  return std::nullopt;
}

std::optional<std::string> find_unreceipted_speedup(std::string_view text) {
  std::string low = lower(text);
  if (low.find("receipt") != std::string::npos) return std::nullopt;
  for (size_t i = 0; i < low.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(low[i])) ||
        (i > 0 && (word_char(low[i - 1]) || low[i - 1] == '.')))
      continue;
    size_t j = i;
    while (j < low.size() && (std::isdigit(static_cast<unsigned char>(low[j])) || low[j] == '.'))
      ++j;
    size_t k = j;
    if (k < low.size() && low[k] == ' ') ++k;
    bool times = false;
    if (k < low.size() && low[k] == 'x' && (k + 1 >= low.size() || !word_char(low[k + 1])))
      times = true;
    if (low.compare(k, 2, "\xC3\x97") == 0) times = true;  // U+00D7 MULTIPLICATION SIGN
    if (times) return snippet(text, i, k - i + 1);
    i = j;
  }
  for (size_t at = low.find("speedup"); at != std::string::npos; at = low.find("speedup", at + 1)) {
    for (size_t k = at + 7; k < std::min(low.size(), at + 32); ++k)
      if (std::isdigit(static_cast<unsigned char>(low[k]))) return snippet(text, at, k - at + 1);
  }
  return std::nullopt;
}

std::string front_matter_value(std::string_view page, std::string_view key) {
  if (page.substr(0, 4) != "---\n" && page.substr(0, 5) != "---\r\n") return "";
  size_t pos = page.find('\n') + 1;
  while (pos < page.size()) {
    size_t eol = page.find('\n', pos);
    std::string_view line =
        page.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line == "---") break;
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      std::string_view v = trim_blanks(line.substr(key.size() + 1));
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
        v = v.substr(1, v.size() - 2);
      return std::string(v);
    }
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  return "";
}

}  // namespace kd::audit
