#include "audit/shell_scan.h"

#include <filesystem>
#include <vector>

namespace kd::audit {
namespace {

struct Token {
  std::string text;
  bool op = false;  // a control operator or a redirection, not a word
};

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

// Splits shell text into words (quotes removed, escapes applied) and operators. Heredoc bodies
// are skipped: they are data, not commands.
std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::vector<std::string> pending_heredocs;
  size_t i = 0;
  auto skip_heredocs = [&] {
    for (const auto& delim : pending_heredocs) {
      for (;;) {
        size_t eol = s.find('\n', i);
        std::string_view line =
            s.substr(i, eol == std::string_view::npos ? std::string_view::npos : eol - i);
        while (!line.empty() && line.front() == '\t')
          line.remove_prefix(1);
        i = eol == std::string_view::npos ? s.size() : eol + 1;
        if (line == delim || i >= s.size()) break;
      }
    }
    pending_heredocs.clear();
  };
  while (i < s.size()) {
    char c = s[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    if (c == '#') {  // comment to end of line
      while (i < s.size() && s[i] != '\n')
        ++i;
      continue;
    }
    if (c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' || c == ')') {
      std::string_view two = s.substr(i, 2);
      size_t len = (two == "&&" || two == "||" || two == "&>") ? 2 : 1;
      std::string op(s.substr(i, len));
      i += len;
      if (op == "&>") {
        out.push_back({">", true});
        continue;
      }
      out.push_back({op == "\n" ? ";" : op, true});
      if (c == '\n') skip_heredocs();
      continue;
    }
    if (c == '>' || c == '<' ||
        ((c >= '0' && c <= '9') && i + 1 < s.size() && (s[i + 1] == '>' || s[i + 1] == '<'))) {
      size_t j = i;
      if (c >= '0' && c <= '9') ++j;
      std::string op(1, s[j]);
      ++j;
      while (j < s.size() &&
             (s[j] == '>' || s[j] == '<' || s[j] == '|' || s[j] == '-' || s[j] == '&'))
        op += s[j++];
      i = j;
      if (op.rfind("<<", 0) == 0 && op != "<<<") {
        out.push_back({"<<", true});
        continue;
      }
      // ">&2", "2>&1", "<&-" duplicate or close descriptors and name no file.
      if (op.back() == '&' && i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '-')) {
        while (i < s.size() && !is_space(s[i]) && s[i] != ';' && s[i] != '|' && s[i] != '&')
          ++i;
        continue;
      }
      out.push_back({op[0] == '>' ? ">" : "<", true});
      continue;
    }
    std::string word;
    while (i < s.size()) {
      char d = s[i];
      if (is_space(d) || d == '\n' || d == ';' || d == '|' || d == '&' || d == '>' || d == '<' ||
          d == '(' || d == ')')
        break;
      if (d == '\'') {
        size_t end = s.find('\'', i + 1);
        if (end == std::string_view::npos) end = s.size();
        word.append(s.substr(i + 1, end - i - 1));
        i = end + 1;
      } else if (d == '"') {
        ++i;
        while (i < s.size() && s[i] != '"') {
          if (s[i] == '\\' && i + 1 < s.size() &&
              (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$'))
            ++i;
          word += s[i++];
        }
        ++i;
      } else if (d == '\\' && i + 1 < s.size()) {
        word += s[i + 1];
        i += 2;
      } else {
        word += d;
        ++i;
      }
    }
    if (!out.empty() && out.back().op && out.back().text == "<<") {
      pending_heredocs.push_back(word);
      out.pop_back();
      continue;
    }
    out.push_back({word, false});
  }
  return out;
}

std::string base_name(const std::string& w) {
  size_t slash = w.rfind('/');
  return slash == std::string::npos ? w : w.substr(slash + 1);
}

bool is_device(const std::string& p) {
  return p.rfind("/dev/", 0) == 0 || p.rfind("/proc/self/fd", 0) == 0;
}

class Scanner {
 public:
  Scanner(std::string cwd, const std::function<void(Event)>& emit)
      : cwd_(std::move(cwd)), emit_(emit) {}

