// The fake server's script placeholders (docs/fake-llm.md): {{last_result}},
// {{last_result.KEY}}, {{result.ID}}, {{result.ID.KEY}} and {{experiment}} are filled from the
// request being answered; {{now_us}} is stamped when the bytes are written.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace kd::agents::fake {

// What a request's conversation holds for the placeholders: its tool results (id -> content,
// and the last one) and its first user message.
struct RequestResults {
  std::map<std::string, std::string> by_id;
  std::string last;
  bool any = false;
  std::string first_user;
};

// Fills the placeholders of `s`. Throws kd::Error naming a placeholder the request cannot fill.
std::string interpolate(const std::string& s, const RequestResults& r);
// The same for every string inside `j`.
nlohmann::json interpolate_json(const nlohmann::json& j, const RequestResults& r);
// Replaces each {{now_us}} by the monotonic clock in microseconds.
std::string stamp_now(std::string s);

}  // namespace kd::agents::fake
