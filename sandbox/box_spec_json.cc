#include "sandbox/box_spec_json.h"

#include <cstring>

#include "common/errors.h"
#include "common/json_read.h"

namespace kd::sandbox {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

json paths(const std::vector<fs::path>& v) {
  json out = json::array();
  for (const auto& p : v)
    out.push_back(p.string());
  return out;
}

std::vector<fs::path> paths_from(const JsonObjectReader& r, const std::string& key) {
  std::vector<fs::path> out;
  for (const auto& s : r.strings(key, true)) {
    if (!fs::path(s).is_absolute()) r.field_error(key, "must hold absolute paths");
    out.emplace_back(s);
  }
  return out;
}

// errno_name's inverse, for the denials a node reports.
int errno_of(const std::string& name) {
  for (int e = 1; e < 200; ++e)
    if (errno_name(e) == name) return e;
  return 0;
}

}  // namespace

json box_spec_json(const BoxSpec& s) {
  const fs::path profile = s.profile.source.empty() ? fs::path(s.profile.name) : s.profile.source;
  return {{"profile", fs::absolute(profile).string()},
          {"worktree", s.worktree.string()},
          {"ro", paths(s.ro)},
          {"rw_extra", paths(s.rw_extra)},
          {"mask", paths(s.mask)}};
}

BoxSpec box_spec_from_json(const json& j, const std::string& where) {
  JsonObjectReader r(j, where);
  r.allow_only({"profile", "worktree", "ro", "rw_extra", "mask"});
  BoxSpec s;
  s.profile = load_profile(r.absolute_path("profile").string());
  s.worktree = r.absolute_path("worktree");
  s.ro = paths_from(r, "ro");
  s.rw_extra = paths_from(r, "rw_extra");
  s.mask = paths_from(r, "mask");
  return s;
}

json run_request_json(const RunRequest& q) {
  return {
      {"argv", q.argv},           {"cwd", q.cwd},         {"env", q.env}, {"use_chip", q.use_chip},
      {"timeout_s", q.timeout_s}, {"stdin", q.stdin_data}};
}

RunRequest run_request_from_json(const json& j, const std::string& where) {
  JsonObjectReader r(j, where);
  r.allow_only({"argv", "cwd", "env", "use_chip", "timeout_s", "stdin"});
  RunRequest q;
  q.argv = r.strings("argv");
  if (r.has("cwd") && !r.at("cwd").is_string()) r.field_error("cwd", "must be a string");
  q.cwd = r.raw().value("cwd", "");
  q.env = r.string_map("env");
  q.use_chip = r.boolean("use_chip");
  q.timeout_s = r.number("timeout_s", 0, 1e9);
  if (r.has("stdin")) {
    if (!r.at("stdin").is_string()) r.field_error("stdin", "must be a string");
    q.stdin_data = r.at("stdin").get<std::string>();
  }
  return q;
}

RunResult run_result_from_json(const json& j, const std::string& where) {
  JsonObjectReader r(j, where);
  RunResult out;
  auto text = [&](const char* key) {
    if (!r.has(key) || !r.at(key).is_string()) r.field_error(key, "must be a string");
    return r.at(key).get<std::string>();
  };
  auto integer = [&](const char* key) {
    if (!r.has(key) || !r.at(key).is_number_integer()) r.field_error(key, "must be an integer");
    return r.at(key).get<int>();
  };
  out.exit_code = integer("exit_code");
  out.signal = integer("signal");
  out.timed_out = r.boolean("timed_out");
  out.killed_by_limit = r.boolean("killed_by_limit");
  if (out.killed_by_limit) out.limit = r.string("limit");
  out.out = text("stdout");
  out.err = text("stderr");
  out.out_truncated = r.boolean("stdout_truncated");
  out.err_truncated = r.boolean("stderr_truncated");
  out.wall_s = r.number("wall_s", 0, 1e12);
  for (const JsonObjectReader& d : r.objects("denials")) {
    Denial den;
    den.layer = d.string("layer");
    den.op = d.string("op");
    den.detail = d.raw().value("detail", "");
    den.path = d.raw().value("path", "");
    if (d.has("errno")) den.err = errno_of(d.string("errno"));
    out.denials.push_back(std::move(den));
  }
  out.unobserved_layers = r.strings("unobserved_layers", true);
  return out;
}

}  // namespace kd::sandbox