  void run(std::string_view command, int depth) {
    std::vector<Token> toks = tokenize(command);
    std::vector<std::string> words;
    for (size_t i = 0; i <= toks.size(); ++i) {
      if (i == toks.size() || (toks[i].op && toks[i].text != ">" && toks[i].text != "<")) {
        simple(words, depth);
        words.clear();
        continue;
      }
      if (toks[i].op) {  // a redirection: the next word is its file
        if (i + 1 < toks.size() && !toks[i + 1].op) {
          const std::string& target = toks[i + 1].text;
          if (!is_device(target))
            put(toks[i].text == ">" ? EventKind::FileWrite : EventKind::FileRead, target,
                "redirect");
          ++i;
        }
        continue;
      }
      words.push_back(toks[i].text);
    }
  }

 private:
  void put(EventKind kind, const std::string& path, const std::string& tool,
           std::string text = "") {
    if (path.empty() || path == "-") return;
    Event e;
    e.kind = kind;
    e.path = kind == EventKind::Commit ? "" : resolve_path(cwd_, path);
    e.cwd = cwd_;
    e.tool = tool;
    e.text = std::move(text);
    emit_(std::move(e));
  }

  static std::vector<std::string> operands(const std::vector<std::string>& w, size_t from,
                                           bool numeric_values) {
    std::vector<std::string> out;
    for (size_t i = from; i < w.size(); ++i) {
      if (w[i].size() > 1 && w[i][0] == '-') {
        // Options like `-n 20` take a value; skip a following bare number.
        if (numeric_values && i + 1 < w.size() && !w[i + 1].empty() &&
            w[i + 1].find_first_not_of("0123456789+-") == std::string::npos)
          ++i;
        continue;
      }
      out.push_back(w[i]);
    }
    return out;
  }

  void simple(std::vector<std::string> w, int depth) {
    // Drop environment assignments and wrappers that run the rest as a command.
    size_t k = 0;
    while (k < w.size()) {
      const std::string b = base_name(w[k]);
      if (w[k].find('=') != std::string::npos && w[k][0] != '-' && w[k][0] != '=')
        ++k;
      else if (b == "sudo" || b == "env" || b == "time" || b == "nohup" || b == "exec" ||
               b == "command")
        ++k;
      else if (b == "timeout" && k + 1 < w.size())
        k += 2;
      else
        break;
    }
    if (k >= w.size()) return;
    w.erase(w.begin(), w.begin() + k);
    const std::string cmd = base_name(w[0]);
    if ((cmd == "bash" || cmd == "sh" || cmd == "zsh" || cmd == "dash") && depth < 4) {
      for (size_t i = 1; i + 1 < w.size(); ++i)
        if (w[i].size() > 1 && w[i][0] == '-' && w[i].find('c') != std::string::npos) {
          run(w[i + 1], depth + 1);
          return;
        }
      return;
    }
    if (cmd == "cd") {
      if (w.size() > 1 && w[1] != "-" && w[1][0] != '~') cwd_ = resolve_path(cwd_, w[1]);
      return;
    }
    if (cmd == "apply_patch" && w.size() > 1) {
      scan_apply_patch(w[1], cwd_, emit_);
      return;
    }
    if (cmd == "tee" || cmd == "touch" || cmd == "rm" || cmd == "truncate" || cmd == "mkdir" ||
        cmd == "rmdir") {
      for (const auto& p : operands(w, 1, false))
        put(EventKind::FileWrite, p, cmd);
      return;
    }
    if (cmd == "cp" || cmd == "mv" || cmd == "ln" || cmd == "install" || cmd == "rsync") {
      auto ops = operands(w, 1, false);
      if (ops.size() < 2) return;
      for (size_t i = 0; i + 1 < ops.size(); ++i)
        put(cmd == "mv" ? EventKind::FileWrite : EventKind::FileRead, ops[i], cmd);
      put(EventKind::FileWrite, ops.back(), cmd);
      return;
    }
    if (cmd == "sed" || cmd == "perl") {
      bool in_place = false, script_given = false;
      std::vector<std::string> files;
      for (size_t i = 1; i < w.size(); ++i) {
        const std::string& a = w[i];
        if (a.rfind("-i", 0) == 0 || a.rfind("--in-place", 0) == 0 ||
            (cmd == "perl" && a.rfind("-pi", 0) == 0))
          in_place = true;
        if (a == "-e" || a == "-f" || a == "--expression") {
          script_given = true;
          ++i;
        } else if (a.size() > 1 && a[0] == '-') {
          if (cmd == "perl" && a.find('e') != std::string::npos) {
            script_given = true;
            ++i;
          }
        } else if (!script_given) {
          script_given = true;  // the first operand is the script
        } else {
          files.push_back(a);
        }
      }
      for (const auto& f : files)
        put(in_place ? EventKind::FileWrite : EventKind::FileRead, f, cmd);
      return;
    }
    if (cmd == "cat" || cmd == "head" || cmd == "tail" || cmd == "less" || cmd == "more" ||
        cmd == "nl" || cmd == "wc" || cmd == "diff" || cmd == "cmp" || cmd == "xxd" ||
        cmd == "od" || cmd == "strings" || cmd == "sha256sum" || cmd == "md5sum" ||
        cmd == "base64" || cmd == "view" || cmd == "bat") {
      for (const auto& p : operands(w, 1, true))
        put(EventKind::FileRead, p, cmd);
      return;
    }
    if (cmd == "grep" || cmd == "rg" || cmd == "egrep" || cmd == "fgrep") {
      auto ops = operands(w, 1, true);
      for (size_t i = 1; i < ops.size(); ++i)
        put(EventKind::FileRead, ops[i], cmd);
      return;
    }
    if (cmd == "git") git(w);
  }

