#include "verify/markdown_literal.h"

#include <algorithm>

#include "common/text.h"

namespace kd::verify {

std::string literal_inline(std::string_view text) {
  // Inside one line only inline markup can form: code, emphasis, links and images, raw HTML and
  // entities, table cells, and (GitHub's extension) bare URLs and e-mail addresses, which need a
  // scheme's ':' , an '@' or "www.". A line break would let the text start a block of its own.
  constexpr std::string_view kMarkup = "\\`*_[]<>!|~&#:@";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += ' ';
      continue;
    }
    const bool www_dot = c == '.' && i >= 3 && lower(text.substr(i - 3, 3)) == "www";
    if (kMarkup.find(c) != std::string_view::npos || www_dot) out += '\\';
    out += c;
  }
  return out;
}

std::string literal_block(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  std::string body;
  body.reserve(text.size());
  for (char c : text) {
    if (c != '\r') body += c;
  }
  while (!body.empty() && body.back() == '\n')
    body.pop_back();
  return fence + "text\n" + body + "\n" + fence + "\n";
}

}  // namespace kd::verify
