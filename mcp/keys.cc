#include "mcp/keys.h"

#include <sys/stat.h>

#include <cerrno>
#include <regex>
#include <sstream>

#include "common/errors.h"
#include "common/files.h"
#include "common/text.h"

namespace kd::mcp {

std::map<std::string, std::string> load_keys(const std::filesystem::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) throw_sys("stat", quote(file.string()), errno);
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    throw Error("keys file " + quote(file.string()) + " has mode " + mode +
                ": group and others must have no access (chmod 600)");
  }
  static const std::regex name_re("[A-Za-z_][A-Za-z0-9_]*");
  std::map<std::string, std::string> keys;
  std::istringstream in(read_file(file));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    std::string t(trim(line));
    if (t.empty() || t[0] == '#') continue;
    const std::string where = quote(file.string()) + " line " + std::to_string(n);
    size_t eq = t.find('=');
    if (eq == std::string::npos) throw Error(where + ": expected NAME=value");
    std::string name(trim(std::string_view(t).substr(0, eq)));
    // Bounded first: libstdc++'s regex recurses per character.
    if (name.size() > 128 || !std::regex_match(name, name_re))
      throw Error(where + ": " + quote(name.substr(0, 128)) +
                  " is not an environment variable name");
    if (keys.count(name)) throw Error(where + ": " + name + " is given twice");
    keys[name] =
        std::string(trim(std::string_view(t).substr(eq + 1)));  // the value itself is never echoed
  }
  return keys;
}

}  // namespace kd::mcp
