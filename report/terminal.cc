#include "report/terminal.h"

#include <vector>

#include "report/html_text.h"

namespace kd::report {
namespace {

class Painter {
 public:
  explicit Painter(bool on) : on_(on) {}
  std::string operator()(const char* code, const std::string& s) const {
    return on_ ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s;
  }

 private:
  bool on_;
};

constexpr const char* kDim = "2";
constexpr const char* kBold = "1";
constexpr const char* kRed = "31";
constexpr const char* kGreen = "32";
constexpr const char* kYellow = "33";
constexpr const char* kBlue = "34";
constexpr const char* kCyan = "36";

// Control characters of the transcript's own text never reach the terminal raw: a tool output
// with escape sequences would otherwise repaint it.
std::string sanitize(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\t') {
      out += '^';
      out += char(u + 64);
    } else if (u == 0x7f) {
      out += "^?";
    } else {
      out += c;
    }
  }
  return out;
}

std::string indented(const std::string& text, std::size_t fold, const Painter& p) {
  std::vector<std::string> lines;
  size_t pos = 0;
  std::string clean = sanitize(text);
  while (pos <= clean.size()) {
    size_t nl = clean.find('\n', pos);
    if (nl == std::string::npos) nl = clean.size();
    lines.push_back(clean.substr(pos, nl - pos));
    pos = nl + 1;
  }
  while (!lines.empty() && lines.back().empty())
    lines.pop_back();
  std::string out;
  const bool folded = fold > 0 && lines.size() > fold;
  const size_t head = folded ? fold / 2 : lines.size();
  for (size_t i = 0; i < head; ++i)
    out += "    " + lines[i] + "\n";
  if (folded) {
    const size_t tail = fold - head;
    out += "    " +
           p(kDim, "[\xE2\x80\xA6 " + std::to_string(lines.size() - head - tail) +
                       " lines folded \xE2\x80\xA6]") +
           "\n";
    for (size_t i = lines.size() - tail; i < lines.size(); ++i)
      out += "    " + lines[i] + "\n";
  }
  return out;
}

}  // namespace

std::string render_transcript_terminal(const TranscriptView& v, const TerminalOptions& o) {
  Painter p(o.colour);
  std::string out;
  out += p(kBold, "transcript " + sanitize(v.path.string())) + "\n";
  std::string chain = "chain: " + chain_status(v);
  out += (v.chain_ok ? p(kGreen, chain) : p(kRed, chain)) + "\n";
  if (v.missing || !v.problem.empty()) return out;
  out += p(kDim, sanitize(v.role + " \xC2\xB7 " + v.family + "/" + v.experiment + " \xC2\xB7 " +
                          v.model)) +
         "\n";
  const std::string rule(o.width, '-');
  for (const auto& e : v.entries) {
    std::string where = "line " + std::to_string(e.line) + (e.ts.empty() ? "" : " " + e.ts);
    switch (e.kind) {
      case Entry::Kind::Header:
        out += p(kDim, "session: " + sanitize(e.text) + " (" + sanitize(e.detail) + ")") + "\n";
        break;
      case Entry::Kind::Request:
        out += p(kDim, "request, turn " + std::to_string(e.turn) + ": " + sanitize(e.text) + "  [" +
                           where + "]") +
               "\n";
        break;
      case Entry::Kind::Response: {
        out += p(kDim, rule) + "\n";
        std::string budget = fmt_tokens(e.input_tokens + e.output_tokens) + " tokens, " +
                             fmt_cost(e.cost_usd) + " so far";
        out += p(kBold, p(kBlue, "turn " + std::to_string(e.turn))) + "  " +
               p(kDim, budget + "  [" + where + "]") + "\n";
        if (!e.text.empty()) out += indented(e.text, 0, p);
        if (!e.detail.empty() && e.detail != "tool_use" && e.detail != "tool_calls")
          out += p(kDim, "    stop: " + sanitize(e.detail)) + "\n";
        break;
      }
      case Entry::Kind::ToolCall: {
        const ToolCallEntry& c = e.call;
        out += p(kCyan, "  \xE2\x96\xB6 " + sanitize(c.name)) + p(kDim, "  [" + where + "]") + "\n";
        out += indented(c.input, o.fold_lines, p);
        if (!c.has_result) {
          out += p(kRed, "  no result recorded") + "\n";
          break;
        }
        std::string status = c.not_run ? "refused, not run" : c.is_error ? "error" : "ok";
        if (c.exit_code) status += ", exit " + std::to_string(*c.exit_code);
        if (c.timed_out) status += ", timed out";
        out += (c.is_error || c.not_run ? p(kRed, "  \xE2\x97\x80 " + status)
                                        : p(kGreen, "  \xE2\x97\x80 " + status)) +
               "\n";
        out += indented(c.result, o.fold_lines, p);
        break;
      }
      case Entry::Kind::Violation:
        out += p(kRed, p(kBold, "  \xE2\x9C\x98 sandbox denied: ") + sanitize(e.text)) +
               (e.detail.empty() ? "" : p(kDim, " (" + sanitize(e.detail) + ")")) + "\n";
        break;
      case Entry::Kind::Note:
        out += (e.highlight ? p(kYellow, "  note: " + sanitize(e.text))
                            : p(kDim, "  note: " + sanitize(e.text))) +
               "\n";
        break;
      case Entry::Kind::End:
        out += p(kDim, rule) + "\n" + p(kBold, "end: " + sanitize(e.text)) +
               p(kDim, "  [" + where + "]") + "\n";
        if (!e.detail.empty()) out += indented(e.detail, o.fold_lines, p);
        break;
      case Entry::Kind::Unknown:
        out += p(kYellow, "  " + sanitize(e.text)) + p(kDim, "  [" + where + "]") + "\n";
        break;
      case Entry::Kind::Unreadable:
        out += p(kRed, "  " + sanitize(e.text)) + "\n";
        break;
    }
  }
  out += p(kDim, rule) + "\n";
  out += std::to_string(v.turns) + " turns, " + std::to_string(v.tool_calls) + " tool calls, " +
         std::to_string(v.violations) + " sandbox denials, " + fmt_tokens(v.input_tokens) +
         " in / " + fmt_tokens(v.output_tokens) + " out, " + fmt_cost(v.cost_usd) +
         (v.end_reason.empty() ? ", no end record" : ", ended: " + sanitize(v.end_reason)) + "\n";
  return out;
}

}  // namespace kd::report