  void git(const std::vector<std::string>& w) {
    size_t i = 1;
    while (i < w.size() && w[i][0] == '-')
      i += (w[i] == "-C" || w[i] == "-c") ? 2 : 1;
    if (i >= w.size() || w[i] != "commit") return;
    std::string message;
    bool has_message = false;
    auto add = [&](const std::string& part) {
      if (has_message) message += "\n\n";
      message += part;
      has_message = true;
    };
    for (++i; i < w.size(); ++i) {
      const std::string& a = w[i];
      if ((a == "-m" || a == "--message") && i + 1 < w.size())
        add(w[++i]);
      else if (a.rfind("--message=", 0) == 0)
        add(a.substr(10));
      else if (a.rfind("-m", 0) == 0 && a.size() > 2 && a[1] == 'm')
        add(a.substr(2));
      else if (a.size() > 2 && a[0] == '-' && a[1] != '-' && a.back() == 'm' && i + 1 < w.size())
        add(w[++i]);  // -am MSG
    }
    if (!has_message) return;  // message from an editor or a file: not recoverable here
    Event e;
    e.kind = EventKind::Commit;
    e.cwd = cwd_;
    e.tool = "git commit";
    e.text = message;
    emit_(std::move(e));
  }

  std::string cwd_;
  const std::function<void(Event)>& emit_;
};

}  // namespace

std::string resolve_path(std::string_view cwd, std::string_view path) {
  std::filesystem::path p(path);
  if (p.is_relative() && !cwd.empty()) p = std::filesystem::path(cwd) / p;
  std::string out = p.lexically_normal().string();
  // libstdc++ leaves a path of three or more slashes as it is; it is the root.
  if (!out.empty() && out.find_first_not_of('/') == std::string::npos) return "/";
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

void scan_shell(std::string_view command, std::string_view cwd,
                const std::function<void(Event)>& emit) {
  Scanner(std::string(cwd), emit).run(command, 0);
}

void scan_apply_patch(std::string_view patch, std::string_view cwd,
                      const std::function<void(Event)>& emit) {
  static constexpr std::string_view kHeaders[] = {
      "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "};
  size_t i = 0;
  while (i < patch.size()) {
    size_t eol = patch.find('\n', i);
    std::string_view line =
        patch.substr(i, eol == std::string_view::npos ? std::string_view::npos : eol - i);
    i = eol == std::string_view::npos ? patch.size() : eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    for (std::string_view h : kHeaders) {
      if (line.substr(0, h.size()) != h) continue;
      Event e;
      e.kind = EventKind::FileWrite;
      e.path = resolve_path(cwd, line.substr(h.size()));
      e.cwd = std::string(cwd);
      e.tool = "apply_patch";
      emit(std::move(e));
    }
  }
}

}  // namespace kd::audit
