#include "common/time.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace kd {
namespace {

// The number in ts[pos, pos + n) when all n characters are digits.
std::optional<int> digits(std::string_view ts, size_t pos, size_t n) {
  if (pos + n > ts.size()) return std::nullopt;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (ts[i] < '0' || ts[i] > '9') return std::nullopt;
    v = v * 10 + (ts[i] - '0');
  }
  return v;
}

bool at(std::string_view ts, size_t pos, std::string_view chars) {
  return pos < ts.size() && chars.find(ts[pos]) != std::string_view::npos;
}

int days_in_month(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

// Strict: fixed-width digit fields in range, so a forged or mangled stamp is refused rather than
// normalized into some other time.
std::optional<double> parse_rfc3339(std::string_view ts) {
  auto y = digits(ts, 0, 4), mo = digits(ts, 5, 2), d = digits(ts, 8, 2);
  auto h = digits(ts, 11, 2), mi = digits(ts, 14, 2), sec = digits(ts, 17, 2);
  if (!y || !mo || !d || !h || !mi || !sec || !at(ts, 4, "-") || !at(ts, 7, "-") ||
      !at(ts, 10, "Tt ") || !at(ts, 13, ":") || !at(ts, 16, ":"))
    return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo) || *h > 23 || *mi > 59 ||
      *sec > 60)  // 60: a leap second
    return std::nullopt;
  size_t i = 19;
  double frac = 0;
  if (at(ts, i, ".")) {
    size_t first = ++i;
    for (double scale = 0.1; at(ts, i, "0123456789"); ++i, scale /= 10)
      frac += (ts[i] - '0') * scale;
    if (i == first) return std::nullopt;
  }
  int offset = 0;
  if (at(ts, i, "Zz")) {
    ++i;
  } else if (at(ts, i, "+-")) {
    auto oh = digits(ts, i + 1, 2), om = digits(ts, i + 4, 2);
    if (!oh || !om || !at(ts, i + 3, ":") || *oh > 23 || *om > 59) return std::nullopt;
    offset = (ts[i] == '+' ? 1 : -1) * (*oh * 3600 + *om * 60);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != ts.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = *y - 1900;
  tm.tm_mon = *mo - 1;
  tm.tm_mday = *d;
  tm.tm_hour = *h;
  tm.tm_min = *mi;
  tm.tm_sec = *sec;
  return double(timegm(&tm)) + frac - offset;
}

std::string format_rfc3339_ms(std::int64_t unix_ms) {
  std::int64_t s = unix_ms / 1000, ms = unix_ms % 1000;
  if (ms < 0) ms += 1000, --s;
  std::time_t t = static_cast<std::time_t>(s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
  return buf;
}

std::string format_rfc3339_s(std::int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

std::string utc_now_rfc3339() {
  using namespace std::chrono;
  return format_rfc3339_ms(
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

}  // namespace kd
