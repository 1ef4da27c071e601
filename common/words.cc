#include "common/words.h"

#include "common/errors.h"

namespace kd {

std::vector<std::string> split_words(const std::string& line, const std::string& what) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char q = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (q) {
      if (c == q) {
        q = 0;
      } else if (c == '\\' && q == '"' && i + 1 < line.size()) {
        cur += line[++i];
      } else {
        cur += c;
      }
    } else if (c == '\'' || c == '"') {
      q = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (q) throw Error(what + ": unterminated quote in " + quote(line));
  if (in_word) words.push_back(cur);
  if (words.empty()) throw Error(what + " is empty");
  return words;
}

}  // namespace kd
