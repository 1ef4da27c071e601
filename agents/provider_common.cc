#include "agents/provider.h"

namespace kd::agents {

ErrorBody parse_error_body(std::string_view body) {
  ErrorBody out;
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.type = "non_json_body";
    out.message = std::string(body.substr(0, 200));
    return out;
  }
  const nlohmann::json* e = &j;
  if (j.contains("error") && j["error"].is_object()) e = &j["error"];
  if (e->contains("type") && (*e)["type"].is_string()) out.type = (*e)["type"];
  if (e->contains("code") && (*e)["code"].is_string()) {
    // OpenAI puts the actionable value (insufficient_quota, rate_limit_exceeded) in code.
    out.type = (*e)["code"];
  }
  if (e->contains("message") && (*e)["message"].is_string()) out.message = (*e)["message"];
  return out;
}

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

const nlohmann::json* object_member(const nlohmann::json& j, const char* key) {
  const nlohmann::json* m = member(j, key);
  return m && m->is_object() ? m : nullptr;
}

std::string_view string_member(const nlohmann::json& j, const char* key) {
  const nlohmann::json* m = member(j, key);
  return m && m->is_string() ? std::string_view(m->get_ref<const std::string&>())
                             : std::string_view();
}

void set_tool_arguments(ToolCall& call, std::string raw) {
  call.input_raw = std::move(raw);
  if (call.input_raw.empty()) {
    call.input = nlohmann::json::object();
    call.input_is_json = true;
    return;
  }
  nlohmann::json j = nlohmann::json::parse(call.input_raw, nullptr, false);
  call.input_is_json = !j.is_discarded() && j.is_object();
  call.input = call.input_is_json ? std::move(j) : nlohmann::json::object();
}

}  // namespace kd::agents
