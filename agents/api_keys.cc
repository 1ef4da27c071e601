#include "agents/api_keys.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>

namespace kd::agents {
namespace {

std::mutex& keys_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::string>& keys() {
  static std::map<std::string, std::string> k;
  return k;
}

}  // namespace

std::string take_api_key(const std::string& env_name) {
  std::lock_guard lock(keys_mutex());
  // A value present in the environment (first call, or set again since) replaces the
  // remembered one and is removed at once.
  if (const char* v = std::getenv(env_name.c_str())) {
    keys()[env_name] = v;
    ::unsetenv(env_name.c_str());
  }
  auto it = keys().find(env_name);
  return it == keys().end() ? std::string() : it->second;
}

std::vector<std::string> known_secrets() {
  std::lock_guard lock(keys_mutex());
  std::vector<std::string> out;
  for (const auto& [name, value] : keys()) {
    if (!value.empty()) out.push_back(value);
  }
  return out;
}

bool is_secret_env_name(const std::string& name) {
  std::string u = name;
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  return u.find("KEY") != std::string::npos || u.find("TOKEN") != std::string::npos ||
         u.find("SECRET") != std::string::npos;
}

}  // namespace kd::agents
