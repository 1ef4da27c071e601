#include "audit/context.h"

#include <cstdio>
#include <ctime>

namespace kd::audit {

bool path_within(std::string_view path, std::string_view dir) {
  if (dir.empty()) return false;
  if (dir == "/") return !path.empty() && path[0] == '/';
  if (path.substr(0, dir.size()) != dir) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

std::optional<double> parse_rfc3339(std::string_view ts) {
  std::string s(ts);
  int y, mo, d, h, mi, sec, n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) !=
          6 ||
      n == 0)
    return std::nullopt;
  double frac = 0;
  size_t i = size_t(n);
  if (i < s.size() && s[i] == '.') {
    double scale = 0.1;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, scale /= 10)
      frac += (s[i] - '0') * scale;
  }
  int offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    offset = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return double(timegm(&tm)) + frac - offset;
}

}  // namespace kd::audit
