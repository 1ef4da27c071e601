#include "sandbox/env_scrub.h"

#include "common/errors.h"
#include "common/glob.h"

namespace kd::sandbox {
namespace {

bool matches_any(const std::vector<std::string>& patterns, const std::string& name) {
  for (const auto& p : patterns) {
    if (glob_match(p, name)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> build_environment(const EnvPolicy& policy, char** host_env,
                                           const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = host_env; e && *e; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq);
    if (matches_any(policy.pass, name) && !matches_any(policy.deny, name)) {
      env[name] = entry.substr(eq + 1);
    }
  }
  for (const auto& [k, v] : policy.set)
    env[k] = v;
  for (const auto& [k, v] : extra) {
    if (k.empty() || k.find('=') != std::string::npos) {
      throw Error("environment: invalid variable name " + quote(k));
    }
    if (matches_any(policy.deny, k)) {
      throw Error("environment: " + k + " is denied by the sandbox profile");
    }
    env[k] = v;
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env)
    out.push_back(k + "=" + v);
  return out;
}

std::map<std::string, std::string> tool_env(const std::vector<std::filesystem::path>& tool_dirs) {
  if (tool_dirs.empty()) return {};
  std::string path;
  for (const auto& d : tool_dirs)
    path += std::filesystem::absolute(d).string() + ":";
  return {{"PATH", path + "/usr/local/bin:/usr/bin:/bin"}};
}

}  // namespace kd::sandbox
