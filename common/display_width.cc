#include "common/display_width.h"

namespace kd {
namespace {

// One decoded code point and its length in bytes; a bad sequence decodes as one byte.
struct Decoded {
  char32_t cp;
  std::size_t len;
  bool ok;
};

Decoded decode(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t len = b < 0x80           ? 1
                    : (b >> 5) == 0x6  ? 2
                    : (b >> 4) == 0xE  ? 3
                    : (b >> 3) == 0x1E ? 4
                                       : 0;
  if (len == 0 || i + len > s.size()) return {b, 1, false};
  char32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c >> 6) != 0x2) return {b, 1, false};
    cp = (cp << 6) | (c & 0x3F);
  }
  return {cp, len, true};
}

bool in(char32_t cp, char32_t lo, char32_t hi) {
  return cp >= lo && cp <= hi;
}

// Zero-width: combining marks, zero-width joiners and spaces, variation selectors.
bool zero_width(char32_t cp) {
  return in(cp, 0x0300, 0x036F) || in(cp, 0x0483, 0x0489) || in(cp, 0x0591, 0x05BD) ||
         in(cp, 0x0610, 0x061A) || in(cp, 0x064B, 0x065F) || in(cp, 0x1AB0, 0x1AFF) ||
         in(cp, 0x1DC0, 0x1DFF) || in(cp, 0x200B, 0x200F) || in(cp, 0x20D0, 0x20FF) ||
         in(cp, 0xFE00, 0xFE0F) || in(cp, 0xFE20, 0xFE2F) || cp == 0xFEFF ||
         in(cp, 0xE0100, 0xE01EF);
}

// Two columns: East Asian wide and fullwidth ranges, and the emoji blocks.
bool wide(char32_t cp) {
  return in(cp, 0x1100, 0x115F) || in(cp, 0x2E80, 0x303E) || in(cp, 0x3041, 0x33FF) ||
         in(cp, 0x3400, 0x4DBF) || in(cp, 0x4E00, 0x9FFF) || in(cp, 0xA000, 0xA4CF) ||
         in(cp, 0xAC00, 0xD7A3) || in(cp, 0xF900, 0xFAFF) || in(cp, 0xFE30, 0xFE4F) ||
         in(cp, 0xFF00, 0xFF60) || in(cp, 0xFFE0, 0xFFE6) || in(cp, 0x1F300, 0x1F64F) ||
         in(cp, 0x1F680, 0x1F6FF) || in(cp, 0x1F900, 0x1F9FF) || in(cp, 0x1FA70, 0x1FAFF) ||
         in(cp, 0x20000, 0x3FFFD);
}

std::size_t width_of(const Decoded& d) {
  if (!d.ok) return 1;
  if (d.cp < 0x20 || in(d.cp, 0x7F, 0x9F)) return 0;  // control characters print nothing
  if (zero_width(d.cp)) return 0;
  return wide(d.cp) ? 2 : 1;
}

}  // namespace

std::size_t display_width(std::string_view s) {
  std::size_t cols = 0;
  for (std::size_t i = 0; i < s.size();) {
    Decoded d = decode(s, i);
    cols += width_of(d);
    i += d.len;
  }
  return cols;
}

std::string pad_to_width(std::string_view s, std::size_t width) {
  std::string out(s);
  std::size_t w = display_width(s);
  if (w < width) out.append(width - w, ' ');
  return out;
}

std::string truncate_to_width(std::string_view s, std::size_t width) {
  if (display_width(s) <= width) return std::string(s);
  if (width == 0) return "";
  std::string out;
  std::size_t cols = 0;
  for (std::size_t i = 0; i < s.size();) {
    Decoded d = decode(s, i);
    std::size_t w = width_of(d);
    if (cols + w > width - 1) break;  // one column stays for the ellipsis
    out.append(s.substr(i, d.len));
    cols += w;
    i += d.len;
  }
  return out + "\xE2\x80\xA6";
}

}  // namespace kd
