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
    throw InputError(where + ": not JSON: " + e.what());
  }
}

JsonObjectReader::JsonObjectReader(const json& obj, std::string where, FieldNames names)
    : JsonObjectReader(obj, std::move(where), "", names) {}

JsonObjectReader::JsonObjectReader(const json& obj, std::string where, std::string path,
                                   FieldNames names)
    : obj_(obj), where_(std::move(where)), path_(std::move(path)), names_(names) {
  if (obj_.is_object()) return;
  if (names_ == FieldNames::Quoted) error("must be an object");
  throw InputError(where_ + ": " + (path_.empty() ? "top level" : path_) + " must be an object");
}

std::string JsonObjectReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

const json& JsonObjectReader::member(const std::string& key, const std::string& must) const {
  auto it = obj_.find(key);
  if (it != obj_.end()) return *it;
  if (names_ == FieldNames::Path) field_error(key, must);
  error("missing field \"" + key + "\"");
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
  return member(key, "is missing");
}

std::string JsonObjectReader::string(const std::string& key) const {
  const json& v = member(key, "must be a non-empty string");
  if (!v.is_string() || v.get_ref<const std::string&>().empty())
    field_error(key, "must be a non-empty string");
  return v.get<std::string>();
}

std::string JsonObjectReader::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

bool JsonObjectReader::boolean(const std::string& key) const {
  const json& v = member(key, "must be true or false");
  if (!v.is_boolean()) field_error(key, "must be true or false");
  return v.get<bool>();
}

bool JsonObjectReader::boolean_or(const std::string& key, bool fallback) const {
  return has(key) ? boolean(key) : fallback;
}

std::uint64_t JsonObjectReader::count(const std::string& key, std::uint64_t max) const {
  return count_in(key, 0, max);
}

std::uint64_t JsonObjectReader::count_in(const std::string& key, std::uint64_t min,
                                         std::uint64_t max) const {
  const std::string must =
      "must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
  const json& v = member(key, must);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < min || v.get<std::uint64_t>() > max)
    field_error(key, must);
  return v.get<std::uint64_t>();
}

std::uint64_t JsonObjectReader::count_or(const std::string& key, std::uint64_t max,
                                         std::uint64_t fallback) const {
  return has(key) ? count(key, max) : fallback;
}

double JsonObjectReader::number(const std::string& key, double min, double max) const {
  char must[96];
  std::snprintf(must, sizeof must, "must be a number from %g to %g", min, max);
  const json& v = member(key, must);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < min ||
      v.get<double>() > max)
    field_error(key, must);
  return v.get<double>();
}

double JsonObjectReader::number_or(const std::string& key, double min, double max,
                                   double fallback) const {
  return has(key) ? number(key, min, max) : fallback;
}

std::vector<std::string> JsonObjectReader::strings(const std::string& key, bool optional) const {
  if (optional && !has(key)) return {};
  const json& v = member(key, "must be an array of strings");
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
  const json& v = obj_.at(key);
  if (!v.is_object()) field_error(key, "must be an object of strings");
  for (const auto& [k, value] : v.items()) {
    if (!value.is_string()) field_error(key + "." + k, "must be a string");
    out[k] = value.get<std::string>();
  }
  return out;
}

std::filesystem::path JsonObjectReader::absolute_path(const std::string& key) const {
  const json& v = member(key, "must be an absolute path");
  if (!v.is_string() || !std::filesystem::path(v.get<std::string>()).is_absolute())
    field_error(key, "must be an absolute path");
  return v.get<std::string>();
}

std::string JsonObjectReader::choice(const std::string& key,
                                     std::initializer_list<std::string_view> choices) const {
  std::string must = "must be ";
  size_t i = 0;
  for (std::string_view c : choices)
    must += (i++ == 0 ? "" : i == choices.size() ? " or " : ", ") + ("\"" + std::string(c) + "\"");
  const json& v = member(key, must);
  if (v.is_string()) {
    for (std::string_view c : choices)
      if (c == v.get_ref<const std::string&>()) return std::string(c);
  }
  field_error(key, must);
}

JsonObjectReader JsonObjectReader::object(const std::string& key) const {
  if (names_ == FieldNames::Quoted) return JsonObjectReader(at(key), where_ + ": " + key);
  return JsonObjectReader(member(key, "must be an object"), where_, path_of(key), names_);
}

std::vector<JsonObjectReader> JsonObjectReader::objects(const std::string& key) const {
  const json& v = member(key, "must be an array of objects");
  if (!v.is_array()) field_error(key, "must be an array of objects");
  std::vector<JsonObjectReader> out;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string element = key + "[" + std::to_string(i) + "]";
    if (names_ == FieldNames::Quoted)
      out.push_back(JsonObjectReader(v[i], where_ + ": " + element));
    else
      out.push_back(JsonObjectReader(v[i], where_, path_of(element), names_));
  }
  return out;
}

void JsonObjectReader::field_error(const std::string& key, const std::string& what) const {
  if (names_ == FieldNames::Quoted) throw InputError(where_ + ": \"" + key + "\" " + what);
  throw InputError(where_ + ": " + path_of(key) + " " + what);
}

void JsonObjectReader::error(const std::string& what) const {
  throw InputError(where_ + ": " + (path_.empty() ? "" : path_ + ": ") + what);
}

}  // namespace kd
