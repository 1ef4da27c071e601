#include "sandbox/profile.h"

#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/policy_path.h"

namespace kd::sandbox {
namespace {

using nlohmann::json;

// Field access that names the file and the key in every error.
class Reader {
 public:
  Reader(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {
    if (!obj_.is_object()) fail("must be an object");
  }
  void allow_only(const std::set<std::string>& keys) const {
    for (const auto& [key, _] : obj_.items()) {
      if (!keys.count(key)) fail("unknown field \"" + key + "\"");
    }
  }
  bool has(const std::string& key) const { return obj_.contains(key); }
  const json& at(const std::string& key) const {
    if (!obj_.contains(key)) fail("missing field \"" + key + "\"");
    return obj_.at(key);
  }
  std::string string(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string() || v.get<std::string>().empty()) field(key, "must be a non-empty string");
    return v.get<std::string>();
  }
  uint64_t count(const std::string& key, uint64_t max) const {
    const json& v = at(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max) {
      field(key, "must be an integer from 0 to " + std::to_string(max));
    }
    return v.get<uint64_t>();
  }
  double seconds(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 86400) {
      field(key, "must be a number of seconds in (0, 86400]");
    }
    return v.get<double>();
  }
  std::vector<std::string> strings(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) field(key, "must be an array of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() || v[i].get<std::string>().empty()) {
        field(key + "[" + std::to_string(i) + "]", "must be a non-empty string");
      }
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }
  Need need(const std::string& key) const {
    const std::string s = string(key);
    if (s == "required") return Need::Required;
    if (s == "best_effort") return Need::BestEffort;
    if (s == "off") return Need::Off;
    field(key, "must be \"required\", \"best_effort\" or \"off\"");
  }
  [[noreturn]] void field(const std::string& key, const std::string& what) const {
    throw Error(where_ + ": \"" + key + "\" " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(where_ + ": " + what); }
  const std::string& where() const { return where_; }

 private:
  const json& obj_;
  std::string where_;
};

std::filesystem::path absolute_path(const Reader& r, const std::string& key, const std::string& s) {
  std::filesystem::path p(s);
  if (!p.is_absolute() || p.lexically_normal() != p || s.find("/../") != std::string::npos) {
    r.field(key, "entry " + quote(s) + " must be an absolute, normalized path");
  }
  return p;
}

void parse_limits(const json& j, const std::string& where, Limits& out) {
  Reader r(j, where + ": limits");
  r.allow_only({"timeout_s", "output_bytes", "pids", "memory_mb", "address_space_mb", "nofile",
                "fsize_mb", "cpu_s"});
  if (r.has("timeout_s")) out.timeout_s = r.seconds("timeout_s");
  if (r.has("output_bytes")) out.output_bytes = r.count("output_bytes", uint64_t(1) << 32);
  if (r.has("pids")) out.pids = r.count("pids", 1 << 20);
  if (r.has("memory_mb")) out.memory_mb = r.count("memory_mb", uint64_t(1) << 30);
  if (r.has("address_space_mb"))
    out.address_space_mb = r.count("address_space_mb", uint64_t(1) << 30);
  if (r.has("nofile")) out.nofile = r.count("nofile", 1 << 20);
  if (r.has("fsize_mb")) out.fsize_mb = r.count("fsize_mb", uint64_t(1) << 30);
  if (r.has("cpu_s")) out.cpu_s = r.count("cpu_s", 86400 * 7);
  if (out.pids < 8) r.field("pids", "must be at least 8 (a shell and a build need a few)");
  if (out.nofile < 16) r.field("nofile", "must be at least 16");
  if (out.output_bytes == 0) r.field("output_bytes", "must be positive");
}

void parse_env(const json& j, const std::string& where, EnvPolicy& out) {
  Reader r(j, where + ": env");
  r.allow_only({"set", "pass", "deny"});
  if (r.has("set")) {
    const json& s = r.at("set");
    if (!s.is_object()) r.field("set", "must be an object of strings");
    for (const auto& [k, v] : s.items()) {
      if (k.empty() || k.find('=') != std::string::npos || !v.is_string()) {
        r.field("set", "entry " + quote(k) + " must be a variable name with a string value");
      }
      out.set[k] = v.get<std::string>();
    }
  }
  if (r.has("pass")) out.pass = r.strings("pass");
  if (r.has("deny")) out.deny = r.strings("deny");
  for (const auto& [k, _] : out.set) {
    for (const auto& d : out.deny) {
      if (glob_match(d, k)) r.field("set", "sets " + quote(k) + ", which \"deny\" forbids");
    }
  }
}

}  // namespace

Profile parse_profile(const std::string& json_text, const std::filesystem::path& source) {
  const std::string file = source.filename().string();
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw Error(file + ": not JSON: " + e.what());
  }
  Reader r(doc, file);
  r.allow_only({"name", "system_ro", "tmpfs", "dev", "hostname", "landlock", "cgroup",
                "seccomp_notify", "limits", "env"});
  Profile p;
  p.source = source;
  p.name = r.string("name");
  for (const auto& s : r.strings("system_ro"))
    p.system_ro.push_back(absolute_path(r, "system_ro", s));
  const json& tmpfs = r.at("tmpfs");
  if (!tmpfs.is_array()) r.field("tmpfs", "must be an array");
  for (size_t i = 0; i < tmpfs.size(); ++i) {
    Reader t(tmpfs[i], file + ": tmpfs[" + std::to_string(i) + "]");
    t.allow_only({"path", "size_mb"});
    TmpfsMount m{absolute_path(t, "path", t.string("path")), t.count("size_mb", 1 << 20)};
    if (m.size_mb == 0) t.field("size_mb", "must be positive");
    p.tmpfs.push_back(m);
  }
  for (const auto& d : r.strings("dev")) {
    if (d.find('/') != std::string::npos || d == "." || d == "..") {
      r.field("dev", "entry " + quote(d) + " must be a plain name under /dev");
    }
    p.dev.push_back(d);
  }
  if (r.has("hostname")) p.hostname = r.string("hostname");
  p.landlock = r.need("landlock");
  p.cgroup = r.need("cgroup");
  if (r.has("seccomp_notify")) p.seccomp_notify = r.need("seccomp_notify");
  if (r.has("limits")) parse_limits(r.at("limits"), file, p.limits);
  if (r.has("env")) parse_env(r.at("env"), file, p.env);
  return p;
}

Profile load_profile(const std::string& name_or_path) {
  if (name_or_path == "author" || name_or_path == "verifier") {
    const auto path = policy_file("sandbox/" + name_or_path + ".json");
    return parse_profile(read_file(path), path);
  }
  if (name_or_path.find('/') == std::string::npos && name_or_path.find('.') == std::string::npos) {
    throw Error("sandbox profile " + quote(name_or_path) +
                ": not a known profile (author, verifier) nor a file path");
  }
  return parse_profile(read_file(name_or_path), name_or_path);
}

}  // namespace kd::sandbox
