#include "audit/candidate_scan.h"

#include <regex>

#include "common/text.h"

namespace kd::audit {
namespace {

struct Pattern {
  const char* rule;
  const char* words;
  std::regex re;
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> all = [] {
    auto P = [](const char* rule, const char* words, const char* re) {
      return Pattern{rule, words, std::regex(re, std::regex::ECMAScript)};
    };
    return std::vector<Pattern>{
        P("timer_patch", "replaces a clock or timer",
          R"(\b(time|timeit|datetime)\s*\.\s*(perf_counter(_ns)?|monotonic(_ns)?|time(_ns)?|process_time(_ns)?|default_timer|sleep)\s*=[^=])"),
        P("module_write", "rebinds a module's attribute through setattr",
          R"(\bsetattr\s*\(\s*(np|numpy|jax|jnp|math|time|sys|os|builtins|importlib|gc|inspect)\b)"),
        P("module_write", "writes an attribute of another module",
          R"(^\s*(np|numpy|jax|jnp|math|time|sys|os|builtins|importlib|gc|inspect)\s*\.[\w.]+\s*=[^=])"),
        P("module_write", "touches sys.modules", R"(\bsys\s*\.\s*modules\b)"),
        P("module_write", "touches builtins",
          R"(\b(__builtins__|builtins\s*\.)|\bimport\s+builtins\b)"),
        P("module_write", "reaches the running program's __main__",
          R"(\bimport\s+__main__\b|\bfrom\s+__main__\b)"),
        P("frame_access", "reaches into call frames or the collector",
          R"(\bsys\s*\.\s*_getframe\b|\binspect\s*\.\s*(stack|currentframe|getouterframes|getmembers)\b|\bf_(back|locals|globals)\b|\bgc\s*\.\s*(get_objects|get_referrers|get_referents)\b)"),
        P("frame_access", "installs a profiler or tracer",
          R"(\bsys\s*\.\s*(setprofile|settrace)\b|\bthreading\s*\.\s*(setprofile|settrace)\b)"),
        P("frame_access", "rewrites code objects", R"(\.__code__\s*=[^=]|\b__globals__\b)"),
        P("concurrency", "starts threads or processes",
          R"(\bimport\s+(threading|multiprocessing|subprocess|concurrent)\b|\bfrom\s+(threading|multiprocessing|subprocess|concurrent)\b|\bthreading\s*\.|\bos\s*\.\s*(fork|system|popen|exec\w*|spawn\w*|posix_spawn\w*)\b|\b_thread\b|\batexit\b)"),
        P("file_write", "writes or removes files",
          R"(\bopen\s*\([^)]*['"][^'"]*[wax+][^'"]*['"]|\.write_(text|bytes)\s*\(|\bos\s*\.\s*(write|remove|unlink|rename|replace|symlink|link|makedirs|mkdir|chmod)\b|\bshutil\s*\.)"),
        P("environment", "reads the environment", R"(\bos\s*\.\s*(environ|getenv|environb)\b)"),
        P("network", "uses the network",
          R"(\bimport\s+(socket|urllib|requests|http|ftplib|smtplib)\b|\bfrom\s+(socket|urllib|requests|http)\b|\bsocket\s*\.)"),
        P("native_access", "loads native code or reads process memory",
          R"(\bimport\s+ctypes\b|\bfrom\s+ctypes\b|\bctypes\s*\.|/proc/self|\bcffi\b)"),
    };
  }();
  return all;
}

// The source with comments and string literals blanked (newlines kept, so line numbers hold),
// except the text of a string given to open(), whose mode the file_write rule reads: strings
// stay when they are short enough to be a mode or a path.
std::string code_only(std::string_view src) {
  std::string out(src);
  std::size_t i = 0;
  while (i < out.size()) {
    char c = out[i];
    if (c == '#') {
      while (i < out.size() && out[i] != '\n')
        out[i++] = ' ';
      continue;
    }
    if (c == '\'' || c == '"') {
      const bool triple = i + 2 < out.size() && out[i + 1] == c && out[i + 2] == c;
      const std::size_t open = triple ? 3 : 1;
      std::size_t j = i + open;
      while (j < out.size()) {
        if (out[j] == '\\') {
          j += 2;
          continue;
        }
        if (!triple && out[j] == '\n') break;
        if (out[j] == c && (!triple || (j + 2 < out.size() && out[j + 1] == c && out[j + 2] == c)))
          break;
        ++j;
      }
      const std::size_t end = std::min(out.size(), j + (j < out.size() ? open : 0));
      // Docstrings and long texts are blanked; one-line strings stay (open() modes, names).
      if (triple)
        for (std::size_t k = i; k < end; ++k)
          if (out[k] != '\n') out[k] = ' ';
      i = end;
      continue;
    }
    ++i;
  }
  return out;
}

}  // namespace

std::vector<ScanFinding> scan_candidate(std::string_view source, std::string_view name) {
  (void)name;
  std::vector<ScanFinding> out;
  const std::string code = code_only(source);
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= code.size()) {
    const std::size_t nl = code.find('\n', pos);
    const std::string line =
        code.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    ++line_no;
    for (const auto& p : patterns()) {
      std::smatch m;
      if (std::regex_search(line, m, p.re)) {
        out.push_back({line_no, p.rule, std::string(p.words) + ": " + std::string(trim(m.str(0)))});
      }
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

}  // namespace kd::audit
