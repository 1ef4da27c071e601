#include "mcp/arguments.h"

namespace kd::mcp {

using json = nlohmann::json;

namespace {

bool has_type(const json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  return false;
}

void check_value(const std::string& name, const json& schema, const json& value,
                 std::vector<std::string>& out) {
  const std::string type = schema.value("type", "");
  if (!has_type(value, type)) {
    out.push_back("\"" + name + "\" must be " + (type == "integer" ? "an " : "a ") + type +
                  ", got " + value.dump());
    return;
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"])
      found = found || e == value;
    if (!found) out.push_back("\"" + name + "\" must be one of " + schema["enum"].dump());
  }
  if (value.is_number()) {
    if (schema.contains("minimum") && value.get<double>() < schema["minimum"].get<double>())
      out.push_back("\"" + name + "\" must be at least " + schema["minimum"].dump());
    if (schema.contains("maximum") && value.get<double>() > schema["maximum"].get<double>())
      out.push_back("\"" + name + "\" must be at most " + schema["maximum"].dump());
  }
  if (value.is_string() && schema.contains("minLength") &&
      value.get<std::string>().size() < schema["minLength"].get<size_t>())
    out.push_back("\"" + name + "\" must not be empty");
  if (value.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < value.size(); ++i)
      check_value(name + "[" + std::to_string(i) + "]", schema["items"], value[i], out);
  }
}

}  // namespace

std::vector<std::string> check_arguments(const json& schema, const json& arguments) {
  std::vector<std::string> out;
  if (!arguments.is_object()) {
    out.push_back("the arguments must be an object");
    return out;
  }
  const json& props = schema.value("properties", json::object());
  for (const auto& name : schema.value("required", json::array())) {
    if (!arguments.contains(name.get<std::string>()))
      out.push_back("\"" + name.get<std::string>() + "\" is required");
  }
  for (const auto& [name, value] : arguments.items()) {
    if (!props.contains(name)) {
      out.push_back("unknown argument \"" + name + "\"");
      continue;
    }
    check_value(name, props[name], value, out);
  }
  return out;
}

}  // namespace kd::mcp
