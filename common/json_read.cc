#include "common/json_read.h"

#include <cmath>
#include <cstdio>

#include "common/errors.h"

namespace kd {

using nlohmann::json;

json parse_json_document(std::string_view text, const std::string& where) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(where + ": not JSON: " + e.what());
  }
}

JsonObjectReader::JsonObjectReader(const json& obj, std::string where)
    : obj_(obj), where_(std::move(where)) {
  if (!obj_.is_object()) error("must be an object");
}

void JsonObjectReader::allow_only(std::initializer_list<std::string_view> keys) const {
  if (std::optional<std::string> key = first_unknown(keys)) error("unknown field \"" + *key + "\"");
}

std::optional<std::string> JsonObjectReader::first_unknown(
    std::initializer_list<std::string_view> keys) const {
  for (const auto& [key, _] : obj_.items()) {
    bool known = false;
    for (std::string_view k : keys)
      known = known || k == key;
    if (!known) return key;
  }
  return std::nullopt;
}

const json& JsonObjectReader::at(const std::string& key) const {
  auto it = obj_.find(key);
  if (it == obj_.end()) error("missing field \"" + key + "\"");
  return *it;
}

std::string JsonObjectReader::string(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_string() || v.get_ref<const std::string&>().empty())
    field_error(key, "must be a non-empty string");
  return v.get<std::string>();
}

std::string JsonObjectReader::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

bool JsonObjectReader::boolean_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& v = at(key);
  if (!v.is_boolean()) field_error(key, "must be true or false");
  return v.get<bool>();
}

std::uint64_t JsonObjectReader::count(const std::string& key, std::uint64_t max) const {
  const json& v = at(key);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
    field_error(key, "must be an integer from 0 to " + std::to_string(max));
  return v.get<std::uint64_t>();
}

std::uint64_t JsonObjectReader::count_or(const std::string& key, std::uint64_t max,
                                         std::uint64_t fallback) const {
  return has(key) ? count(key, max) : fallback;
}

double JsonObjectReader::number(const std::string& key, double min, double max) const {
  const json& v = at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < min ||
      v.get<double>() > max) {
    char range[96];
    std::snprintf(range, sizeof range, "must be a number from %g to %g", min, max);
    field_error(key, range);
  }
  return v.get<double>();
}

double JsonObjectReader::number_or(const std::string& key, double min, double max,
                                   double fallback) const {
  return has(key) ? number(key, min, max) : fallback;
}

std::vector<std::string> JsonObjectReader::strings(const std::string& key, bool optional) const {
  if (optional && !has(key)) return {};
  const json& v = at(key);
  if (!v.is_array()) field_error(key, "must be an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || v[i].get_ref<const std::string&>().empty())
      field_error(key + "[" + std::to_string(i) + "]", "must be a non-empty string");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::map<std::string, std::string> JsonObjectReader::string_map(const std::string& key) const {
  std::map<std::string, std::string> out;
  if (!has(key)) return out;
  const json& v = at(key);
  if (!v.is_object()) field_error(key, "must be an object of strings");
  for (const auto& [k, value] : v.items()) {
    if (!value.is_string()) field_error(key + "." + k, "must be a string");
    out[k] = value.get<std::string>();
  }
  return out;
}

std::filesystem::path JsonObjectReader::absolute_path(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_string() || !std::filesystem::path(v.get<std::string>()).is_absolute())
    field_error(key, "must be an absolute path");
  return v.get<std::string>();
}

std::string JsonObjectReader::choice(const std::string& key,
                                     std::initializer_list<std::string_view> choices) const {
  const json& v = at(key);
  if (v.is_string()) {
    for (std::string_view c : choices)
      if (c == v.get_ref<const std::string&>()) return std::string(c);
  }
  std::string list;
  size_t i = 0;
  for (std::string_view c : choices)
    list += (i++ == 0 ? "" : i == choices.size() ? " or " : ", ") + ("\"" + std::string(c) + "\"");
  field_error(key, "must be " + list);
}

JsonObjectReader JsonObjectReader::object(const std::string& key) const {
  return JsonObjectReader(at(key), where_ + ": " + key);
}

std::vector<JsonObjectReader> JsonObjectReader::objects(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_array()) field_error(key, "must be an array of objects");
  std::vector<JsonObjectReader> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.emplace_back(v[i], where_ + ": " + key + "[" + std::to_string(i) + "]");
  return out;
}

void JsonObjectReader::field_error(const std::string& key, const std::string& what) const {
  throw Error(where_ + ": \"" + key + "\" " + what);
}

void JsonObjectReader::error(const std::string& what) const {
  throw Error(where_ + ": " + what);
}

}  // namespace kd
