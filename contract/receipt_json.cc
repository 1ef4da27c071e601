#include "contract/receipt_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/errors.h"

namespace kd::contract {

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

bool JsonValue::is_integer_token() const {
  return kind == Kind::Number && text.find_first_of(".eE") == std::string::npos && text != "NaN" &&
         text != "Infinity" && text != "-Infinity";
}

double JsonValue::number() const {
  if (text == "NaN") return std::nan("");
  if (text == "Infinity") return HUGE_VAL;
  if (text == "-Infinity") return -HUGE_VAL;
  // strtod rounds correctly and saturates to ±inf / 0 as Python's float() does.
  return std::strtod(text.c_str(), nullptr);
}

namespace {

constexpr int kMaxDepth = 512;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  JsonValue document() {
    JsonValue v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("extra data after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("JSON at byte " + std::to_string(pos_) + ": " + what);
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool take(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  JsonValue value(int depth) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth));
    skip_ws();
    if (pos_ >= s_.size()) fail("unexpected end of input (truncated?)");
    JsonValue v;
    char c = s_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      v.kind = JsonValue::Kind::String;
      v.text = string();
      return v;
    }
    if (take("null")) return v;
    if (take("true") || take("false")) {
      v.kind = JsonValue::Kind::Bool;
      v.boolean = c == 't';
      return v;
    }
    v.kind = JsonValue::Kind::Number;
    if (take("NaN"))
      v.text = "NaN";
    else if (take("Infinity"))
      v.text = "Infinity";
    else if (take("-Infinity"))
      v.text = "-Infinity";
    else
      v.text = number();
    return v;
  }

  // JSON number grammar, as Python's scanner accepts it.
  std::string number() {
    size_t start = pos_;
    auto digit = [&] { return pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; };
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    if (!digit()) fail("expected a value");
    if (s_[pos_] == '0')
      ++pos_;
    else
      while (digit())
        ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digit()) fail("expected digits after the decimal point");
      while (digit())
        ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digit()) fail("expected digits in the exponent");
      while (digit())
        ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= unsigned(c - 'A' + 10);
      else
        fail("bad hex digit in \\u escape");
    }
    return v;
  }

  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  // Copies one raw UTF-8 sequence, rejecting malformed ones (Python's decoder would).
  void raw_utf8(std::string& out) {
    auto b = [&](size_t i) { return static_cast<unsigned char>(s_[i]); };
    unsigned char c = b(pos_);
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (n == 0 || pos_ + n > s_.size()) fail("invalid UTF-8");
    unsigned cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
    for (size_t i = 1; i < n; ++i) {
      if ((b(pos_ + i) & 0xC0) != 0x80) fail("invalid UTF-8");
      cp = (cp << 6) | (b(pos_ + i) & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      fail("invalid UTF-8");
    out.append(s_.substr(pos_, n));
    pos_ += n;
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string (truncated?)");
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) fail("control character in a string");
      if (c >= 0x80) {
        raw_utf8(out);
        continue;
      }
      if (c != '\\') {
        out += char(c);
        ++pos_;
        continue;
      }
      if (++pos_ >= s_.size()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          // A high surrogate followed by an escaped low one is one character, as in Python.
          if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(pos_, 2) == "\\u") {
            size_t save = pos_;
            pos_ += 2;
            unsigned lo = hex4();
            if (lo >= 0xDC00 && lo <= 0xDFFF)
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            else
              pos_ = save;
          }
          put_utf8(out, cp);
          break;
        }
        default:
          fail(std::string("invalid escape \\") + e);
      }
    }
  }

  JsonValue array(int depth) {
    ++pos_;
    JsonValue v;
    v.kind = JsonValue::Kind::Array;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return v;
    }
    for (;;) {
      v.items.push_back(value(depth + 1));
      skip_ws();
      if (pos_ >= s_.size()) fail("unterminated array (truncated?)");
      if (s_[pos_] == ']') {
        ++pos_;
        return v;
      }
      if (s_[pos_] != ',') fail("expected ',' or ']' in an array");
      ++pos_;
    }
  }

  JsonValue object(int depth) {
    ++pos_;
    JsonValue v;
    v.kind = JsonValue::Kind::Object;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return v;
    }
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size()) fail("unterminated object (truncated?)");
      if (s_[pos_] != '"') fail("expected a string key");
      size_t key_at = pos_;
      std::string key = string();
      if (v.find(key)) {
        pos_ = key_at;
        fail("duplicate key " + quote(key));
      }
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') fail("expected ':' after a key");
      ++pos_;
      v.members.push_back({std::move(key), value(depth + 1)});
      skip_ws();
      if (pos_ >= s_.size()) fail("unterminated object (truncated?)");
      if (s_[pos_] == '}') {
        ++pos_;
        return v;
      }
      if (s_[pos_] != ',') fail("expected ',' or '}' in an object");
      ++pos_;
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

void put_escape(std::string& out, unsigned unit) {
  static const char* hex = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4)
    out += hex[(unit >> shift) & 0xF];
}

// Python's ensure_ascii encoder: short escapes for " \ \n \r \t \b \f, \u00XX for the rest of
// the control range and DEL, \uXXXX (surrogate pairs above the BMP) for everything non-ASCII.
void write_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20 || c == 0x7F)
            put_escape(out, c);
          else
            out += char(c);
      }
      ++i;
      continue;
    }
    // The reader only stores well-formed UTF-8 (plus surrogates), so the lengths are trusted.
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    unsigned cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < n && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += n;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      put_escape(out, 0xD800 + (cp >> 10));
      put_escape(out, 0xDC00 + (cp & 0x3FF));
    } else {
      put_escape(out, cp);
    }
  }
  out += '"';
}

std::string canonical_number(const JsonValue& v) {
  if (v.is_integer_token()) return v.text == "-0" ? "0" : v.text;  // Python ints: exact digits
  return python_float_repr(v.number());
}

void write(std::string& out, const JsonValue& v) {
  switch (v.kind) {
    case JsonValue::Kind::Null:
      out += "null";
      return;
    case JsonValue::Kind::Bool:
      out += v.boolean ? "true" : "false";
      return;
    case JsonValue::Kind::Number:
      out += canonical_number(v);
      return;
    case JsonValue::Kind::String:
      write_string(out, v.text);
      return;
    case JsonValue::Kind::Array:
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += ',';
        write(out, v.items[i]);
      }
      out += ']';
      return;
    case JsonValue::Kind::Object: {
      // Python sorts str keys by code point; UTF-8 byte order is the same order.
      std::vector<const JsonMember*> sorted;
      for (const auto& m : v.members)
        sorted.push_back(&m);
      std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->key < b->key; });
      out += '{';
      for (size_t i = 0; i < sorted.size(); ++i) {
        if (i) out += ',';
        write_string(out, sorted[i]->key);
        out += ':';
        write(out, sorted[i]->value);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

JsonValue parse_receipt_json(std::string_view text) {
  return Parser(text).document();
}

std::string canonical_json(const JsonValue& value) {
  std::string out;
  write(out, value);
  return out;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // shortest round-trip: "-1.2345e+02"
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  int exp10 = std::stoi(sci.substr(e + 1));
  int decpt = exp10 + 1;  // value = 0.DIGITS × 10^decpt
  std::string out = sign;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0." + std::string(size_t(-decpt), '0') + digits;
    } else if (size_t(decpt) >= digits.size()) {
      out += digits + std::string(size_t(decpt) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, size_t(decpt)) + "." + digits.substr(size_t(decpt));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  return out + exp;
}

}  // namespace kd::contract
