#include "verify/verify_command.h"

#include "common/errors.h"
#include "common/words.h"

namespace kd::verify {
namespace {

std::string substitute(const std::string& word, const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t i = 0; i < word.size();) {
    if (word[i] == '{') {
      size_t close = word.find('}', i);
      if (close == std::string::npos) throw Error("verify command: unclosed '{' in " + quote(word));
      std::string name = word.substr(i + 1, close - i - 1);
      auto it = values.find(name);
      if (it == values.end()) {
        std::string known;
        for (const auto& [k, _] : values)
          known += (known.empty() ? "" : ", ") + ("{" + k + "}");
        throw Error("verify command: unknown placeholder {" + name + "} (known: " + known + ")");
      }
      out += it->second;
      i = close + 1;
    } else {
      out += word[i++];
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_verify_command(const std::string& tmpl,
                                               const std::map<std::string, std::string>& values) {
  std::vector<std::string> words = split_words(tmpl, "verify command");
  for (auto& w : words)
    w = substitute(w, values);
  return words;
}

std::optional<std::string> external_verify_template(const std::string& cmd) {
  if (cmd.empty()) return std::nullopt;
  return cmd == "kgate" ? std::string(kKgateTemplate) : cmd;
}

}  // namespace kd::verify
