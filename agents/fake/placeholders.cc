#include "agents/fake/placeholders.h"

#include <time.h>

#include <regex>

#include "common/errors.h"

namespace kd::agents::fake {

using json = nlohmann::json;

namespace {

// {{experiment}}: the dispatcher's first message names it ("Author the candidates of <slug>
// vNNN").
std::string experiment(const std::smatch& m, const RequestResults& r) {
  static const std::regex named(R"(candidates of ([a-z0-9-]+ v[0-9]{3}))");
  std::smatch e;
  if (!std::regex_search(r.first_user, e, named))
    throw Error("placeholder " + m.str(0) + ": the first user message names no experiment");
  return e[1].str();
}

// The tool result a placeholder names: the last one, or the one with its id.
const std::string& named_result(const std::smatch& m, const RequestResults& r) {
  if (m[1] == "last_result") {
    if (!r.any) throw Error("placeholder " + m.str(0) + ": the request carries no tool result");
    return r.last;
  }
  auto f = r.by_id.find(m[2]);
  if (f == r.by_id.end())
    throw Error("placeholder " + m.str(0) + ": no tool result with id " + m[2].str());
  return f->second;
}

// The text one placeholder stands for: a result without its trailing blanks, or one key of a
// result that is a JSON object.
std::string placeholder_value(const std::smatch& m, const RequestResults& r) {
  if (m[1] == "experiment") return experiment(m, r);
  std::string content = named_result(m, r);
  if (!m[3].matched) {
    while (!content.empty() && (content.back() == '\n' || content.back() == ' '))
      content.pop_back();
    return content;
  }
  json j = json::parse(content, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains(m[3].str())) {
    throw Error("placeholder " + m.str(0) + ": the tool result is not a JSON object with key " +
                m[3].str());
  }
  const json& v = j[m[3].str()];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::string interpolate(const std::string& s, const RequestResults& r) {
  static const std::regex re(
      R"(\{\{\s*(last_result|experiment|result\.([A-Za-z0-9_-]+))(?:\.([A-Za-z0-9_]+))?\s*\}\})");
  std::string out;
  size_t pos = 0;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += s.substr(pos, m.position(0) - pos);
    pos = m.position(0) + m.length(0);
    out += placeholder_value(m, r);
  }
  out += s.substr(pos);
  return out;
}

json interpolate_json(const json& j, const RequestResults& r) {
  if (j.is_string()) return interpolate(j.get<std::string>(), r);
  if (j.is_array() || j.is_object()) {
    json out = j;
    for (auto& v : out)
      v = interpolate_json(v, r);
    return out;
  }
  return j;
}

std::string stamp_now(std::string s) {
  static constexpr std::string_view kNow = "{{now_us}}";
  for (size_t p = s.find(kNow); p != std::string::npos; p = s.find(kNow, p)) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s.replace(p, kNow.size(), std::to_string(ts.tv_sec * 1'000'000LL + ts.tv_nsec / 1000));
  }
  return s;
}

}  // namespace kd::agents::fake
