// Strict reading of JSON policy and record files: every error names the file and the field
// ("chips.json: chips[1] (id \"3\"): \"lock\" must be an absolute path"), unknown fields are
// refused, and nothing is defaulted that the caller did not ask to default. Two ways of naming a
// field, so a format keeps the messages its users know: quoted under the object's place
// (`audit.json: rules: x: "enabled" must be true or false`), or as its path from the document's
// top (`audit.json: rules.x.enabled must be true or false`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kd {

// Parses a whole document; throws kd::Error "<where>: not JSON: <parser message>".
nlohmann::json parse_json_document(std::string_view text, const std::string& where);

// How messages name a field.
enum class FieldNames {
  // `<where>: "key" must be ...`; a nested object extends where (`<where>: key: ...`); an absent
  // field is `<where>: missing field "key"`.
  Quoted,
  // `<where>: a.b[2].key must be ...`, the path from the document's top (itself "top level");
  // a message about a nested object is `<where>: a.b: ...`; an absent field is reported as what
  // it must be, as a wrong one is.
  Path,
};

// Field access on one JSON object. `where` prefixes every message ("providers.json",
// "chips.json: chips[0]").
class JsonObjectReader {
 public:
  // Throws unless `obj` is an object.
  JsonObjectReader(const nlohmann::json& obj, std::string where,
                   FieldNames names = FieldNames::Quoted);

  // Refuses any key not in `keys`.
  void allow_only(std::initializer_list<std::string_view> keys) const;
  // The first key (in the object's order) not in `keys`: for a caller whose message says more.
  std::optional<std::string> first_unknown(std::initializer_list<std::string_view> keys) const;
  bool has(const std::string& key) const { return obj_.contains(key); }
  // The raw member; throws naming it when absent.
  const nlohmann::json& at(const std::string& key) const;

  std::string string(const std::string& key) const;  // non-empty
  std::string string_or(const std::string& key, const std::string& fallback) const;
  bool boolean(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  // An integer in [0, max].
  std::uint64_t count(const std::string& key, std::uint64_t max) const;
  // An integer in [min, max].
  std::uint64_t count_in(const std::string& key, std::uint64_t min, std::uint64_t max) const;
  std::uint64_t count_or(const std::string& key, std::uint64_t max, std::uint64_t fallback) const;
  // A finite number in [min, max].
  double number(const std::string& key, double min, double max) const;
  double number_or(const std::string& key, double min, double max, double fallback) const;
  // An array of non-empty strings (empty when absent and `optional`).
  std::vector<std::string> strings(const std::string& key, bool optional = false) const;
  // An object whose values are all strings (empty when absent).
  std::map<std::string, std::string> string_map(const std::string& key) const;
  // An absolute path.
  std::filesystem::path absolute_path(const std::string& key) const;
  // One of `choices`.
  std::string choice(const std::string& key, std::initializer_list<std::string_view> choices) const;
  // The member as an object of its own, `where` extended with the key.
  JsonObjectReader object(const std::string& key) const;
  // Each element of an array member, as objects ("<key>[i]").
  std::vector<JsonObjectReader> objects(const std::string& key) const;

  [[noreturn]] void field_error(const std::string& key, const std::string& what) const;
  [[noreturn]] void error(const std::string& what) const;
  const std::string& where() const { return where_; }
  const nlohmann::json& raw() const { return obj_; }

 private:
  JsonObjectReader(const nlohmann::json& obj, std::string where, std::string path,
                   FieldNames names);
  // The member `key`; when absent, an error saying it is missing or (Path) what it `must` be.
  const nlohmann::json& member(const std::string& key, const std::string& must) const;
  std::string path_of(const std::string& key) const;

  const nlohmann::json& obj_;
  std::string where_;
  std::string path_;  // Path: this object's path from the top ("" there)
  FieldNames names_;
};

}  // namespace kd
