#include "sandbox/profile.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/json_read.h"
#include "common/policy_path.h"

namespace kd::sandbox {
namespace {

using nlohmann::json;

double seconds(const JsonObjectReader& r, const std::string& key) {
  const json& v = r.at(key);
  if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 86400) {
    r.field_error(key, "must be a number of seconds in (0, 86400]");
  }
  return v.get<double>();
}

Need need(const JsonObjectReader& r, const std::string& key) {
  r.string(key);  // a non-string is named as such before the choices are listed
  const std::string s = r.choice(key, {"required", "best_effort", "off"});
  if (s == "required") return Need::Required;
  return s == "best_effort" ? Need::BestEffort : Need::Off;
}

std::filesystem::path absolute_path(const JsonObjectReader& r, const std::string& key,
                                    const std::string& s) {
  std::filesystem::path p(s);
  if (!p.is_absolute() || p.lexically_normal() != p || s.find("/../") != std::string::npos) {
    r.field_error(key, "entry " + quote(s) + " must be an absolute, normalized path");
  }
  return p;
}

void parse_limits(const JsonObjectReader& r, Limits& out) {
  r.allow_only({"timeout_s", "output_bytes", "pids", "memory_mb", "address_space_mb", "nofile",
                "fsize_mb", "cpu_s"});
  if (r.has("timeout_s")) out.timeout_s = seconds(r, "timeout_s");
  if (r.has("output_bytes")) out.output_bytes = r.count("output_bytes", uint64_t(1) << 32);
  if (r.has("pids")) out.pids = r.count("pids", 1 << 20);
  if (r.has("memory_mb")) out.memory_mb = r.count("memory_mb", uint64_t(1) << 30);
  if (r.has("address_space_mb"))
    out.address_space_mb = r.count("address_space_mb", uint64_t(1) << 30);
  if (r.has("nofile")) out.nofile = r.count("nofile", 1 << 20);
  if (r.has("fsize_mb")) out.fsize_mb = r.count("fsize_mb", uint64_t(1) << 30);
  if (r.has("cpu_s")) out.cpu_s = r.count("cpu_s", 86400 * 7);
  if (out.pids < 8) r.field_error("pids", "must be at least 8 (a shell and a build need a few)");
  if (out.nofile < 16) r.field_error("nofile", "must be at least 16");
  if (out.output_bytes == 0) r.field_error("output_bytes", "must be positive");
}

void parse_env(const JsonObjectReader& r, EnvPolicy& out) {
  r.allow_only({"set", "pass", "deny"});
  if (r.has("set")) {
    const json& s = r.at("set");
    if (!s.is_object()) r.field_error("set", "must be an object of strings");
    for (const auto& [k, v] : s.items()) {
      if (k.empty() || k.find('=') != std::string::npos || !v.is_string()) {
        r.field_error("set", "entry " + quote(k) + " must be a variable name with a string value");
      }
      out.set[k] = v.get<std::string>();
    }
  }
  if (r.has("pass")) out.pass = r.strings("pass");
  if (r.has("deny")) out.deny = r.strings("deny");
  for (const auto& [k, _] : out.set) {
    for (const auto& d : out.deny) {
      if (glob_match(d, k)) r.field_error("set", "sets " + quote(k) + ", which \"deny\" forbids");
    }
  }
}

}  // namespace

Profile parse_profile(const std::string& json_text, const std::filesystem::path& source) {
  const std::string file = source.filename().string();
  const json doc = parse_json_document(json_text, file);
  JsonObjectReader r(doc, file);
  r.allow_only({"name", "system_ro", "tmpfs", "dev", "hostname", "landlock", "cgroup",
                "seccomp_notify", "limits", "env"});
  Profile p;
  p.source = source;
  p.name = r.string("name");
  for (const auto& s : r.strings("system_ro"))
    p.system_ro.push_back(absolute_path(r, "system_ro", s));
  const json& tmpfs = r.at("tmpfs");
  if (!tmpfs.is_array()) r.field_error("tmpfs", "must be an array");
  for (const JsonObjectReader& t : r.objects("tmpfs")) {
    t.allow_only({"path", "size_mb"});
    TmpfsMount m{absolute_path(t, "path", t.string("path")), t.count("size_mb", 1 << 20)};
    if (m.size_mb == 0) t.field_error("size_mb", "must be positive");
    p.tmpfs.push_back(m);
  }
  for (const auto& d : r.strings("dev")) {
    if (d.find('/') != std::string::npos || d == "." || d == "..") {
      r.field_error("dev", "entry " + quote(d) + " must be a plain name under /dev");
    }
    p.dev.push_back(d);
  }
  if (r.has("hostname")) p.hostname = r.string("hostname");
  p.landlock = need(r, "landlock");
  p.cgroup = need(r, "cgroup");
  if (r.has("seccomp_notify")) p.seccomp_notify = need(r, "seccomp_notify");
  if (r.has("limits")) parse_limits(r.object("limits"), p.limits);
  if (r.has("env")) parse_env(r.object("env"), p.env);
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
