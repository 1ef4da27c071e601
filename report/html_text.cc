#include "report/html_text.h"

#include <cmath>
#include <cstdio>

namespace kd::report {

void append_escaped(std::string& out, std::string_view s) {
  // Runs without a markup character are appended whole.
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char* ref = nullptr;
    switch (s[i]) {
      case '&':
        ref = "&amp;";
        break;
      case '<':
        ref = "&lt;";
        break;
      case '>':
        ref = "&gt;";
        break;
      case '"':
        ref = "&quot;";
        break;
      case '\'':
        ref = "&#39;";
        break;
      default:
        continue;
    }
    out.append(s.data() + start, i - start);
    out += ref;
    start = i + 1;
  }
  out.append(s.data() + start, s.size() - start);
}

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  append_escaped(out, s);
  return out;
}

std::string fmt_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_cost(double usd) {
  std::string out = "$";  // appended, not `"$" + ...`: GCC 12 warns falsely on that (-Wrestrict)
  out += fmt_fixed(usd, usd >= 100 ? 0 : 3);
  return out;
}

std::string fmt_tokens(long n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string fmt_duration(double s) {
  char buf[64];
  if (!(s >= 0)) s = 0;
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%dm %02ds", int(s) / 60, int(s) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dh %02dm", int(s) / 3600, int(s) % 3600 / 60);
  }
  return buf;
}

std::string fmt_speedup(const std::optional<double>& x) {
  return x && std::isfinite(*x) ? fmt_fixed(*x, 3) + "x" : "-";
}

std::string base64(std::string_view bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned v = (unsigned char)bytes[i] << 16 | (unsigned char)bytes[i + 1] << 8 |
                 (unsigned char)bytes[i + 2];
    out += k[v >> 18 & 63];
    out += k[v >> 12 & 63];
    out += k[v >> 6 & 63];
    out += k[v & 63];
  }
  if (i + 1 == bytes.size()) {
    unsigned v = (unsigned char)bytes[i] << 16;
    out += k[v >> 18 & 63];
    out += k[v >> 12 & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    unsigned v = (unsigned char)bytes[i] << 16 | (unsigned char)bytes[i + 1] << 8;
    out += k[v >> 18 & 63];
    out += k[v >> 12 & 63];
    out += k[v >> 6 & 63];
    out += '=';
  }
  return out;
}

}  // namespace kd::report
